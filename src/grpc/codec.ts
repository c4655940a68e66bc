// The RPC layer's use of the generated codec (@bufbuild/protobuf with protoc-gen-es's schemas): how requests are
// read from JSON with field paths in their errors, how JSON is written, and the unstorable-text check over decoded
// messages. Accepting or refusing a value is always the generated codec's decision; this module only names where.
import {
  fromJson,
  isMessage,
  ScalarType,
  toJson,
  type DescField,
  type DescMessage,
  type JsonValue,
  type Message,
} from '@bufbuild/protobuf';
import { reflect, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { AppError } from '../core/errors.ts';
import { assertStorableText, findUnstorableText, isUnstorableText, storableKey } from '../core/storable-text.ts';
import { useNodeTextEncoding } from './text-encoding.ts';

// Every use of the generated codec in the platform goes through this module (or src/grpc/index.ts, which loads it),
// so the runtime's string encoding is Node's from here on (text-encoding.ts says why).
useNodeTextEncoding();

/**
 * How the transports write proto3 JSON: the proto field names (snake_case, as OSV.dev and the spec use them; every
 * field's json_name is its proto name anyway), fields at their default value left out (OSV.dev relies on it).
 */
export const JSON_WRITE = { useProtoFieldName: true } as const;

/** A bytes field of a message being written, where its base64 goes in the JSON, and its value. */
interface BytesPatch {
  holder: ReflectMessage;
  field: DescField;
  bytes: Uint8Array;
  /** Member names and list indexes from the top of the JSON to the field's member. */
  path: (string | number)[];
}

function collectBytes(message: ReflectMessage, path: (string | number)[], out: BytesPatch[]): void {
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    if (field.fieldKind === 'scalar' && field.scalar === ScalarType.BYTES) {
      out.push({ holder: message, field, bytes: message.get(field), path: [...path, field.name] });
    } else if (field.fieldKind === 'message' && !hasOwnJsonForm(field.message)) {
      collectBytes(message.get(field), [...path, field.name], out);
    } else if (field.fieldKind === 'list' && field.listKind === 'message' && !hasOwnJsonForm(field.message)) {
      let index = 0;
      for (const item of message.get(field)) collectBytes(item as ReflectMessage, [...path, field.name, index++], out);
    }
  }
}

const MARKER = new Uint8Array(1);

/**
 * A message as proto3 JSON (the HTTP mappings' answers), by the generated codec's `toJson`, except for the base64
 * text of singular bytes fields: the generated encoder builds it character by character, which takes seconds for a
 * document of a few MiB (`npm run bench:grpc` prints both), so Node's native encoder writes it. Each bytes field
 * holds a one-byte marker while `toJson` runs, so the member sits where the codec puts it, and is then replaced.
 */
export function messageToJson(desc: DescMessage, message: Message): JsonValue {
  const patches: BytesPatch[] = [];
  collectBytes(reflect(desc, message), [], patches);
  if (patches.length === 0) return toJson(desc, message, JSON_WRITE);
  let json: JsonValue;
  try {
    for (const p of patches) p.holder.set(p.field, MARKER);
    json = toJson(desc, message, JSON_WRITE);
  } finally {
    for (const p of patches) p.holder.set(p.field, p.bytes);
  }
  for (const p of patches) {
    let holder = json as Record<string | number, JsonValue>;
    for (const key of p.path.slice(0, -1)) holder = holder[key] as Record<string | number, JsonValue>;
    const { buffer, byteOffset, byteLength } = p.bytes;
    holder[p.path[p.path.length - 1] as string] = Buffer.from(buffer, byteOffset, byteLength).toString('base64');
  }
  return json;
}

