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

/** The same class, to ask whether a string holds any (no `g`: a test keeps no position between calls). */
const HAS_INVISIBLE = new RegExp(INVISIBLE.source, 'u');

/** `text` without invisible and bidirectional-control characters (carriage returns become newlines' business). */
export function sanitizeText(text: string): string {
  // Most forge text holds none: a test finds that without building a new string.
  return HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, '') : text;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Every string in `value` (keys included) sanitized; other values unchanged. Arrays and plain objects are copied
 * only where something inside them changed: a 100-item list is rebuilt when one title held a hidden character, not
 * on every call (the copies were measured at a tenth of a list tool's time).
 */
export function sanitizeDeep<T>(value: T): T {
  if (typeof value === 'string') return sanitizeText(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const clean = sanitizeDeep(item);
      if (clean !== item) {
        out ??= value.slice();
        out[i] = clean;
      }
    }
    return (out ?? value) as T;
  }
  if (value !== null && typeof value === 'object') {
    if (isPlainObject(value)) {
      let changed = false;
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const item = value[key];
        if (sanitizeText(key) !== key || sanitizeDeep(item) !== item) {
          changed = true;
          break;
        }
      }
      if (!changed) return value;
    }
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
  return frame(JSON.stringify(value));
}

function frame(raw: string): string {
  const json = raw.includes('<') ? raw.replace(/</g, '\\u003c') : raw;
  return `${UNTRUSTED_OPEN}\n${json}\n${UNTRUSTED_CLOSE}`;
}

/**
 * JSON escapes of the control characters {@link sanitizeText} removes: `JSON.stringify` writes U+0008 and U+000C as
 * `\b` and `\f`, tab, newline and carriage return as `\t`, `\n`, `\r`, and every other C0 character as `\u00XX`
 * (its only `\u` escapes besides lone surrogates, `\udXXX`). An escape starts at a backslash preceded by an even
 * number of backslashes (`\\b` is a backslash and a `b`).
 */
const ESCAPED_CONTROL = /(?<!\\)(?:\\\\)*\\(?:[bf]|u00)/;

/**
 * Whether the JSON text of a value may hold a character {@link sanitizeText} removes: C0 controls only as escapes
 * (above), everything else raw. Text of ASCII characters only (its UTF-8 length is its length) can hold only DEL
 * of the rest, which one `includes` finds: that skips the Unicode-class scan of a large ASCII answer.
 */
function mayHoldInvisible(json: string): boolean {
  const raw = Buffer.byteLength(json) === json.length ? json.includes('\u007F') : HAS_INVISIBLE.test(json);
  return raw || (mayHoldEscape(json) && ESCAPED_CONTROL.test(json));
}

/**
 * Whether the text holds `\b`, `\f` or `\u00` at all: three substring searches, each a fast scan, answer "no" for
 * nearly every answer (a diff's text is full of `\n`, but those are not what is looked for), where the expression,
 * tried at every position, cost a fifth of the rendering of a 100-file diff window.
 */
function mayHoldEscape(json: string): boolean {
  return json.includes('\\b') || json.includes('\\f') || json.includes('\\u00');
}

/** A value {@link sanitizeAndRender} answered as is, and its JSON text. */
interface Rendered {
  value: Record<string, unknown>;
  json: string;
}

/**
 * The JSON text {@link sanitizeAndRender} made of each object it answered as is: the transport writes the value as
 * `structuredContent` beside that text, and stringifying a large answer (a diff window) a second time cost as much
 * again. Found by the object itself, and by its first member that is an object: the SDK's result validation
 * (its `tools/call` result schema, `structuredContent` a zod record) hands the transport a shallow copy of the
 * value, a new top-level object with the same members, so the object itself was never found there (measured on
 * the 2.4.0 SDK: no answer of the pooled path was spliced). Weak, so an answer's entry goes with it; nothing
 * mutates a tool's value once it is answered.
 */
const renderedJson = new WeakMap<object, Rendered>();

function firstObjectMember(value: Record<string, unknown>): object | undefined {
  for (const key in value) {
    const member = value[key];
    if (typeof member === 'object' && member !== null) return member;
  }
  return undefined;
}

/** Whether `a` and `b` have the same own keys, in the same order, holding the same values: equal JSON texts. */
function sameMembers(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  const other = Object.keys(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as string;
    if (key !== other[i] || a[key] !== b[key]) return false;
  }
  return true;
}

/**
 * The JSON text of `value` as {@link sanitizeAndRender} answered it, when it did: `value` is that answer or a copy
 * of it with the same members (see renderedJson).
 */
export function renderedJsonOf(value: object): string | undefined {
  const direct = renderedJson.get(value);
  if (direct?.value === value) return direct.json;
  const member = firstObjectMember(value as Record<string, unknown>);
  const entry = member !== undefined ? renderedJson.get(member) : undefined;
  return entry && sameMembers(value as Record<string, unknown>, entry.value) ? entry.json : undefined;
}

/**
 * {@link sanitizeDeep} and {@link renderUntrusted} of a tool's value in one pass over its text: the value is
 * stringified once, one scan of that text tells whether any string in it holds a character to remove, and when none
 * does (nearly always) the value is answered as it is with that text in its frame. Otherwise both are computed as
 * before. Measured on a 100-file diff window (95 KB of JSON): 168 µs of CPU for the two separately, 116 µs this way.
 * Equal to the two for JSON data (what tools return: parsed forge answers and literals); a non-plain object such
 * as a `Date` would keep its `toJSON` here where sanitizeDeep makes it `{}`.
 */
export function sanitizeAndRender<T>(value: T): { value: T; text: string } {
  const json = JSON.stringify(value);
  if (json !== undefined && !mayHoldInvisible(json)) {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const entry: Rendered = { value: value as Record<string, unknown>, json };
      renderedJson.set(value, entry);
      const member = firstObjectMember(entry.value);
      if (member !== undefined) renderedJson.set(member, entry);
    }
    return { value, text: frame(json) };
  }
  const clean = sanitizeDeep(value);
  return { value: clean, text: renderUntrusted(clean) };
}

/**
 * GitLab runs lines that start with `/` in issue, merge request and note bodies as quick actions (`/close`,
 * `/assign`, `/merge`): text a model writes could do what the tool does not declare. Returns the offending lines.
 */
export function quickActionLines(body: string): string[] {
  return body.split(/\r?\n/).filter((line) => line.startsWith('/'));
}

/**
 * A value from the forge (a title, a branch or job name) inside a sentence the server writes, such as a
 * confirmation's summary: cleaned as above, cut to `max` characters, and quoted as a JSON string, so that a quote
 * or a line break inside it cannot end the quotation and pass for the server's own words.
 */
export function quoted(value: unknown, max = 200): string {
  const raw = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '?';
  const text = sanitizeText(raw);
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
}
