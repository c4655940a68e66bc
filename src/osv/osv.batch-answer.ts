// The items of a QueryBatch answer written straight to their transport form: one `VulnerabilityList` of
// `{id, modified}` entries and a page token per query, handed to the RPC layer as `EncodedMessage` elements of
// `results` (its one splice hook, RpcMethod.sharedElements; docs/grpc.md, "The codecs"). Why it exists: the
// generated codec reads the handler's JSON and writes this small fixed shape through reflection, two nested
// messages per entry, which costs 35-50 ms of CPU for a 1,000-query answer of 2,000 entries on the loaded
// benchmark machine (as much as building the message with `create`), against 10-12 ms (protobuf) and 4-5 ms
// (JSON) here; matching the whole batch takes 8-15 ms (`npm run bench:osv -- --only codec` prints the three). What
// it writes is the generated codec's output byte for byte (test/grpc/batch-answer-differential.test.ts: every
// `modified` of the corpus, random results); a timestamp that is not canonical goes through the generated codec.
import { fromJson, toJson } from '@bufbuild/protobuf';
import { TimestampSchema } from '@bufbuild/protobuf/wkt';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { EncodedMessage, VulnerabilityListSchema, VulnerabilitySchema } from '../grpc/index.ts';
import type { CorpusIndex } from './osv.index.ts';

/** One query's answer in a batch as the service computes it: proto3 JSON of `platform.v1.VulnerabilityList`. */
export interface BatchResultJson {
  vulns?: { id: string; modified: string }[];
  next_page_token?: string;
}

/** The field numbers this writer uses, taken from the generated schemas and checked to be the shape it writes. */
function fieldNumbers(): { vulns: number; token: number; id: number; modified: number; seconds: number; nanos: number } {
  const list = VulnerabilityListSchema.field;
  const vuln = VulnerabilitySchema.field;
  const ts = TimestampSchema.field;
  const shapeHolds =
    list.vulns?.fieldKind === 'list' &&
    list.vulns.listKind === 'message' &&
    list.vulns.message.typeName === VulnerabilitySchema.typeName &&
    list.nextPageToken?.fieldKind === 'scalar' &&
    vuln.id?.fieldKind === 'scalar' &&
    vuln.modified?.fieldKind === 'message' &&
    vuln.modified.message.typeName === TimestampSchema.typeName &&
    // The generated codec writes fields in ascending number order, and so does this writer.
    list.vulns.number < list.nextPageToken.number &&
    vuln.id.number < vuln.modified.number;
  if (!shapeHolds || !ts.seconds || !ts.nanos) throw new Error('platform.v1.VulnerabilityList changed: review src/osv/osv.batch-answer.ts');
  return {
    vulns: list.vulns.number,
    token: list.nextPageToken.number,
    id: vuln.id.number,
    modified: vuln.modified.number,
    seconds: ts.seconds.number,
    nanos: ts.nanos.number,
  };
}

const FIELD = fieldNumbers();

/**
 * An RFC 3339 UTC timestamp as the generated codec writes it (`toJson` of a Timestamp): whole seconds, or a
 * fraction of 3, 6 or 9 digits, the shortest that holds the nanoseconds (so never ending in 000).
 */
const CANONICAL_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.(?:\d{3}|\d{6}|\d{9}))?Z$/;

interface ParsedTimestamp {
  seconds: number;
  nanos: number;
  /** The JSON text of the Timestamp (the input itself when that was canonical). */
  json: string;
}

/** The number written by the ASCII digits `text[from..to)` (checked to be digits by CANONICAL_TIMESTAMP). */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + text.charCodeAt(i) - 48;
  return n;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Seconds in 400 Gregorian years, after which the calendar repeats. */
const FOUR_CENTURIES_S = 146_097 * 86_400;

/**
 * `modified` as a Timestamp. A canonical text naming a real instant is read here, by arithmetic (Date.parse and
 * toISOString cost more than the rest of the answer together). Any other text goes through the generated codec,
 * which normalises it (it reads February 30 as March 2, as Date.parse does, and offsets other than Z) or throws as
 * it would for the whole message.
 */
