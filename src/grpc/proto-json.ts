import protobuf from 'protobufjs';
import { AppError } from '../core/errors.ts';
import { createWireEncoder } from './proto-wire.ts';

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
 * - `encode` writes canonical JSON as protobuf bytes (the gRPC response path).
 * - `fromProto` turns what proto-loader deserialized (with `LOADER_OPTIONS`) into canonical JSON.
 */
export interface ProtoJsonCodec {
  fromJson(typeName: string, value: unknown, options?: { unknownFields?: UnknownFields; where?: string; bytes?: BytesForm }): CanonicalObject;
  toProto(typeName: string, value: CanonicalObject): Record<string, unknown>;
  fromProto(typeName: string, value: Record<string, unknown>, options?: { bytes?: BytesForm }): CanonicalObject;
  /**
   * Canonical JSON straight to the protobuf wire format, in one pass (what `toProto` and proto-loader's serializer
   * do in two, with a `fromObject` copy between); the gRPC server sends these bytes as they are.
   */
  encode(typeName: string, value: CanonicalObject): Uint8Array;
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

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1-12), by integer arithmetic. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The decimal value of `text[from, from + length)`, or -1 when a character is not a digit. */
function digitsAt(text: string, from: number, length: number): number {
  let n = 0;
  for (let i = from; i < from + length; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * Seconds since the epoch of a timestamp already in the canonical form `formatTimestamp` writes (UTC, `Z`, 0, 3, 6
 * or 9 fractional digits without a droppable group of trailing zeros, a real date in 0001-9999); undefined for
 * anything else, which then takes the general `parseTimestamp` path. This is the hot path of every response: an
 * OSV answer carries one timestamp per record, and handlers already write them canonically. No Date, no BigInt.
 */
export function canonicalTimestampSeconds(text: string): number | undefined {
  const length = text.length;
  if (length !== 20 && length !== 24 && length !== 27 && length !== 30) return undefined;
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(length - 1) !== 90) return undefined;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (DAYS_IN_MONTH[month - 1] as number) + (leap ? 1 : 0)) return undefined;
  if (length > 20) {
    if (text.charCodeAt(19) !== 46) return undefined;
    const digits = length - 21;
    if (digitsAt(text, 20, digits) < 0) return undefined;
    // Canonical: the last group of three digits is not 000 (it would have been left out).
    if (text.charCodeAt(length - 2) === 48 && text.charCodeAt(length - 3) === 48 && text.charCodeAt(length - 4) === 48) return undefined;
  }
  return daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
}

