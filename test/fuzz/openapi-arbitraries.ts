import fc from 'fast-check';

/** The subset of JSON Schema (draft 2020-12) that the served OpenAPI document uses. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** One operation of the document, reduced to what a request generator needs. */
export interface Operation {
  method: string;
  /** The OpenAPI path template, `{name}` placeholders included. */
  path: string;
  pathParams: string[];
  query: { name: string; schema: JsonSchema }[];
  body: JsonSchema | undefined;
  /** Whether the operation names any security requirement (a credential is needed). */
  secured: boolean;
}

type OpenApiDocument = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema?: JsonSchema }[];
        requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
        security?: unknown[];
      }
    >
  >;
};

/** Every operation of a served OpenAPI document. */
export function operationsOf(document: unknown): Operation[] {
  const doc = document as OpenApiDocument;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const parameters = op.parameters ?? [];
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema,
        secured: (op.security ?? []).length > 0,
      });
    }
  }
  return out;
}

/** Text neither database can store, and text that often breaks parsers or SQL. */
const NASTY_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\ud83d',
  '',
  ' ',
  "'; DROP TABLE x;--",
  '%00',
  '\\',
  '../..',
  '\u202e',
  '\uffff',
  'é',
  '😀',
  'x'.repeat(2000),
];

/** Raw (already percent-encoded) path or query fragments, some of them malformed on purpose. */
const RAW_URL_PARTS = [
  '%00',
  '%ff',
  '%ED%A0%80',
  '%C0%AF',
  '%',
  '%E0%A4%A',
  '%2F',
  '%252F',
  '..',
  '.',
  '%0d%0a',
  '%20',
  'a%2Eb',
  '%u0000',
  'caf%C3%A9',
];

/** `encodeURIComponent`, except that unpaired surrogates (which it refuses) become their 3-byte (CESU-8) escapes. */
function encodeLoose(text: string): string {
  let out = '';
  // for…of walks code points, so a surrogate only appears alone when it has no pair.
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0xd800 || code > 0xdfff) {
      out += encodeURIComponent(char);
      continue;
    }
    out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  }
  return out;
}

/** A string: mostly plausible, sometimes hostile. */
function stringArbitrary(schema: JsonSchema, hints: readonly string[]): fc.Arbitrary<string> {
  const plain = schema.pattern
    ? fc.stringMatching(new RegExp(schema.pattern))
    : fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
  return fc.oneof(
    { weight: 5, arbitrary: plain },
    { weight: hints.length > 0 ? 6 : 0, arbitrary: fc.constantFrom(...(hints.length > 0 ? hints : [''])) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
    // A plausible value carrying a character no database stores: the case that used to reach SQL.
    {
      weight: 3,
      arbitrary: fc
        .tuple(hints.length > 0 ? fc.constantFrom(...hints) : plain, fc.constantFrom('\u0000', '\ud800', '\udc00'), fc.nat())
        .map(([t, bad, n]) => {
          const at = n % (t.length + 1);
          return t.slice(0, at) + bad + t.slice(at);
        }),
    },
  );
}

/**
 * Values that follow `schema` most of the time and break it now and then (a wrong type, an extra key, a missing
 * required one), so both the handlers and the validators are reached. `hints` maps property names to values that
 * exist in the test data (provider ids, model references).
 */
export function valueOf(schema: JsonSchema, hints: Record<string, readonly string[]>, name = '', depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(fc.constant(null), fc.integer(), fc.boolean(), fc.string({ maxLength: 8 }), fc.constant([]), fc.constant({}));
  const right = ((): fc.Arbitrary<unknown> => {
    if (schema.const !== undefined) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) return fc.oneof(...alternatives.map((s) => valueOf(s, hints, name, depth + 1)));
    const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    switch (type) {
      case 'string':
        return stringArbitrary(schema, hints[name] ?? []);
      case 'integer':
        return fc.oneof(
          { weight: 3, arbitrary: fc.integer({ min: schema.minimum ?? 0, max: Math.min(schema.maximum ?? 5, 5) }) },
          { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(-1), fc.double()) },
        );
      case 'number':
        return fc.double();
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 3 ? fc.constant([]) : fc.array(valueOf(schema.items ?? {}, hints, name, depth + 1), { maxLength: 4 });
      case 'object': {
        if (depth > 3) return fc.constant({});
        const properties = schema.properties ?? {};
        const required = new Set(schema.required ?? []);
        const entries = Object.entries(properties).map(([key, s]) => [key, valueOf(s, hints, key, depth + 1)] as const);
        const record = fc.record(Object.fromEntries(entries), { requiredKeys: Object.keys(properties).filter((k) => required.has(k)) });
        return fc.oneof(
          { weight: 8, arbitrary: record },
          { weight: 1, arbitrary: fc.tuple(record, fc.string({ maxLength: 6 }), fc.jsonValue()).map(([r, k, v]) => ({ ...r, [k]: v })) },
          { weight: 1, arbitrary: fc.record(Object.fromEntries(entries), { requiredKeys: [] }) },
        );
      }
      default:
        return fc.jsonValue();
    }
  })();
  return fc.oneof({ weight: 12, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

/** A request body as bytes: JSON of the schema mostly, otherwise random JSON, truncated JSON, bytes or bad UTF-8. */
export function bodyOf(schema: JsonSchema | undefined, hints: Record<string, readonly string[]>): fc.Arbitrary<Buffer | undefined> {
  const valid = schema ? valueOf(schema, hints) : fc.jsonValue();
  const text = valid.map((v) => JSON.stringify(v) ?? 'null');
  return fc.oneof(
    { weight: 10, arbitrary: text.map((t) => Buffer.from(t)) },
    { weight: 2, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
    { weight: 1, arbitrary: fc.tuple(text, fc.nat()).map(([t, n]) => Buffer.from(t.slice(0, n % Math.max(t.length, 1)))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
    {
      weight: 3,
      arbitrary: fc.tuple(text, fc.nat(), fc.constantFrom([0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0x00])).map(([t, n, bad]) => {
        const raw = Buffer.from(t);
        const at = n % (raw.length + 1);
        return Buffer.concat([raw.subarray(0, at), Buffer.from(bad), raw.subarray(at)]);
      }),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** A path parameter as it goes into the URL: a known id, random text (encoded), or a raw fragment. */
export function pathParamOf(hints: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...(hints.length > 0 ? hints : ['x'])) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encodeLoose) },
    { weight: 2, arbitrary: fc.constantFrom(...NASTY_STRINGS.filter((s) => s !== '')).map(encodeLoose) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_URL_PARTS) },
  );
}

/** A query string (without `?`): the operation's parameters with good or bad values, unknown keys, repeats. */
export function queryOf(
  params: readonly { name: string; schema: JsonSchema }[],
  hints: Record<string, readonly string[]>,
): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(params.length > 0 ? params.map((p) => p.name) : ['q'])) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(encodeLoose) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PARTS) },
  );
  const value = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .oneof(...(params.length > 0 ? params.map((p) => valueOf(p.schema, hints, p.name)) : [fc.string()]))
        .map((v) => encodeLoose(String(v))),
    },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_URL_PARTS) },
  );
  return fc.array(fc.tuple(key, value), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
}
