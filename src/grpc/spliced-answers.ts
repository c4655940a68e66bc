// The one hand-written fast path left in the RPC layer (docs/grpc.md, "The codecs"): a response whose
// `sharedElements` field (RpcMethod) is assembled from per-element pieces instead of being converted whole on every
// call. Each element is either already encoded (`EncodedMessage`: the JSON text and protobuf bytes stored beside an
// OSV record at import, or a QueryBatch result written by src/osv/osv.batch-answer.ts) or a record a handler hands
// out unchanged, converted once and kept beside it.
// Everything else (the rest of the message, any missing form of an element) goes through the generated codec, and
// test/grpc/codec-differential.test.ts holds the spliced answers to what the generated codec writes for the whole
// message. Why it stays: `npm run bench:osv` prints a Query answer's cost per record with and without it.
import { fromBinary, fromJsonString, toBinary, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import { WireType } from '@bufbuild/protobuf/wire';
import { isMessageOf, messageToJson, responseFromJson } from './codec.ts';
import { EncodedMessage } from './rpc.ts';

/**
 * One element of a `sharedElements` field: its message, its JSON text and its wire bytes, each filled in once
 * needed (an `EncodedMessage` arrives with its text or its bytes and no message).
 */
export interface PreparedElement {
  message?: Message;
  json?: string | Buffer | undefined;
  bytes?: Uint8Array | undefined;
}

/** The repeated message field an RPC's answers are spliced around, with the per-object cache of its elements. */
export interface SharedElements {
  field: DescField;
  element: DescMessage;
  /** Keyed by the handler's element object; the handler promises never to change one it has handed out. */
  cache: WeakMap<object, PreparedElement>;
}

/** The `sharedElements` field `name` of `output`; throws when it is no repeated message field. */
export function sharedElementsOf(output: DescMessage, name: string, rpc: string): SharedElements {
  const field = output.fields.find((f) => f.name === name);
  if (!field || field.fieldKind !== 'list' || field.listKind !== 'message') {
    throw new Error(`RpcMethod ${rpc}: sharedElements "${name}" is not a repeated message field of ${output.typeName}`);
  }
  return { field, element: field.message, cache: new WeakMap() };
}

/**
 * An element as the handler returned it, prepared for splicing: encoded forms as they are, messages as they are,
 * JSON objects converted once per object (`records`: members the message lacks are dropped, RpcMethod.recordData).
 */
export function prepareElement(shared: SharedElements, element: unknown, records: boolean): PreparedElement {
  if (element instanceof EncodedMessage) return { json: element.json, bytes: element.wire };
  if (isMessageOf(element, shared.element)) return { message: element };
  if (typeof element !== 'object' || element === null) return { message: responseFromJson(shared.element, element, records) };
  let prepared = shared.cache.get(element);
  if (prepared === undefined) {
    prepared = { message: responseFromJson(shared.element, element, records) };
    shared.cache.set(element, prepared);
  }
  return prepared;
}

/** The element's message, decoded from its bytes or text when it came encoded. */
function elementMessage(shared: SharedElements, e: PreparedElement): Message {
  if (e.message) return e.message;
  if (e.bytes) e.message = fromBinary(shared.element, e.bytes, { readUnknownFields: false });
  else if (e.json !== undefined) e.message = fromJsonString(shared.element, e.json.toString(), { ignoreUnknownFields: true });
  else throw new Error('a prepared element holds no form');
  return e.message;
}

/** Bytes of `value` (a uint32) as a protobuf varint. */
function varintSize(value: number): number {
  let size = 1;
  for (let v = value >>> 7; v !== 0; v >>>= 7) size++;
  return size;
}

/** Writes `value` (a uint32) as a varint into `out` at `at`; returns the position after it. */
function writeVarint(out: Buffer, at: number, value: number): number {
  let v = value >>> 0;
  while (v > 0x7f) {
    out[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[at++] = v;
  return at;
}

/**
 * The JSON text of a spliced answer: the shared field first (where the whole message's JSON holds it too), each
 * element's text written once and reused, then the members of `rest`. Elements that arrived as UTF-8 bytes are
 * copied as bytes into one buffer of the answer's exact size (a large answer is never a large string, and no
 * per-element pieces are made on the way).
 */
export function splicedJson(
  output: DescMessage,
  rest: Message,
  shared: SharedElements,
  elements: readonly PreparedElement[],
): string | Buffer {
  const restText = JSON.stringify(messageToJson(output, rest));
  if (elements.length === 0) return restText;
  const head = `{${JSON.stringify(shared.field.name)}:[`;
  const tail = `]${restText === '{}' ? '}' : `,${restText.slice(1)}`}`;
  let strings = true;
  let total = Buffer.byteLength(head) + Buffer.byteLength(tail) + elements.length - 1;
  for (const e of elements) {
    const text = (e.json ??= JSON.stringify(messageToJson(shared.element, elementMessage(shared, e))));
    if (typeof text === 'string') total += Buffer.byteLength(text);
    else {
      strings = false;
      total += text.byteLength;
    }
  }
  if (strings) return `${head}${elements.map((e) => e.json as string).join(',')}${tail}`;
  const out = Buffer.allocUnsafe(total);
  let at = out.write(head, 0, 'utf8');
  for (let i = 0; i < elements.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ','
    const text = elements[i]!.json as string | Buffer;
    at += typeof text === 'string' ? out.write(text, at, 'utf8') : text.copy(out, at);
  }
  out.write(tail, at, 'utf8');
  return out;
}

/**
 * The protobuf bytes of a spliced answer. A message may hold its fields in any order and a repeated field may be
 * split (protobuf encoding, "Field Order"), so each element's bytes go behind their tag and length, followed by the
 * encoded rest of the message; all of it is written into one buffer of the answer's exact size.
 */
export function splicedBytes(output: DescMessage, rest: Message, shared: SharedElements, elements: readonly PreparedElement[]): Buffer {
  const restBytes = toBinary(output, rest);
  if (elements.length === 0) return Buffer.from(restBytes.buffer, restBytes.byteOffset, restBytes.byteLength);
  const tag = ((shared.field.number << 3) | WireType.LengthDelimited) >>> 0;
  const tagSize = varintSize(tag);
  let total = restBytes.byteLength;
  for (const e of elements) {
    const bytes = (e.bytes ??= toBinary(shared.element, elementMessage(shared, e)));
    total += tagSize + varintSize(bytes.byteLength) + bytes.byteLength;
  }
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (const e of elements) {
    const bytes = e.bytes as Uint8Array;
    at = writeVarint(out, writeVarint(out, at, tag), bytes.byteLength);
    out.set(bytes, at);
    at += bytes.byteLength;
  }
  out.set(restBytes, at);
  return out;
}