/** The nanoseconds of a timestamp accepted by `canonicalTimestampSeconds`. */
function canonicalTimestampNanos(text: string): number {
  return text.length === 20 ? 0 : digitsAt(text, 20, text.length - 21) * (text.length === 24 ? 1_000_000 : text.length === 27 ? 1000 : 1);
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

/** The well-known types with a JSON form of their own. */
type Special = 'timestamp' | 'struct' | 'value' | 'list' | undefined;
/** A scalar field's kind, decided once per field instead of per value. */
type ScalarKind = 'string' | 'bool' | 'bytes' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'float' | 'other';

/** A message type compiled once (cached by type): its fields in declaration order and their JSON names. */
interface MessagePlan {
  type: protobuf.Type;
  special: Special;
  fields: FieldPlan[];
  /** JSON member name (proto name, json_name, lowerCamelCase) → field. */
  lookup: Map<string, FieldPlan>;
  /** Proto name → field (what canonical JSON uses). */
  byName: Map<string, FieldPlan>;
}

interface FieldPlan {
  field: protobuf.Field;
  name: string;
  /** Position in declaration order. */
  index: number;
  repeated: boolean;
  map: boolean;
  message: protobuf.Type | undefined;
  enumType: protobuf.Enum | undefined;
  scalar: ScalarKind;
  /** The real oneof the field belongs to (proto3 `optional` makes a synthetic one of one field, ignored here). */
  oneof: protobuf.OneOf | null;
  /** The field is a `google.protobuf.Value`, where null is the JSON null rather than "default". */
  isValue: boolean;
}

function scalarKind(kind: string): ScalarKind {
  if (kind === 'string' || kind === 'bool' || kind === 'bytes') return kind;
  if (INT32.has(kind)) return 'int32';
  if (UINT32.has(kind)) return 'uint32';
  if (INT64.has(kind)) return 'int64';
  if (UINT64.has(kind)) return 'uint64';
  if (FLOAT.has(kind)) return 'float';
  return 'other';
}

function specialOf(t: protobuf.Type): Special {
  switch (fullName(t)) {
    case TIMESTAMP:
      return 'timestamp';
    case STRUCT:
      return 'struct';
    case VALUE:
      return 'value';
    case LIST_VALUE:
      return 'list';
    default:
      return undefined;
  }
}

/** Builds the codec over a resolved protobufjs root holding every message the RPCs use. */
export function createProtoJsonCodec(root: protobuf.Root): ProtoJsonCodec {
  const types = new Map<string, protobuf.Type>();
  const plans = new Map<protobuf.Type, MessagePlan>();

  function type(typeName: string): protobuf.Type {
    let t = types.get(typeName);
    if (!t) {
      t = root.lookupType(typeName);
      t.resolveAll();
      types.set(typeName, t);
    }
    return t;
  }

  /** The compiled plan of a message type; nested types are planned on first use (recursive types work). */
  function plan(t: protobuf.Type): MessagePlan {
    let p = plans.get(t);
    if (p) return p;
    const fields = t.fieldsArray.map((f, index): FieldPlan => {
      const rt = f.resolvedType;
      const message = rt instanceof protobuf.Type ? rt : undefined;
      return {
        field: f,
        name: f.name,
        index,
        repeated: f.repeated,
        map: f.map,
        message,
        enumType: rt instanceof protobuf.Enum ? rt : undefined,
        scalar: scalarKind(f.type),
        oneof: f.partOf && f.partOf.fieldsArray.length > 1 ? f.partOf : null,
        isValue: message !== undefined && fullName(message) === VALUE,
      };
    });
    const lookup = new Map<string, FieldPlan>();
    const byName = new Map<string, FieldPlan>();
    for (const fp of fields) {
      byName.set(fp.name, fp);
      lookup.set(fp.name, fp);
      const jsonName = fp.field.options?.json_name as unknown;
      if (typeof jsonName === 'string') lookup.set(jsonName, fp);
      lookup.set(lowerCamel(fp.name), fp);
    }
    p = { type: t, special: specialOf(t), fields, lookup, byName };
    plans.set(t, p);
    return p;
  }

  // ---- JSON (HTTP or handler) -> canonical JSON -------------------------------------------------------------

  function scalarFromJson(fp: FieldPlan, raw: unknown, path: string, bytes: BytesForm): CanonicalValue {
    switch (fp.scalar) {
      case 'string':
        if (typeof raw !== 'string') throw invalidAt(path, 'expected a string');
        return raw;
      case 'bool':
        if (typeof raw !== 'boolean') throw invalidAt(path, 'expected true or false');
        return raw;
      case 'bytes': {
        // A handler's own Buffer needs no check (and, on the gRPC side, no copy).
        if (raw instanceof Uint8Array) return bytes === 'buffer' ? asBuffer(raw) : asBuffer(raw).toString('base64');
        const decoded = typeof raw === 'string' ? bytesFromBase64(raw, bytes) : undefined;
        if (decoded === undefined) throw invalidAt(path, 'expected base64 text');
        return decoded;
      }
      case 'int32':
      case 'uint32': {
        const n = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
        if (typeof n !== 'number' || !Number.isInteger(n)) throw invalidAt(path, 'expected an integer');
        const [min, max] = fp.scalar === 'uint32' ? [0, 4_294_967_295] : [-2_147_483_648, 2_147_483_647];
        if (n < min || n > max) throw invalidAt(path, `expected an integer from ${min} to ${max}`);
        return n;
      }
      case 'int64':
      case 'uint64': {
        let big: bigint;
        if (typeof raw === 'number' && Number.isSafeInteger(raw)) big = BigInt(raw);
        else if (typeof raw === 'string' && /^-?\d{1,20}$/.test(raw)) big = BigInt(raw);
        else throw invalidAt(path, 'expected an integer (a decimal string in JSON)');
        const [min, max] = fp.scalar === 'uint64' ? [0n, 18_446_744_073_709_551_615n] : [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n];
        if (big < min || big > max) throw invalidAt(path, 'integer out of range');
        return big.toString();
      }
      case 'float': {
        if (raw === 'NaN' || raw === 'Infinity' || raw === '-Infinity') return raw;
        const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
        if (typeof n !== 'number' || !Number.isFinite(n)) throw invalidAt(path, 'expected a number');
        return n;
      }
      default:
        throw invalidAt(path, `unsupported field type ${fp.field.type}`);
    }
  }

  function enumFromJson(e: protobuf.Enum, raw: unknown, path: string): JsonValue {
    if (typeof raw === 'string') {
      if (!Object.hasOwn(e.values, raw)) throw invalidAt(path, `unknown value ${JSON.stringify(raw)} (expected one of ${Object.keys(e.values).join(', ')})`);
      return raw;
    }
    if (typeof raw === 'number' && Number.isInteger(raw)) return e.valuesById[raw] ?? raw;
    throw invalidAt(path, 'expected an enum name');
  }

  function isDefault(fp: FieldPlan, v: CanonicalValue): boolean {
    if (fp.message) return false;
    if (fp.enumType) return v === 0 || (typeof v === 'string' && fp.enumType.values[v] === 0);
    switch (fp.scalar) {
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

  function singleFromJson(fp: FieldPlan, raw: unknown, path: string, options: FromJsonOptions): CanonicalValue {
    if (fp.message) return messageFromJson(plan(fp.message), raw, path, options);
    if (fp.enumType) return enumFromJson(fp.enumType, raw, path);
    return scalarFromJson(fp, raw, path, options.bytes);
  }

  function messageFromJson(p: MessagePlan, raw: unknown, path: string, options: FromJsonOptions): CanonicalValue {
    switch (p.special) {
      case 'timestamp': {
        // Already canonical (every handler's own timestamps): kept as is, without a Date or a BigInt.
        if (typeof raw === 'string' && canonicalTimestampSeconds(raw) !== undefined) return raw;
        const parsed = typeof raw === 'string' ? parseTimestamp(raw) : undefined;
        if (!parsed) throw invalidAt(path, 'expected an RFC 3339 timestamp such as 2024-01-02T03:04:05Z');
        return formatTimestamp(parsed.seconds, parsed.nanos);
      }
      case 'struct':
        if (!isPlainObject(raw)) throw invalidAt(path, 'expected a JSON object');
        return checkJson(raw, path);
      case 'value':
        return checkJson(raw, path);
      case 'list':
        if (!Array.isArray(raw)) throw invalidAt(path, 'expected a JSON array');
        return checkJson(raw, path);
      default:
        break;
    }
    if (!isPlainObject(raw)) throw invalidAt(path, 'expected a JSON object');
    const found: CanonicalObject = {};
    let oneofs: Map<string, string> | undefined;
    // Members come out in declaration order, as proto3 JSON printers (and `fromProto`) write them; when the input
    // already has that order (handlers build their answers so), `found` is the answer and no copy is made.
    let ordered = true;
    let last = -1;
    for (const key of Object.keys(raw)) {
      const value = raw[key];
      const fp = p.lookup.get(key);
      if (!fp) {
        if (options.unknown === 'reject') throw invalidAt(`${path}.${key}`, 'unknown field');
        continue;
      }
      // proto3 JSON: null means "default", except for google.protobuf.Value where it is the JSON null.
      if (value === undefined || (value === null && !fp.isValue)) continue;
      if (Object.hasOwn(found, fp.name)) throw invalidAt(`${path}.${key}`, `field ${fp.name} is given twice`);
      const oneof = fp.oneof;
      if (oneof) {
        oneofs ??= new Map();
        const other = oneofs.get(oneof.name);
        if (other !== undefined) throw invalidAt(path, `only one of ${oneof.fieldsArray.map((x) => x.name).join(', ')} may be set (oneof ${oneof.name}); got ${other} and ${fp.name}`);
        oneofs.set(oneof.name, fp.name);
      }
      if (fp.map) throw invalidAt(`${path}.${key}`, 'map fields are not supported');
      let v: CanonicalValue;
      if (fp.repeated) {
        if (!Array.isArray(value)) throw invalidAt(`${path}.${key}`, 'expected an array');
        if (value.length === 0) continue;
        const items: CanonicalValue[] = new Array<CanonicalValue>(value.length);
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === null) throw invalidAt(`${path}.${key}[${i}]`, 'null is not allowed in a repeated field');
          items[i] = singleFromJson(fp, item, `${path}.${key}[${i}]`, options);
        }
        v = items;
      } else {
        v = singleFromJson(fp, value, `${path}.${key}`, options);
        // A oneof member has presence, so its default value is kept (it says which member is set).
        if (!oneof && isDefault(fp, v)) continue;
      }
      found[fp.name] = v;
      if (fp.index < last) ordered = false;
      last = fp.index;
    }
    if (ordered) return found;
    const out: CanonicalObject = {};
    for (const fp of p.fields) {
      const v = found[fp.name];
      if (v !== undefined) out[fp.name] = v;
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
  const nullValue = root.lookupEnum('google.protobuf.NullValue').values.NULL_VALUE ?? 0;

  // ---- canonical JSON -> proto-loader object (or, `forEncode`, the object protobufjs `Type.encode` takes) ------

  function valueToProto(v: JsonValue, forEncode: boolean): Record<string, unknown> {
    if (v === null) return { [V.null]: forEncode ? nullValue : 'NULL_VALUE' };
    if (typeof v === 'number') return { [V.number]: v };
    if (typeof v === 'string') return { [V.string]: v };
    if (typeof v === 'boolean') return { [V.bool]: v };
    if (Array.isArray(v)) return { [V.list]: { values: v.map((x) => valueToProto(x, forEncode)) } };
    return { [V.struct]: structToProto(v, forEncode) };
  }

  function structToProto(v: JsonObject, forEncode: boolean): Record<string, unknown> {
    const fields: Record<string, unknown> = {};
    for (const k of Object.keys(v)) fields[k] = valueToProto(v[k] as JsonValue, forEncode);
    return { fields };
  }

  function singleToProto(fp: FieldPlan, v: CanonicalValue, forEncode: boolean): unknown {
    if (fp.message) return messageToProto(plan(fp.message), v, forEncode);
    if (fp.scalar === 'bytes') return Buffer.isBuffer(v) ? v : Buffer.from(v as string, 'base64');
    if (forEncode) {
      // `Type.encode` writes enums as numbers and floats' special values as numbers.
      if (fp.enumType) return typeof v === 'string' ? fp.enumType.values[v] : v;
      if (fp.scalar === 'float' && typeof v === 'string') return Number(v);
    }
    return v;
  }

  function messageToProto(p: MessagePlan, v: CanonicalValue, forEncode: boolean): Record<string, unknown> {
    switch (p.special) {
      case 'timestamp': {
        const text = v as string;
        const seconds = canonicalTimestampSeconds(text);
        if (seconds !== undefined) return { seconds: forEncode ? seconds : String(seconds), nanos: canonicalTimestampNanos(text) };
        const parsed = parseTimestamp(text);
        if (!parsed) throw new Error(`not a canonical timestamp: ${JSON.stringify(v)}`);
        return { seconds: parsed.seconds.toString(), nanos: parsed.nanos };
      }
      case 'struct':
        return structToProto(v as JsonObject, forEncode);
      case 'value':
        return valueToProto(v as JsonValue, forEncode);
      case 'list':
        return { values: (v as JsonValue[]).map((x) => valueToProto(x, forEncode)) };
      default:
        break;
    }
    const object = v as CanonicalObject;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(object)) {
      const fp = p.byName.get(k);
      if (!fp) continue;
      const x = object[k] as CanonicalValue;
      if (fp.repeated) {
        const items = x as CanonicalValue[];
        const converted = new Array<unknown>(items.length);
        for (let i = 0; i < items.length; i++) converted[i] = singleToProto(fp, items[i] as CanonicalValue, forEncode);
        out[k] = converted;
      } else {
        out[k] = singleToProto(fp, x, forEncode);
      }
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
    for (const k of Object.keys(fields)) out[k] = valueFromProto(fields[k] as Record<string, unknown>);
    return out;
  }

  function singleFromProto(fp: FieldPlan, v: unknown, bytes: BytesForm): CanonicalValue {
    if (fp.message) return messageFromProto(plan(fp.message), v as Record<string, unknown>, bytes);
    if (fp.enumType) return typeof v === 'number' ? (fp.enumType.valuesById[v] ?? v) : (v as string);
    switch (fp.scalar) {
      case 'bytes': {
        const buffer = asBuffer(v as Uint8Array);
        return bytes === 'buffer' ? buffer : buffer.toString('base64');
      }
      case 'int64':
      case 'uint64':
        return String(v);
      case 'float':
        if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
        return v as number;
      default:
        return v as JsonValue;
    }
  }

  function messageFromProto(p: MessagePlan, v: Record<string, unknown>, bytes: BytesForm): CanonicalValue {
    switch (p.special) {
      case 'timestamp':
        return formatTimestamp(BigInt(String((v.seconds as string | number | undefined) ?? 0)), Number(v.nanos ?? 0));
      case 'struct':
        return structFromProto(v);
      case 'value':
        return valueFromProto(v);
      case 'list':
        return ((v.values as Record<string, unknown>[] | undefined) ?? []).map(valueFromProto);
      default:
        break;
    }
    const out: CanonicalObject = {};
    for (const fp of p.fields) {
      const x = v[fp.name];
      if (x === undefined || x === null) continue;
      const oneof = fp.oneof;
      // With `oneofs: true` the virtual field names the member that counts (the last one on the wire).
      if (oneof && typeof v[oneof.name] === 'string' && v[oneof.name] !== fp.name) continue;
      if (fp.repeated) {
        const list = x as unknown[];
        if (list.length === 0) continue;
        const items = new Array<CanonicalValue>(list.length);
        for (let i = 0; i < list.length; i++) items[i] = singleFromProto(fp, list[i], bytes);
        out[fp.name] = items;
        continue;
      }
      const value = singleFromProto(fp, x, bytes);
      if (oneof || !isDefault(fp, value)) out[fp.name] = value;
    }
    return out;
  }

  const wire = createWireEncoder({
    fallback: (t, value) => t.encode(messageToProto(plan(t), value, true)).finish(),
    timestamp(text) {
      const seconds = canonicalTimestampSeconds(text);
      if (seconds !== undefined) return { seconds, nanos: canonicalTimestampNanos(text) };
      const parsed = parseTimestamp(text);
      if (!parsed) throw new Error(`not a canonical timestamp: ${JSON.stringify(text)}`);
      return { seconds: Number(parsed.seconds), nanos: parsed.nanos };
    },
  });

  return {
    type,
    fromJson(typeName, value, options = {}) {
      return messageFromJson(plan(type(typeName)), value, options.where ?? 'body', { unknown: options.unknownFields ?? 'reject', bytes: options.bytes ?? 'base64' }) as CanonicalObject;
    },
    toProto(typeName, value) {
      return messageToProto(plan(type(typeName)), value, false);
    },
    encode(typeName, value) {
      return wire(type(typeName), value);
    },
    fromProto(typeName, value, options = {}) {
      return messageFromProto(plan(type(typeName)), value, options.bytes ?? 'base64') as CanonicalObject;
    },
  };
}
