/**
 * Explicit paging for list tools (issue 17 item 3): a list answer is always `{items, next_cursor, has_more,
 * total?}`; `next_cursor` is opaque to the client (today an offset page number, later a keyset link) and is passed
 * back as `cursor` to get the next window. Nothing is ever cut silently: a page the forge has more after says so.
 */
import { z } from 'zod';
import type { ForgePage } from './forge.client.ts';
import { ToolInputError } from './tool.contract.ts';

export const pagingInput = {
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
  per_page: z.number().int().min(1).max(100).optional().describe('Page size, 1–100 (default 20)'),
};

/** The paging part of a list tool's output schema, around `item`. */
export function pageOutput<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item).describe('This page of results'),
    next_cursor: z.string().nullable().describe('Pass as cursor to get the next page; null on the last page'),
    has_more: z.boolean().describe('Whether there are more results after this page'),
    total: z.number().int().optional().describe('Total number of results, when the forge reports it'),
  });
}

export function encodeCursor(page: number): string {
  return Buffer.from(JSON.stringify({ p: page })).toString('base64url');
}

/** The forge page a cursor stands for; a cursor that is not one of ours is a validation error. */
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 1;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown };
    if (typeof value.p === 'number' && Number.isInteger(value.p) && value.p >= 1 && value.p <= 100_000) return value.p;
  } catch {
    // fall through
  }
  throw new ToolInputError('cursor is not a next_cursor this server returned; omit it to start from the first page');
}

/** The list answer for one forge page. */
export function pageResult<T, U>(page: ForgePage<T>, map: (item: T) => U) {
  return {
    items: page.items.map(map),
    next_cursor: page.nextPage === undefined ? null : encodeCursor(page.nextPage),
    has_more: page.nextPage !== undefined,
    ...(page.total !== undefined ? { total: page.total } : {}),
  };
}