function parseTimestamp(text: string): ParsedTimestamp {
  if (CANONICAL_TIMESTAMP.test(text) && !(text.length > 21 && text.endsWith('000Z'))) {
    const year = digits(text, 0, 4);
    const month = digits(text, 5, 7);
    const day = digits(text, 8, 10);
    const hour = digits(text, 11, 13);
    const minute = digits(text, 14, 16);
    const second = digits(text, 17, 19);
    if (year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour < 24 && minute < 60 && second < 60) {
      const fraction = text.length - 21;
      return {
        // Date.UTC reads years below 100 as 19xx (go-vulndb's records say 0001-01-01): 400 years later is the same
        // day of the week and of the leap cycle.
        seconds: Date.UTC(year + 400, month - 1, day, hour, minute, second) / 1000 - FOUR_CENTURIES_S,
        nanos: fraction > 0 ? digits(text, 20, 20 + fraction) * 10 ** (9 - fraction) : 0,
        json: text,
      };
    }
  }
  const timestamp = fromJson(TimestampSchema, text);
  return { seconds: Number(timestamp.seconds), nanos: timestamp.nanos, json: toJson(TimestampSchema, timestamp) };
}

/** Bytes of `value` written as a varint; negative values (int64, int32) take ten. */
function varintSize(value: number): number {
  if (value < 0) return 10;
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) size++;
  return size;
}

/** Bytes of each field's tag (the wire type does not change the size). */
const TAG_SIZE = {
  id: varintSize(FIELD.id << 3),
  modified: varintSize(FIELD.modified << 3),
  seconds: varintSize(FIELD.seconds << 3),
  nanos: varintSize(FIELD.nanos << 3),
};

/**
 * The protobuf bytes of one batch result: what `toBinary(VulnerabilityListSchema, …)` writes for it. Each entry's
 * length is counted here rather than left to the writer's fork and join, which copy every entry twice through
 * small arrays and took half the time of the whole answer.
 */
export function batchResultBytes(result: BatchResultJson): Uint8Array {
  const writer = new BinaryWriter();
  for (const vuln of result.vulns ?? []) {
    const id = vuln.id === '' ? undefined : Buffer.from(vuln.id, 'utf8');
    const { seconds, nanos } = parseTimestamp(vuln.modified);
    const timestampSize =
      (seconds === 0 ? 0 : TAG_SIZE.seconds + varintSize(seconds)) + (nanos === 0 ? 0 : TAG_SIZE.nanos + varintSize(nanos));
    const idSize = id === undefined ? 0 : TAG_SIZE.id + varintSize(id.byteLength) + id.byteLength;
    writer.tag(FIELD.vulns, WireType.LengthDelimited).uint32(idSize + TAG_SIZE.modified + varintSize(timestampSize) + timestampSize);
    if (id !== undefined) writer.tag(FIELD.id, WireType.LengthDelimited).bytes(id);
    writer.tag(FIELD.modified, WireType.LengthDelimited).uint32(timestampSize);
    if (seconds !== 0) writer.tag(FIELD.seconds, WireType.Varint).int64(seconds);
    if (nanos !== 0) writer.tag(FIELD.nanos, WireType.Varint).int32(nanos);
  }
  if (result.next_page_token) writer.tag(FIELD.token, WireType.LengthDelimited).string(result.next_page_token);
  return writer.finish();
}

/** The JSON text of one batch result: what `toJsonString(VulnerabilityListSchema, …, JSON_WRITE)` writes for it. */
export function batchResultJson(result: BatchResultJson): string {
  const out: { vulns?: { id?: string; modified: string }[]; next_page_token?: string } = {};
  const vulns = result.vulns ?? [];
  if (vulns.length > 0) {
    out.vulns = vulns.map((v) => {
      const modified = parseTimestamp(v.modified).json;
      return v.id === '' ? { modified } : { id: v.id, modified };
    });
  }
  if (result.next_page_token) out.next_page_token = result.next_page_token;
  return JSON.stringify(out);
}

/** One batch result in the form its transport sends (`json` for HTTP, `wire` for gRPC). */
export function encodeBatchResult(result: BatchResultJson, form: 'json' | 'wire'): EncodedMessage {
  return form === 'json' ? new EncodedMessage(batchResultJson(result), undefined) : new EncodedMessage(undefined, batchResultBytes(result));
}

