/**
 * Job logs as a model can read them (issue 18 item 1, `ci`): GitLab's raw trace carries ANSI colours,
 * `section_start`/`section_end` markers and carriage-return redraws; {@link cleanLog} reduces it to the lines a
 * person sees. Three ways to read a long log without taking all of it: the last lines ({@link tailWindow}), a
 * byte window that ends on a line boundary and says where the next one starts ({@link byteWindow}), and a search
 * with context lines ({@link grepLog}). Search terms are literal (`|` separates alternatives), never a regular
 * expression, so a pattern cannot make the server spin.
 */

// The escape character is the point of this expression.
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const SECTION = /section_(start|end):\d+:[\w.-]+(\[[^\]]*\])?/g;

/** The log as displayed: no colour codes, no section markers, each line as last redrawn; marker-only lines dropped. */
export function cleanLog(raw: string): string {
  const lines: string[] = [];
  for (const rawLine of raw.split('\n')) {
    const hadSection = SECTION.test(rawLine);
    SECTION.lastIndex = 0;
    const withoutMarkers = rawLine.replace(SECTION, '').replace(ANSI, '');
    const parts = withoutMarkers.split('\r').filter((p) => p !== '');
    const line = parts[parts.length - 1] ?? '';
    if (hadSection && line.trim() === '') continue;
    lines.push(line);
  }
  return lines.join('\n');
}

export interface LogWindow {
  text: string;
  /** Byte offset of the window's start and end in the cleaned log. */
  start_byte: number;
  end_byte: number;
  /** 1-based number of the window's first line. */
  first_line: number;
  truncated: boolean;
  /** Pass as byte_offset for the following window; null at the end. */
  next_byte_offset: number | null;
}

const lineNumberAt = (bytes: Buffer, offset: number): number => {
  let count = 1;
  for (let i = 0; i < offset && i < bytes.length; i += 1) if (bytes[i] === 0x0a) count += 1;
  return count;
};

/** `limit` bytes from `offset`, shortened to end after a newline when one is inside (never mid-character). */
export function byteWindow(log: string, offset: number, limit: number): LogWindow {
  const bytes = Buffer.from(log, 'utf8');
  const start = Math.min(offset, bytes.length);
  let end = Math.min(bytes.length, start + limit);
  if (end < bytes.length) {
    const lastNewline = bytes.lastIndexOf(0x0a, end - 1);
    if (lastNewline >= start) end = lastNewline + 1;
    // No newline in the window: back off to a character boundary (UTF-8 continuation bytes are 10xxxxxx).
    else while (end > start && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  }
  return {
    text: bytes.subarray(start, end).toString('utf8'),
    start_byte: start,
    end_byte: end,
    first_line: lineNumberAt(bytes, start),
    truncated: end < bytes.length,
    next_byte_offset: end < bytes.length ? end : null,
  };
}

/** The last `lines` lines, within `maxBytes` (fewer lines when they are long). */
export function tailWindow(log: string, lines: number, maxBytes: number): LogWindow {
  const bytes = Buffer.from(log, 'utf8');
  let start = bytes.length;
  // A final newline ends the last line rather than starting an empty one.
  let seen = bytes[bytes.length - 1] === 0x0a ? -1 : 0;
  for (let i = bytes.length - 1; i >= 0; i -= 1) {
    if (bytes[i] === 0x0a) {
      seen += 1;
      if (seen === lines) break;
    }
    if (bytes.length - i > maxBytes) break;
    start = i;
  }
  return {
    text: bytes.subarray(start).toString('utf8'),
    start_byte: start,
    end_byte: bytes.length,
    first_line: lineNumberAt(bytes, start),
    truncated: start > 0,
    next_byte_offset: null,
  };
}

export interface LogMatch {
  line_number: number;
  line: string;
  before: string[];
  after: string[];
}

/** Lines containing any of the `|`-separated terms (case-insensitive), with `context` lines around each. */
export function grepLog(log: string, pattern: string, context: number, maxMatches: number): { matches: LogMatch[]; total_matches: number } {
  const terms = pattern
    .split('|')
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');
  const lines = log.split('\n');
  const matches: LogMatch[] = [];
  let total = 0;
  lines.forEach((line, i) => {
    const lower = line.toLowerCase();
    if (!terms.some((t) => lower.includes(t))) return;
    total += 1;
    if (matches.length >= maxMatches) return;
    matches.push({
      line_number: i + 1,
      line,
      before: lines.slice(Math.max(0, i - context), i),
      after: lines.slice(i + 1, i + 1 + context),
    });
  });
  return { matches, total_matches: total };
}
