/**
 * Forge text in tool results (issue 17 item 3): titles, descriptions, notes, file contents and logs are written by
 * anyone who can write to the forge, so they reach the model as data, never as instructions.
 *
 * - {@link sanitizeDeep} removes the characters a reader cannot see but a model reads: Unicode format characters
 *   (`\p{Cf}`: zero-width spaces and joiners, the bidirectional embeddings, overrides and isolates U+202A–U+202E and
 *   U+2066–U+2069, marks U+200E/U+200F/U+061C, the BOM, soft hyphens, the tag characters U+E0000–U+E007F that can
 *   spell hidden ASCII), the variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF (usable to smuggle bytes), and
 *   control characters other than tab and newline.
 * - {@link renderUntrusted} is the compact text rendering of a result: one JSON line inside an element that names it
 *   untrusted forge data, so a model (and a human reading a transcript) sees where forge content starts and ends.
 */

// Control characters are the point of this expression.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/gu;

/** `text` without invisible and bidirectional-control characters (carriage returns become newlines' business). */
export function sanitizeText(text: string): string {
  return text.replace(INVISIBLE, '');
}

/** Every string in `value` (keys included) sanitized; other values unchanged. */
export function sanitizeDeep<T>(value: T): T {
  if (typeof value === 'string') return sanitizeText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => sanitizeDeep(item)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[sanitizeText(key)] = sanitizeDeep(item);
    return out as T;
  }
  return value;
}

export const UNTRUSTED_OPEN = '<forge-data untrusted="true">';
export const UNTRUSTED_CLOSE = '</forge-data>';

/**
 * The text rendering of a structured result. The closing tag cannot be forged from inside: `<` in the JSON is
 * escaped as `\u003c`, which JSON readers decode back.
 */
export function renderUntrusted(value: unknown): string {
  const json = JSON.stringify(value).replace(/</g, '\\u003c');
  return `${UNTRUSTED_OPEN}\n${json}\n${UNTRUSTED_CLOSE}`;
}

/**
 * GitLab runs lines that start with `/` in issue, merge request and note bodies as quick actions (`/close`,
 * `/assign`, `/merge`): text a model writes could do what the tool does not declare. Returns the offending lines.
 */
export function quickActionLines(body: string): string[] {
  return body.split(/\r?\n/).filter((line) => line.startsWith('/'));
}