// ---------------------------------------------------------------------------------------------------------------
// Straight from the index: a batch item written from the index's bytes, with no object or string per entry.

/** Writes `value` (a non-negative integer below 2^53) as a varint at `at`; returns the position after it. */
function writeVarint(out: Uint8Array, at: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

/**
 * The Timestamp of record `rec`'s `modified`, computed once per record and kept in the index's columns; false when
 * the text is not canonical or its seconds are negative (those items take the general path).
 */
function timestampOf(index: CorpusIndex, rec: number): boolean {
  if (Number.isNaN(index.recSeconds[rec])) {
    const text = index.recordModified(rec);
    let ok = false;
    try {
      const ts = parseTimestamp(text);
      ok = ts.json === text && ts.seconds >= 0;
      index.recSeconds[rec] = ts.seconds;
      index.recNanos[rec] = ok ? ts.nanos : -1;
    } catch {
      index.recSeconds[rec] = 0;
      index.recNanos[rec] = -1;
    }
    return ok;
  }
  return index.recNanos[rec] !== -1;
}

const JSON_VULNS = Buffer.from('{"vulns":[');
const JSON_ID = Buffer.from('{"id":"');
const JSON_MODIFIED = Buffer.from('","modified":"');
const JSON_ENTRY_END = Buffer.from('"}');

/**
 * One QueryBatch item, `records` (record numbers of `index`, in answer order) and its page token, in the form its
 * transport sends: the same bytes as `encodeBatchResult` of the `{id, modified}` entries, written into one buffer of
 * the exact size from the index's string tables (a popular package's hundreds of entries leave no garbage but that
 * buffer). Items with an id JSON would escape, or a `modified` the generated codec would rewrite, take
 * `encodeBatchResult`.
 */
export function encodeBatchItem(
  index: CorpusIndex,
  records: readonly number[],
  token: string | undefined,
  form: 'json' | 'wire',
  arena?: ByteArena,
): EncodedMessage {
  const ids = index.ids;
  let plain = true;
  for (const rec of records) {
    if (!timestampOf(index, rec) || ids.byteLength(rec) === 0 || (form === 'json' && !ids.isPlainJson(rec))) {
      plain = false;
      break;
    }
  }
  if (!plain) {
    const result: BatchResultJson = {};
    if (records.length > 0) result.vulns = records.map((rec) => ({ id: index.recordId(rec), modified: index.recordModified(rec) }));
    if (token) result.next_page_token = token;
    return encodeBatchResult(result, form);
  }
  return form === 'json'
    ? new EncodedMessage(itemJson(index, records, token, arena), undefined)
    : new EncodedMessage(undefined, itemWire(index, records, token, arena));
}

/**
 * The items of one answer, carved out of shared 64 KiB buffers. A `QueryBatch(1000)` answer made a buffer (or a
 * string) of its own per item, each with a backing store V8 tracks and frees one by one (the "sweep array buffers"
 * phases of its collections); the items are alive for the whole call, across young-generation collections, so they
 * were promoted too, and the old generation filled towards a full collection. Now the 1,000 items of an answer
 * share a few backing stores, in both forms.
 */
export class ByteArena {
  private chunk = Buffer.alloc(0);
  private at = 0;
  constructor(private readonly chunkSize = 64 * 1024) {}

  /** `size` zeroed bytes no other item shares. */
  take(size: number): Buffer {
    if (this.at + size > this.chunk.byteLength) {
      this.chunk = Buffer.alloc(Math.max(this.chunkSize, size));
      this.at = 0;
    }
    const out = this.chunk.subarray(this.at, this.at + size);
    this.at += size;
    return out;
  }
}

/**
 * The JSON text of an item, one per item and none per entry: UTF-8 bytes in the arena when there is one (the RPC
 * layer splices text and bytes alike), else a string.
 */
function itemJson(
  index: CorpusIndex,
  records: readonly number[],
  token: string | undefined,
  arena: ByteArena | undefined,
): string | Buffer {
  const tokenText = token ? `"next_page_token":${JSON.stringify(token)}` : '';
  let size = 2 + Buffer.byteLength(tokenText);
  if (records.length > 0) {
    size += JSON_VULNS.length - 1 + 1 + (tokenText === '' ? 0 : 1) + records.length - 1;
    for (const rec of records)
      size +=
        JSON_ID.length +
        index.ids.byteLength(rec) +
        JSON_MODIFIED.length +
        index.strings.byteLength(index.recModified[rec]!) +
        JSON_ENTRY_END.length;
  }
  if (records.length === 0) return `{${tokenText}}`;
  const out = arena === undefined ? Buffer.allocUnsafe(size) : arena.take(size);
  let at = 0;
  at += JSON_VULNS.copy(out, at);
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!;
    if (i > 0) out[at++] = 0x2c;
    at += JSON_ID.copy(out, at);
    at = index.ids.copyTo(rec, out, at);
    at += JSON_MODIFIED.copy(out, at);
    at = index.strings.copyTo(index.recModified[rec]!, out, at);
    at += JSON_ENTRY_END.copy(out, at);
  }
  out[at++] = 0x5d;
  if (tokenText !== '') {
    out[at++] = 0x2c;
    at += out.write(tokenText, at);
  }
  out[at++] = 0x7d;
  return arena === undefined ? out.toString('utf8', 0, at) : out.subarray(0, at);
}

