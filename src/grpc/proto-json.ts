import protobuf from 'protobufjs';
import { AppError } from '../core/errors.ts';

/** A JSON value as `JSON.parse` returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * A message in the canonical form handlers see: proto3 JSON, except that a `bytes` field may hold a Buffer (see
 * `BytesForm`), so a large document is never base64-encoded and decoded between the gRPC wire and a handler.
 */
export type CanonicalValue = null | boolean | number | string | Buffer | CanonicalValue[] | { [key: string]: CanonicalValue };
export type CanonicalObject = { [key: string]: CanonicalValue };

/**
 * How `bytes` fields come out of the codec: `base64` (standard alphabet with padding, as proto3 JSON writes them)
 * or `buffer` (a Buffer; for handlers and the gRPC wire). Either form is accepted as input.
 */
export type BytesForm = 'base64' | 'buffer';

/**
 * What to do with a JSON member the message does not declare: requests reject it (proto3 JSON parsers do by
 * default), responses drop it (a stored record may carry fields newer than the proto, and both transports then
 * drop them alike).
 */
export type UnknownFields = 'reject' | 'drop';

/**
 * The one place where messages change shape between the transports (STYLE.md 6: translate once, at the edge).
 *
 * RPC handlers see requests and return responses in *canonical proto3 JSON*: proto field names (snake_case),
 * 64-bit integers as decimal strings, bytes as standard base64 (or Buffers, below), enums by name,
 * `google.protobuf.Timestamp` as an RFC 3339 UTC string with 0, 3, 6 or 9 fractional digits,
 * `Struct`/`Value`/`ListValue` as plain JSON, a oneof as its one set member, and fields holding their default
 * value left out (OSV.dev's JSON relies on this; facts §1). Set message fields stay, even when empty (`{}`), as
 * proto3 JSON writes them.
 *
 * `bytes` fields are base64 text or Buffers, as the `bytes` option asks (default `base64`); a Buffer given as input
 * is taken as is, without a check or a copy.
 *
 * - `fromJson` validates JSON from an HTTP request (or a handler's response) and returns the canonical form.
 * - `toProto` turns canonical JSON into the object proto-loader serializes (Buffers, `{seconds, nanos}`, `{fields}`).
 * - `fromProto` turns what proto-loader deserialized (with `LOADER_OPTIONS`) into canonical JSON.
 */
export interface ProtoJsonCodec {
  fromJson(typeName: string, value: unknown, options?: { unknownFields?: UnknownFields; where?: string; bytes?: BytesForm }): CanonicalObject;
  toProto(typeName: string, value: CanonicalObject): Record<string, unknown>;
  fromProto(typeName: string, value: Record<string, unknown>, options?: { bytes?: BytesForm }): CanonicalObject;
  /** The message type by full name (for field lookups by the HTTP mapping). */
  type(typeName: string): protobuf.Type;
}

const TIMESTAMP = 'google.protobuf.Timestamp';
const STRUCT = 'google.protobuf.Struct';
const VALUE = 'google.protobuf.Value';
const LIST_VALUE = 'google.protobuf.ListValue';

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64']);
const UINT64 = new Set(['uint64', 'fixed64']);
const FLOAT = new Set(['float', 'double']);

// Base64 checks must stay linear: a regex with a repeated group (such as `(?:[A-Za-z0-9+/]{4})*`) recurses
// per repetition in V8 and overflows the stack on a few MiB of text, which an 8 MiB document is.
const BASE64_ALPHABET = /^[A-Za-z0-9+/]*={0,2}$/;
const ANY_BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Standard base64 with padding (the form proto3 JSON writes); linear in the length. */
export function isCanonicalBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_ALPHABET.test(text);
}

/**
 * Base64 text as proto3 JSON parsers accept it (standard or URL-safe alphabet, padding optional) as bytes in the
 * requested form; undefined when it is not base64.
 */
