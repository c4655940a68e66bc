// The one hand-written fast path left in the RPC layer (docs/grpc.md, "The codecs"): a response whose
// `sharedElements` field (RpcMethod) is assembled from per-element pieces instead of being converted whole on every
// call. Each element is either already encoded (`EncodedMessage`: the JSON text and protobuf bytes stored beside an
// OSV record at import, or a QueryBatch result written by src/osv/osv.batch-answer.ts) or a record a handler hands
// out unchanged, converted once and kept beside it.
// Everything else (the rest of the message, any missing form of an element) goes through the generated codec, and
// test/grpc/codec-differential.test.ts holds the spliced answers to what the generated codec writes for the whole
// message. Why it stays: `npm run bench:osv` prints a Query answer's cost per record with and without it.
import { fromBinary, fromJsonString, toBinary, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
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

/**
 * The JSON text of a spliced answer: the shared field first (where the whole message's JSON holds it too), each
 * element's text written once and reused, then the members of `rest`. Elements that arrived as UTF-8 bytes are
 * spliced as bytes (a large answer is then one Buffer, never a large string).
 */
export function splicedJson(
  output: DescMessage,
  rest: Message,
  shared: SharedElements,
  elements: readonly PreparedElement[],
): string | Buffer {
  const restText = JSON.stringify(messageToJson(output, rest));
  if (elements.length === 0) return restText;
  const texts = elements.map((e) => (e.json ??= JSON.stringify(messageToJson(shared.element, elementMessage(shared, e)))));
  const head = `{${JSON.stringify(shared.field.name)}:[`;
  const tail = `]${restText === '{}' ? '}' : `,${restText.slice(1)}`}`;
  if (texts.every((t) => typeof t === 'string')) return `${head}${texts.join(',')}${tail}`;
  const comma = Buffer.from(',');
  const parts: Buffer[] = [Buffer.from(head)];
  texts.forEach((t, i) => {
    if (i > 0) parts.push(comma);
    parts.push(typeof t === 'string' ? Buffer.from(t) : t);
  });
  parts.push(Buffer.from(tail));
  return Buffer.concat(parts);
}

/**
 * The protobuf bytes of a spliced answer. A message may hold its fields in any order and a repeated field may be
 * split (protobuf encoding, "Field Order"), so each element's bytes go behind their tag and length, followed by the
 * encoded rest of the message.
 */
export function splicedBytes(output: DescMessage, rest: Message, shared: SharedElements, elements: readonly PreparedElement[]): Buffer {
  const restBytes = toBinary(output, rest);
  if (elements.length === 0) return Buffer.from(restBytes.buffer, restBytes.byteOffset, restBytes.byteLength);
  const parts: Uint8Array[] = [];
  let total = restBytes.byteLength;
  for (const e of elements) {
    const bytes = (e.bytes ??= toBinary(shared.element, elementMessage(shared, e)));
    const head = new BinaryWriter().tag(shared.field.number, WireType.LengthDelimited).uint32(bytes.byteLength).finish();
    parts.push(head, bytes);
    total += head.byteLength + bytes.byteLength;
  }
  parts.push(restBytes);
  return Buffer.concat(parts, total);
}