/** Bytes of an entry's Timestamp message. */
function timestampSize(seconds: number, nanos: number): number {
  return (seconds === 0 ? 0 : TAG_SIZE.seconds + varintSize(seconds)) + (nanos === 0 ? 0 : TAG_SIZE.nanos + varintSize(nanos));
}

/** Bytes of an entry's Vulnerability message (`id`, `modified`). */
function innerSize(idLength: number, tsSize: number): number {
  return TAG_SIZE.id + varintSize(idLength) + idLength + TAG_SIZE.modified + varintSize(tsSize) + tsSize;
}

function itemWire(index: CorpusIndex, records: readonly number[], token: string | undefined, arena: ByteArena | undefined): Uint8Array {
  // Sizes are computed twice (once to size the buffer, once to write), with no object per entry.
  const tokenBytes = token ? Buffer.from(token, 'utf8') : undefined;
  let size = tokenBytes === undefined ? 0 : TAG_SIZE_TOKEN + varintSize(tokenBytes.length) + tokenBytes.length;
  for (const rec of records) {
    const inner = innerSize(index.ids.byteLength(rec), timestampSize(index.recSeconds[rec]!, index.recNanos[rec]!));
    size += TAG_SIZE_VULNS + varintSize(inner) + inner;
  }
  const out = arena === undefined ? new Uint8Array(size) : arena.take(size);
  let at = 0;
  for (const rec of records) {
    const seconds = index.recSeconds[rec]!;
    const nanos = index.recNanos[rec]!;
    const idLength = index.ids.byteLength(rec);
    const tsSize = timestampSize(seconds, nanos);
    at = writeVarint(out, at, (FIELD.vulns << 3) | WireType.LengthDelimited);
    at = writeVarint(out, at, innerSize(idLength, tsSize));
    at = writeVarint(out, at, (FIELD.id << 3) | WireType.LengthDelimited);
    at = writeVarint(out, at, idLength);
    at = index.ids.copyTo(rec, out, at);
    at = writeVarint(out, at, (FIELD.modified << 3) | WireType.LengthDelimited);
    at = writeVarint(out, at, tsSize);
    if (seconds !== 0) {
      at = writeVarint(out, at, (FIELD.seconds << 3) | WireType.Varint);
      at = writeVarint(out, at, seconds);
    }
    if (nanos !== 0) {
      at = writeVarint(out, at, (FIELD.nanos << 3) | WireType.Varint);
      at = writeVarint(out, at, nanos);
    }
  }
  if (tokenBytes !== undefined) {
    at = writeVarint(out, at, (FIELD.token << 3) | WireType.LengthDelimited);
    at = writeVarint(out, at, tokenBytes.length);
    out.set(tokenBytes, at);
  }
  return out;
}

const TAG_SIZE_VULNS = varintSize(FIELD.vulns << 3);
const TAG_SIZE_TOKEN = varintSize(FIELD.token << 3);