export function bytesFromBase64(text: string, form: BytesForm): string | Buffer | undefined {
  if (isCanonicalBase64(text)) return form === 'buffer' ? Buffer.from(text, 'base64') : text;
  if (!ANY_BASE64.test(text)) return undefined;
  const unpadded = text.endsWith('==') ? text.length - 2 : text.endsWith('=') ? text.length - 1 : text.length;
  if (unpadded % 4 === 1) return undefined;
  // Node's base64 decoder also takes the URL-safe alphabet.
  const bytes = Buffer.from(text, 'base64');
  return form === 'buffer' ? bytes : bytes.toString('base64');
}

/** A Uint8Array (a Buffer or not) as a Buffer over the same memory. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range proto3 JSON allows. */
const MIN_SECONDS = -62_135_596_800n;
const MAX_SECONDS = 253_402_300_799n;

function fullName(t: protobuf.ReflectionObject): string {
  return t.fullName.startsWith('.') ? t.fullName.slice(1) : t.fullName;
}

function invalidAt(path: string, message: string): AppError {
  return new AppError('parameter_invalid', `${path}: ${message}`);
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Seconds and nanoseconds since the epoch of an RFC 3339 timestamp, or undefined when it is not one. */
export function parseTimestamp(text: string): { seconds: bigint; nanos: number } | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m as unknown as [string, string, string, string, string, string, string, string | undefined, string];
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years 0-99 as written.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  // Out-of-range parts roll over (Feb 30 becomes Mar 2); a real date and time survive the round trip.
  if (date.getUTCDate() !== Number(d) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCHours() !== Number(h) || date.getUTCMinutes() !== Number(mi) || date.getUTCSeconds() !== Number(s)) return undefined;
  let seconds = BigInt(date.getTime() / 1000);
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1n : 1n;
    const offset = BigInt(Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
    seconds -= sign * offset;
  }
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) return undefined;
  const nanos = frac ? Number(frac.padEnd(9, '0')) : 0;
  return { seconds, nanos };
}

/** Formats seconds and nanos as RFC 3339 UTC with 0, 3, 6 or 9 fractional digits (the proto3 JSON form). */
export function formatTimestamp(seconds: bigint, nanos: number): string {
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (nanos === 0) return `${base}Z`;
  const digits = String(nanos).padStart(9, '0');
  const frac = digits.endsWith('000000') ? digits.slice(0, 3) : digits.endsWith('000') ? digits.slice(0, 6) : digits;
  return `${base}.${frac}Z`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/** Any JSON value, checked to be JSON (no undefined, functions, non-finite numbers). */
function checkJson(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidAt(path, 'a JSON number must be finite');
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => checkJson(v, `${path}[${i}]`));
  if (isPlainObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = checkJson(v, `${path}.${k}`);
    return out;
  }
  throw invalidAt(path, 'expected a JSON value');
}

