import type { DirectoryOptions, ErrorSpec, RawAnswer, StandinModel } from './standin.types.ts';

/**
 * Paging shared by the three directories. A page is addressed by the offset of its first row; each dialect turns
 * offsets into its own cursors (an id to continue after, or an opaque token) and back. Faults from
 * `DirectoryOptions.fault` are applied here, so every dialect breaks the same way.
 */

export interface DirectoryPage {
  rows: StandinModel[];
  /** The offset the next page starts at; null on the last page; `missing` when the page claims more but names no cursor. */
  next: number | null | 'missing';
}

export type PageOutcome = { ok: true; page: DirectoryPage } | { ok: false; error: ErrorSpec | undefined };

const ENDLESS_ID = /^endless-(\d+)$/;

function rowAt(models: readonly StandinModel[], index: number, endless: boolean): StandinModel | undefined {
  return models[index] ?? (endless ? { id: `endless-${index}` } : undefined);
}

/** The page of `size` rows starting at `offset`, with the configured fault applied. */
export function pageAt(models: readonly StandinModel[], options: DirectoryOptions, offset: number, size: number): PageOutcome {
  const fault = options.fault;
  const endless = fault?.how === 'endless';
  const faulty = fault !== undefined && fault.how !== 'endless' && Math.floor(offset / size) === fault.afterPages;
  if (faulty && fault.how === 'page_error') return { ok: false, error: fault.error };
  const rows: StandinModel[] = [];
  for (let i = offset; i < offset + size; i++) {
    const row = rowAt(models, i, endless);
    if (!row) break;
    rows.push(row);
  }
  let next: DirectoryPage['next'] = endless || offset + size < models.length ? offset + rows.length : null;
  if (faulty && fault.how === 'missing_cursor') next = 'missing';
  if (faulty && fault.how === 'repeat_cursor') next = offset;
  return { ok: true, page: { rows, next } };
}

/** The offset after the row `id` (an "after this id" cursor), or undefined when no such row is listed. */
export function offsetAfterId(models: readonly StandinModel[], id: string): number | undefined {
  const index = models.findIndex((m) => m.id === id);
  if (index >= 0) return index + 1;
  const endless = ENDLESS_ID.exec(id);
  return endless ? Number(endless[1]) + 1 : undefined;
}

/** The id whose "after" cursor starts a page at `offset` (offset ≥ 1). */
export function idBefore(models: readonly StandinModel[], offset: number): string {
  return models[offset - 1]?.id ?? `endless-${offset - 1}`;
}

/** An opaque page token for `offset`, as Google's APIs hand out. */
export function pageToken(offset: number): string {
  return Buffer.from(`page:${offset}`).toString('base64url');
}

/** The offset a page token stands for, or undefined when the token is not one this stand-in issued. */
export function offsetOfToken(token: string): number | undefined {
  const match = /^page:(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** A parsed positive integer query value, or undefined when absent or not one. */
export function positiveInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n > 0 ? n : undefined;
}

/**
 * A directory page as JSON, padded and sent as `options` say. Padding is whitespace after the opening brace, so the
 * body stays valid JSON of the same meaning and only its size grows.
 */
export function directoryAnswer(body: unknown, options: DirectoryOptions, headers: Record<string, string> = {}): RawAnswer {
  let text = JSON.stringify(body);
  const missing = (options.padToBytes ?? 0) - Buffer.byteLength(text);
  if (missing > 0) text = `{${' '.repeat(missing)}${text.slice(1)}`;
  return {
    status: 200,
    headers: { 'content-type': 'application/json', ...headers },
    body: text,
    ...(options.chunked ? { chunked: true } : {}),
  };
}
