/**
 * Explicit paging for list tools (issue 17 item 3): a list answer is always `{items, next_cursor, has_more,
 * total?}`; `next_cursor` is opaque to the client (today an offset page number, later a keyset link) and is passed
 * back as `cursor` to get the next window. Nothing is ever cut silently: a page the forge has more after says so.
 */
import { z } from 'zod';
import type { ForgePage } from './forge.client.ts';
import { ToolInputError } from './tool.contract.ts';

export const pagingInput = {
  cursor: z.string().max(1000).optional().describe('A next_cursor'),
  per_page: z.number().int().min(1).max(100).optional().describe('Max 100'),
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

/** A cursor for the next page: an offset page number, or a keyset position (forge.client.ts `nextKeyset`). */
export function encodeCursor(next: number | string): string {
  return Buffer.from(JSON.stringify(typeof next === 'number' ? { p: next } : { k: next })).toString('base64url');
}

/**
 * What a cursor stands for, to pass as the `page` query of `ForgeApi.page`: a page number (1 without a cursor), or
 * a keyset position string. A cursor that is not one of ours is a validation error.
 */
export function decodeCursor(cursor: string | undefined): number | string {
  if (cursor === undefined || cursor === '') return 1;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { p?: unknown; k?: unknown };
    if (typeof value.p === 'number' && Number.isInteger(value.p) && value.p >= 1 && value.p <= 100_000) return value.p;
    if (typeof value.k === 'string' && value.k.length > 0 && value.k.length <= 600) return value.k;
  } catch {
    // fall through
  }
  throw new ToolInputError('cursor is not a next_cursor this server returned; omit it to start from the first page');
}

/** Items per page when a list tool's caller gives no `per_page`. */
export const DEFAULT_PER_PAGE = 20;

/** The forge's `page` (a number or a keyset cursor) and `per_page` for a list tool's paging input. */
export function forgePaging(input: { cursor?: string | undefined; per_page?: number | undefined }): {
  page: number | string;
  per_page: number;
} {
  return { page: decodeCursor(input.cursor), per_page: input.per_page ?? DEFAULT_PER_PAGE };
}

/** A cursor of a window this server cuts itself (no forge paging behind it): only page numbers are ours. */
export function decodePageNumber(cursor: string | undefined): number {
  const decoded = decodeCursor(cursor);
  if (typeof decoded !== 'number')
    throw new ToolInputError('cursor is not a next_cursor of this list; omit it to start from the first page');
  return decoded;
}

/** The list answer for one forge page. */
export function pageResult<T, U>(page: ForgePage<T>, map: (item: T) => U) {
  const next = page.nextKeyset ?? page.nextPage;
  return {
    items: page.items.map(map),
    next_cursor: next === undefined ? null : encodeCursor(next),
    has_more: next !== undefined,
    ...(page.total !== undefined ? { total: page.total } : {}),
  };
}