/** Builds the codec over a resolved protobufjs root holding every message the RPCs use. */
export function createProtoJsonCodec(root: protobuf.Root): ProtoJsonCodec {
  const types = new Map<string, protobuf.Type>();
  const lookups = new Map<protobuf.Type, Map<string, protobuf.Field>>();

  function type(typeName: string): protobuf.Type {
    let t = types.get(typeName);
    if (!t) {
      t = root.lookupType(typeName);
      t.resolveAll();
      types.set(typeName, t);
    }
    return t;
  }

  /** JSON member names a field answers to: its proto name, its json_name, and the lowerCamelCase default. */
  function fieldLookup(t: protobuf.Type): Map<string, protobuf.Field> {
    let map = lookups.get(t);
    if (!map) {
      map = new Map();
      for (const f of t.fieldsArray) {
        map.set(f.name, f);
        const jsonName = f.options?.json_name as unknown;
        if (typeof jsonName === 'string') map.set(jsonName, f);
        map.set(lowerCamel(f.name), f);
      }
      lookups.set(t, map);
    }
    return map;
  }

  function realOneof(f: protobuf.Field): protobuf.OneOf | null {
    // proto3 `optional` makes a synthetic oneof of one field; only real oneofs constrain a message.
    return f.partOf && f.partOf.fieldsArray.length > 1 ? f.partOf : null;
  }

  // ---- JSON (HTTP or handler) -> canonical JSON -------------------------------------------------------------

  function scalarFromJson(f: protobuf.Field, raw: unknown, path: string, bytes: BytesForm): CanonicalValue {
    const kind = f.type;
    if (kind === 'string') {
      if (typeof raw !== 'string') throw invalidAt(path, 'expected a string');
      return raw;
    }
    if (kind === 'bool') {
      if (typeof raw !== 'boolean') throw invalidAt(path, 'expected true or false');
      return raw;
    }
    if (kind === 'bytes') {
      // A handler's own Buffer needs no check (and, on the gRPC side, no copy).
      if (raw instanceof Uint8Array) return bytes === 'buffer' ? asBuffer(raw) : asBuffer(raw).toString('base64');
      const decoded = typeof raw === 'string' ? bytesFromBase64(raw, bytes) : undefined;
      if (decoded === undefined) throw invalidAt(path, 'expected base64 text');
      return decoded;
    }
    if (INT32.has(kind) || UINT32.has(kind)) {
      const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw invalidAt(path, 'expected an integer');
      const [min, max] = UINT32.has(kind) ? [0, 4_294_967_295] : [-2_147_483_648, 2_147_483_647];
      if (n < min || n > max) throw invalidAt(path, `expected an integer from ${min} to ${max}`);
      return n;
    }
    if (INT64.has(kind) || UINT64.has(kind)) {
      let big: bigint;
      if (typeof raw === 'number' && Number.isSafeInteger(raw)) big = BigInt(raw);
      else if (typeof raw === 'string' && /^-?\d{1,20}$/.test(raw)) big = BigInt(raw);
      else throw invalidAt(path, 'expected an integer (a decimal string in JSON)');
      const [min, max] = UINT64.has(kind) ? [0n, 18_446_744_073_709_551_615n] : [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n];
      if (big < min || big > max) throw invalidAt(path, 'integer out of range');
      return big.toString();
    }
    if (FLOAT.has(kind)) {
      if (raw === 'NaN' || raw === 'Infinity' || raw === '-Infinity') return raw;
      const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw invalidAt(path, 'expected a number');
      return n;
    }
    throw invalidAt(path, `unsupported field type ${kind}`);
  }

  function enumFromJson(e: protobuf.Enum, raw: unknown, path: string): JsonValue {
    if (typeof raw === 'string') {
      if (!(raw in e.values)) throw invalidAt(path, `unknown value ${JSON.stringify(raw)} (expected one of ${Object.keys(e.values).join(', ')})`);
      return raw;
    }
    if (typeof raw === 'number' && Number.isInteger(raw)) return e.valuesById[raw] ?? raw;
    throw invalidAt(path, 'expected an enum name');
  }

  function isDefault(f: protobuf.Field, v: CanonicalValue): boolean {
    if (f.resolvedType instanceof protobuf.Type) return false;
    if (f.resolvedType instanceof protobuf.Enum) return v === 0 || (typeof v === 'string' && f.resolvedType.values[v] === 0);
    switch (f.type) {
      case 'string':
        return v === '';
      case 'bytes':
        return v === '' || (Buffer.isBuffer(v) && v.length === 0);
      case 'bool':
        return v === false;
      default:
        // Numbers: 0, or "0" for the 64-bit kinds that travel as strings.
        return v === 0 || v === '0';
    }
  }

  /** How `fromJson` treats unknown members and which form bytes take. */
  interface FromJsonOptions {
    unknown: UnknownFields;
    bytes: BytesForm;
  }

  function singleFromJson(f: protobuf.Field, raw: unknown, path: string, options: FromJsonOptions): CanonicalValue {
    const rt = f.resolvedType;
    if (rt instanceof protobuf.Type) return messageFromJson(rt, raw, path, options);
    if (rt instanceof protobuf.Enum) return enumFromJson(rt, raw, path);
    return scalarFromJson(f, raw, path, options.bytes);
  }

  function messageFromJson(t: protobuf.Type, raw: unknown, path: string, options: FromJsonOptions): CanonicalValue {
    const name = fullName(t);
    if (name === TIMESTAMP) {
      const parsed = typeof raw === 'string' ? parseTimestamp(raw) : undefined;
      if (!parsed) throw invalidAt(path, 'expected an RFC 3339 timestamp such as 2024-01-02T03:04:05Z');
      return formatTimestamp(parsed.seconds, parsed.nanos);
    }
    if (name === STRUCT) {
      if (!isPlainObject(raw)) throw invalidAt(path, 'expected a JSON object');
      return checkJson(raw, path);
    }
    if (name === VALUE) return checkJson(raw, path);
    if (name === LIST_VALUE) {
      if (!Array.isArray(raw)) throw invalidAt(path, 'expected a JSON array');
      return checkJson(raw, path);
    }
    if (!isPlainObject(raw)) throw invalidAt(path, 'expected a JSON object');
    const lookup = fieldLookup(t);
    const found: CanonicalObject = {};
    const oneofs = new Map<string, string>();
    for (const [key, value] of Object.entries(raw)) {
      const f = lookup.get(key);
      const at = `${path}.${key}`;
      if (!f) {
        if (options.unknown === 'reject') throw invalidAt(at, 'unknown field');
        continue;
      }
      // proto3 JSON: null means "default", except for google.protobuf.Value where it is the JSON null.
      if (value === undefined || (value === null && !(f.resolvedType instanceof protobuf.Type && fullName(f.resolvedType) === VALUE))) continue;
      if (f.name in found) throw invalidAt(at, `field ${f.name} is given twice`);
      const oneof = realOneof(f);
      if (oneof) {
        const other = oneofs.get(oneof.name);
        if (other !== undefined) throw invalidAt(path, `only one of ${oneof.fieldsArray.map((x) => x.name).join(', ')} may be set (oneof ${oneof.name}); got ${other} and ${f.name}`);
        oneofs.set(oneof.name, f.name);
      }
      if (f.map) throw invalidAt(at, 'map fields are not supported');
      if (f.repeated) {
        if (!Array.isArray(value)) throw invalidAt(at, 'expected an array');
        const items = value.map((item: unknown, i) => {
          if (item === null) throw invalidAt(`${at}[${i}]`, 'null is not allowed in a repeated field');
          return singleFromJson(f, item, `${at}[${i}]`, options);
        });
        if (items.length > 0) found[f.name] = items;
        continue;
      }
      const v = singleFromJson(f, value, at, options);
      // A oneof member has presence, so its default value is kept (it says which member is set).
      if (oneof || !isDefault(f, v)) found[f.name] = v;
    }
    // Members in declaration order, as proto3 JSON printers (and `fromProto`) write them.
    const out: CanonicalObject = {};
    for (const f of t.fieldsArray) {
      const v = found[f.name];
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  }

  // protobufjs bundles the well-known types as JSON with lowerCamelCase field names (`numberValue`), which
  // `keepCase` does not change; look the names up by field number so both spellings work.
  const valueType = root.lookupType(VALUE);
  const valueField = (id: number): string => {
    const f = valueType.fieldsArray.find((x) => x.id === id);
    if (!f) throw new Error(`google.protobuf.Value has no field ${id}`);
    return f.name;
  };
  const V = { null: valueField(1), number: valueField(2), string: valueField(3), bool: valueField(4), struct: valueField(5), list: valueField(6) };

  // ---- canonical JSON -> proto-loader object ---------------------------------------------------------------

  function valueToProto(v: JsonValue): Record<string, unknown> {
    if (v === null) return { [V.null]: 'NULL_VALUE' };
    if (typeof v === 'number') return { [V.number]: v };
    if (typeof v === 'string') return { [V.string]: v };
    if (typeof v === 'boolean') return { [V.bool]: v };
    if (Array.isArray(v)) return { [V.list]: { values: v.map(valueToProto) } };
    return { [V.struct]: structToProto(v) };
  }

  function structToProto(v: JsonObject): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) fields[k] = valueToProto(x);
    return { fields };
  }

  function singleToProto(f: protobuf.Field, v: CanonicalValue): unknown {
    const rt = f.resolvedType;
    if (rt instanceof protobuf.Type) return messageToProto(rt, v);
    if (f.type === 'bytes') return Buffer.isBuffer(v) ? v : Buffer.from(v as string, 'base64');
    return v;
  }

  function messageToProto(t: protobuf.Type, v: CanonicalValue): Record<string, unknown> {
    const name = fullName(t);
    if (name === TIMESTAMP) {
      const parsed = parseTimestamp(v as string);
      if (!parsed) throw new Error(`not a canonical timestamp: ${JSON.stringify(v)}`);
      return { seconds: parsed.seconds.toString(), nanos: parsed.nanos };
    }
    if (name === STRUCT) return structToProto(v as JsonObject);
    if (name === VALUE) return valueToProto(v as JsonValue);
    if (name === LIST_VALUE) return { values: (v as JsonValue[]).map(valueToProto) };
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as CanonicalObject)) {
      const f = t.fields[k];
      if (!f) continue;
      out[k] = f.repeated ? (x as CanonicalValue[]).map((item) => singleToProto(f, item)) : singleToProto(f, x);
    }
    return out;
  }

  // ---- proto-loader object -> canonical JSON ---------------------------------------------------------------

  function valueFromProto(v: Record<string, unknown>): JsonValue {
    if (v[V.struct]) return structFromProto(v[V.struct] as Record<string, unknown>);
    if (v[V.list]) return (((v[V.list] as { values?: Record<string, unknown>[] }).values) ?? []).map(valueFromProto);
    if (v[V.string] !== undefined) return v[V.string] as string;
    if (v[V.number] !== undefined) return v[V.number] as number;
    if (v[V.bool] !== undefined) return v[V.bool] as boolean;
    return null;
  }

  function structFromProto(v: Record<string, unknown>): JsonObject {
    const out: JsonObject = {};
    const fields = (v.fields ?? {}) as Record<string, Record<string, unknown>>;
    for (const [k, x] of Object.entries(fields)) out[k] = valueFromProto(x);
    return out;
  }

  function singleFromProto(f: protobuf.Field, v: unknown, bytes: BytesForm): CanonicalValue {
    const rt = f.resolvedType;
    if (rt instanceof protobuf.Type) return messageFromProto(rt, v as Record<string, unknown>, bytes);
    if (rt instanceof protobuf.Enum) return typeof v === 'number' ? (rt.valuesById[v] ?? v) : (v as string);
    if (f.type === 'bytes') {
      const buffer = asBuffer(v as Uint8Array);
      return bytes === 'buffer' ? buffer : buffer.toString('base64');
    }
    if (INT64.has(f.type) || UINT64.has(f.type)) return String(v);
    if (FLOAT.has(f.type) && typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
    return v as JsonValue;
  }

  function messageFromProto(t: protobuf.Type, v: Record<string, unknown>, bytes: BytesForm): CanonicalValue {
    const name = fullName(t);
    if (name === TIMESTAMP) return formatTimestamp(BigInt(String((v.seconds as string | number | undefined) ?? 0)), Number(v.nanos ?? 0));
    if (name === STRUCT) return structFromProto(v);
    if (name === VALUE) return valueFromProto(v);
    if (name === LIST_VALUE) return ((v.values as Record<string, unknown>[] | undefined) ?? []).map(valueFromProto);
    const out: CanonicalObject = {};
    for (const f of t.fieldsArray) {
      const x = v[f.name];
      if (x === undefined || x === null) continue;
      const oneof = realOneof(f);
      // With `oneofs: true` the virtual field names the member that counts (the last one on the wire).
      if (oneof && typeof v[oneof.name] === 'string' && v[oneof.name] !== f.name) continue;
      if (f.repeated) {
        const items = (x as unknown[]).map((item) => singleFromProto(f, item, bytes));
        if (items.length > 0) out[f.name] = items;
        continue;
      }
      const value = singleFromProto(f, x, bytes);
      if (oneof || !isDefault(f, value)) out[f.name] = value;
    }
    return out;
  }

  return {
    type,
    fromJson(typeName, value, options = {}) {
      return messageFromJson(type(typeName), value, options.where ?? 'body', { unknown: options.unknownFields ?? 'reject', bytes: options.bytes ?? 'base64' }) as CanonicalObject;
    },
    toProto(typeName, value) {
      return messageToProto(type(typeName), value);
    },
    fromProto(typeName, value, options = {}) {
      return messageFromProto(type(typeName), value, options.bytes ?? 'base64') as CanonicalObject;
    },
  };
}