/** Well-known types whose JSON form is not an object of their fields (Timestamp is a string, Struct any object). */
function hasOwnJsonForm(desc: DescMessage): boolean {
  return desc.typeName.startsWith('google.protobuf.');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

const namesByMessage = new WeakMap<DescMessage, Map<string, DescField>>();

/** The field a JSON member names: its proto name, its json_name, or the proto name in lowerCamelCase. */
function fieldNamed(desc: DescMessage, key: string): DescField | undefined {
  let names = namesByMessage.get(desc);
  if (names === undefined) {
    names = new Map();
    for (const field of desc.fields) names.set(lowerCamel(field.name), field).set(field.jsonName, field).set(field.name, field);
    namesByMessage.set(desc, names);
  }
  return names.get(key);
}

/**
 * A request's JSON with every member under its proto name. Requests may use the lowerCamelCase names proto3 JSON
 * parsers accept, which the generated codec does not when the proto sets `json_name` to the proto name (it does,
 * for OSV.dev's snake_case JSON). Unknown members are refused here, where their path is known.
 */
function withProtoNames(desc: DescMessage, value: unknown, path: string): unknown {
  if (!isPlainObject(value) || hasOwnJsonForm(desc)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = fieldNamed(desc, key);
    if (!field) throw new AppError('parameter_invalid', `${path}.${key}: unknown field`);
    if (Object.hasOwn(out, field.name)) throw new AppError('parameter_invalid', `${path}.${key}: field ${field.name} is given twice`);
    const item = value[key];
    const message =
      field.fieldKind === 'message' || (field.fieldKind === 'list' && field.listKind === 'message') ? field.message : undefined;
    if (message && Array.isArray(item)) out[field.name] = item.map((x, i) => withProtoNames(message, x, `${path}.${key}[${i}]`));
    else out[field.name] = message ? withProtoNames(message, item, `${path}.${key}`) : item;
  }
  return out;
}

/** What the generated codec says is wrong, without its `cannot decode … from JSON` preamble. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^cannot decode [^:]*? from JSON:? ?/, '') || 'invalid value';
}

/**
 * Where in `value` the generated codec fails: each member is decoded alone, and a failing message member is
 * searched the same way, so the answer names the innermost field (`body.queries[1].version`). A failure no single
 * member causes (two members of a oneof) is the message's own.
 */
function locateFailure(desc: DescMessage, value: unknown, path: string, error: unknown): string {
  if (!isPlainObject(value) || hasOwnJsonForm(desc)) return `${path}: ${reasonOf(error)}`;
  for (const key of Object.keys(value)) {
    const item = value[key];
    try {
      fromJson(desc, { [key]: item } as JsonValue);
      continue;
    } catch (memberError) {
      const field = fieldNamed(desc, key);
      if (field?.fieldKind === 'message') return locateFailure(field.message, item, `${path}.${key}`, memberError);
      const message = field?.fieldKind === 'list' && field.listKind === 'message' ? field.message : undefined;
      if (!message || !Array.isArray(item)) return `${path}.${key}: ${reasonOf(memberError)}`;
      for (let i = 0; i < item.length; i++) {
        try {
          fromJson(message, item[i] as JsonValue);
        } catch (itemError) {
          return item[i] === null
            ? `${path}.${key}[${i}]: ${reasonOf(itemError)}`
            : locateFailure(message, item[i], `${path}.${key}[${i}]`, itemError);
        }
      }
      return `${path}.${key}: ${reasonOf(memberError)}`;
    }
  }
  return `${path}: ${reasonOf(error)}`;
}

/**
 * A request message from proto3 JSON (an HTTP mapping's body, path and query): unknown fields refused, types
 * checked by the generated codec; any failure is `parameter_invalid` naming the field (`body.package.nmae: unknown
 * field`). `where` names the whole request (`body`, `request`).
 */
export function requestFromJson<Desc extends DescMessage>(desc: Desc, value: unknown, where: string): Message {
  if (!isPlainObject(value)) throw new AppError('parameter_invalid', `${where}: expected a JSON object`);
  const named = withProtoNames(desc, value, where) as Record<string, unknown>;
  // Checked before the codec, which refuses an unpaired surrogate as invalid UTF-8: the same answer as for a NUL,
  // naming the field by its proto path as on gRPC (`encryption.key_id`, `queries.1.version`).
  for (const [key, item] of Object.entries(named)) assertStorableText(item, key);
  try {
    return fromJson(desc, named as JsonValue);
  } catch (error) {
    throw new AppError('parameter_invalid', locateFailure(desc, named, where, error), { cause: error });
  }
}

/**
 * A response message from the proto3 JSON a handler returned: a member the message does not declare fails
 * (`records`: dropped, for imported data such as OSV records; RpcMethod.recordData).
 */
export function responseFromJson(desc: DescMessage, value: unknown, records: boolean): Message {
  return fromJson(desc, value as JsonValue, { ignoreUnknownFields: records });
}

/** Whether `value` is a message of `desc` (what a handler built with `create`) rather than its JSON. */
export function isMessageOf(value: unknown, desc: DescMessage): value is Message {
  return isMessage(value, desc);
}

/**
 * The proto path (`id`, `queries.3.package.name`, as `findUnstorableText` names JSON) of the first string of a
 * decoded message that neither database can store as sent, or undefined. Bytes are not text and are skipped.
 */
function findUnstorableField(message: ReflectMessage, where: string | undefined): string | undefined {
  const at = (name: string) => (where === undefined ? name : `${where}.${name}`);
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    switch (field.fieldKind) {
      case 'scalar': {
        const value = message.get(field);
        if (typeof value === 'string' && isUnstorableText(value)) return at(field.name);
        break;
      }
      case 'message': {
        const found = findUnstorableField(message.get(field), at(field.name));
        if (found) return found;
        break;
      }
      case 'list': {
        let index = 0;
        for (const item of message.get(field)) {
          const path = `${at(field.name)}.${index++}`;
          if (typeof item === 'string' && isUnstorableText(item)) return path;
          if (field.listKind === 'message') {
            const found = findUnstorableField(item as ReflectMessage, path);
            if (found) return found;
          }
        }
        break;
      }
      case 'map':
        for (const [key, item] of message.get(field)) {
          const path = `${at(field.name)}.${typeof key === 'string' ? storableKey(key) : String(key)}`;
          if (typeof key === 'string' && isUnstorableText(key)) return path;
          if (typeof item === 'string' && isUnstorableText(item)) return path;
          if (field.mapKind === 'message') {
            const found = findUnstorableField(item as ReflectMessage, path);
            if (found) return found;
          }
        }
        break;
      case 'enum':
        break;
    }
  }
  return undefined;
}

/**
 * Refuses a decoded request holding unstorable text, naming the field by its proto path. A message is a plain
 * object tree (nested messages, arrays, map objects, oneof `{case, value}` pairs; bytes as `Uint8Array`), so a plain
 * walk over its own members sees every string the reflective walk sees, and a few identifiers besides (`$typeName`,
 * oneof cases). Only when that walk finds something does the reflective walk run, for the proto path: on a
 * `QueryBatch` of 1,000 queries the reflective walk took 2.26 ms of CPU, the plain one 0.45–0.8 ms.
 */
export function assertStorableMessage(desc: DescMessage, message: Message): void {
  if (findUnstorableText(message, '') === undefined) return;
  const path = findUnstorableField(reflect(desc, message), undefined);
  if (path) throw new AppError('parameter_invalid', `${path}: contains a character that cannot be stored (NUL or an unpaired surrogate)`);
}
