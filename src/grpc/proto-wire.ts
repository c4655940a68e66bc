import protobuf from 'protobufjs';
import type { CanonicalObject, CanonicalValue } from './proto-json.ts';

/**
 * A protobuf wire encoder for canonical JSON, compiled once per message type: one pass measures every message and
 * string, a second writes into a single buffer of the exact size. protobufjs's `Writer` keeps a linked list of
 * operations and forks per nested message, which for a QueryBatch answer (tens of thousands of records, each with
 * a Timestamp) costs several times what the bytes do. Kinds outside the hot path (Struct/Value/ListValue, floats,
 * zigzag and fixed-width integers, repeated numbers, maps) are delegated per subtree to `fallback`, which encodes
 * them with protobufjs; the output is byte for byte what protobufjs writes (fields in number order).
 */
export interface WireEncoderDeps {
  /** Encodes a subtree the wire encoder does not handle itself (with protobufjs). */
  fallback: (type: protobuf.Type, value: CanonicalValue) => Uint8Array;
  /** A canonical timestamp as seconds since the epoch and nanos (the codec owns timestamp parsing). */
  timestamp: (text: string) => { seconds: number; nanos: number };
}

type Kind = 'string' | 'bytes' | 'bool' | 'int32' | 'uint32' | 'int64' | 'enum' | 'message' | 'timestamp';

interface WireField {
  name: string;
  /** The field key (number and wire type) as varint bytes. */
  key: number[];
  kind: Kind;
  repeated: boolean;
  type: protobuf.Type | undefined;
  values: Record<string, number> | undefined;
}

interface WirePlan {
  /** Fields in number order; undefined when the type is encoded by the fallback. */
  fields: WireField[] | undefined;
  type: protobuf.Type;
}

/** A non-negative integer below 2^53 as varint bytes. */
export function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n >= 128) {
    out.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** How many bytes the varint of a non-negative integer below 2^53 takes. */
export function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** A signed or string integer as the unsigned 64-bit value a varint carries (two's complement for negatives). */
function toUint64(value: number | string): bigint {
  return BigInt.asUintN(64, BigInt(value));
}

function bigVarintSize(n: bigint): number {
  let size = 1;
  while (n >= 128n) {
    n >>= 7n;
    size++;
  }
  return size;
}

/**
 * UTF-8 length of a string; short ASCII strings (ids, versions, URLs: most of an OSV answer) are measured in JS,
 * which is cheaper than a call into the runtime.
 */
function utf8Length(text: string): number {
  if (text.length > 64) return Buffer.byteLength(text, 'utf8');
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 128) return Buffer.byteLength(text, 'utf8');
  return text.length;
}

const WIRE_VARINT = 0;
const WIRE_LENGTH = 2;

/** Builds the encoder; plans are compiled on first use of each message type and kept. */
export function createWireEncoder({ fallback, timestamp }: WireEncoderDeps): (type: protobuf.Type, value: CanonicalObject) => Uint8Array {
  const plans = new Map<protobuf.Type, WirePlan>();

  function plan(t: protobuf.Type): WirePlan {
    let p = plans.get(t);
    if (p) return p;
    p = { type: t, fields: [] };
    plans.set(t, p);
    const name = t.fullName.replace(/^\./, '');
    const fields: WireField[] = [];
    for (const f of [...t.fieldsArray].sort((a, b) => a.id - b.id)) {
      const rt = f.resolvedType;
      let kind: Kind | undefined;
      if (rt instanceof protobuf.Type) kind = rt.fullName === '.google.protobuf.Timestamp' ? 'timestamp' : 'message';
      else if (rt instanceof protobuf.Enum) kind = 'enum';
      else if (f.type === 'string' || f.type === 'bytes' || f.type === 'bool' || f.type === 'int32' || f.type === 'uint32' || f.type === 'int64' || f.type === 'uint64') kind = f.type === 'uint64' ? 'int64' : f.type;
      // Anything else (and repeated numbers, which proto3 packs, and maps) goes to protobufjs.
      if (!kind || f.map || (f.repeated && kind !== 'string' && kind !== 'bytes' && kind !== 'message' && kind !== 'timestamp')) {
        p.fields = undefined;
        return p;
      }
      const wireType = kind === 'string' || kind === 'bytes' || kind === 'message' || kind === 'timestamp' ? WIRE_LENGTH : WIRE_VARINT;
      fields.push({
        name: f.name,
        key: varintBytes(f.id * 8 + wireType),
        kind,
        repeated: f.repeated,
        type: rt instanceof protobuf.Type ? rt : undefined,
        values: rt instanceof protobuf.Enum ? rt.values : undefined,
      });
    }
    // Well-known types with a JSON form of their own (Struct, Value, ListValue) take the fallback; a Timestamp
    // field is written inline (kind `timestamp`), so its plan serves only a Timestamp at the top, also by fallback.
    if (name.startsWith('google.protobuf.')) p.fields = undefined;
    else p.fields = fields;
    return p;
  }

  return (type, value) => {
    // Pass 1 pushes, in pre-order, the size of every nested message and string and each fallback's bytes.
    const sizes: number[] = [];
    const blobs: Uint8Array[] = [];
    const timestamps: { seconds: number; nanos: number }[] = [];

    function timestampSize(text: string): number {
      const parts = timestamp(text);
      timestamps.push(parts);
      let size = 0;
      if (parts.seconds !== 0) size += 1 + (parts.seconds > 0 ? varintSize(parts.seconds) : 10);
      if (parts.nanos !== 0) size += 1 + varintSize(parts.nanos);
      return size;
    }

    function scalarSize(field: WireField, v: CanonicalValue): number {
      switch (field.kind) {
        case 'string': {
          const n = utf8Length(v as string);
          sizes.push(n);
          return varintSize(n) + n;
        }
        case 'bytes': {
          const n = Buffer.isBuffer(v) ? v.length : Buffer.byteLength(v as string, 'base64');
          return varintSize(n) + n;
        }
        case 'bool':
          return 1;
        case 'enum': {
          const n = typeof v === 'string' ? (field.values?.[v] ?? 0) : (v as number);
          return n >= 0 ? varintSize(n) : 10;
        }
        case 'int32':
        case 'uint32':
          return (v as number) >= 0 ? varintSize(v as number) : 10;
        case 'int64':
          return bigVarintSize(toUint64(v as string | number));
        case 'timestamp': {
          const n = timestampSize(v as string);
          sizes.push(n);
          return varintSize(n) + n;
        }
        case 'message': {
          const n = messageSize(plan(field.type as protobuf.Type), v);
          return varintSize(n) + n;
        }
      }
    }

    function messageSize(p: WirePlan, v: CanonicalValue): number {
      const at = sizes.length;
      sizes.push(0);
      let size = 0;
      if (!p.fields) {
        const bytes = fallback(p.type, v);
        blobs.push(bytes);
        size = bytes.length;
      } else {
        const object = v as CanonicalObject;
        for (const field of p.fields) {
          const x = object[field.name];
          if (x === undefined || x === null) continue;
          if (field.repeated) {
            for (const item of x as CanonicalValue[]) size += field.key.length + scalarSize(field, item);
          } else {
            size += field.key.length + scalarSize(field, x);
          }
        }
      }
      sizes[at] = size;
      return size;
    }

    const total = messageSize(plan(type), value);
    const buffer = Buffer.allocUnsafe(total);
    let pos = 0;
    let sizeAt = 0;
    let blobAt = 0;
    let timestampAt = 0;

    function writeVarint(n: number): void {
      while (n >= 128) {
        buffer[pos++] = (n % 128) | 128;
        n = Math.floor(n / 128);
      }
      buffer[pos++] = n;
    }
    function writeBigVarint(n: bigint): void {
      while (n >= 128n) {
        buffer[pos++] = Number(n & 127n) | 128;
        n >>= 7n;
      }
      buffer[pos++] = Number(n);
    }
    function writeSigned(n: number): void {
      if (n >= 0) writeVarint(n);
      else writeBigVarint(toUint64(n));
    }

    function writeScalar(field: WireField, v: CanonicalValue): void {
      for (const b of field.key) buffer[pos++] = b;
      switch (field.kind) {
        case 'string': {
          const n = sizes[sizeAt++] as number;
          const text = v as string;
          writeVarint(n);
          if (n === text.length && n <= 64) {
            // ASCII (the length in bytes equals the length in UTF-16 units only then for a short string).
            for (let i = 0; i < n; i++) buffer[pos++] = text.charCodeAt(i);
          } else {
            pos += buffer.write(text, pos, n, 'utf8');
          }
          return;
        }
        case 'bytes': {
          const bytes = Buffer.isBuffer(v) ? v : Buffer.from(v as string, 'base64');
          writeVarint(bytes.length);
          bytes.copy(buffer, pos);
          pos += bytes.length;
          return;
        }
        case 'bool':
          buffer[pos++] = v ? 1 : 0;
          return;
        case 'enum':
          writeSigned(typeof v === 'string' ? (field.values?.[v] ?? 0) : (v as number));
          return;
        case 'int32':
        case 'uint32':
          writeSigned(v as number);
          return;
        case 'int64':
          writeBigVarint(toUint64(v as string | number));
          return;
        case 'timestamp': {
          writeVarint(sizes[sizeAt++] as number);
          const { seconds, nanos } = timestamps[timestampAt++] as { seconds: number; nanos: number };
          if (seconds !== 0) {
            buffer[pos++] = 8;
            writeSigned(seconds);
          }
          if (nanos !== 0) {
            buffer[pos++] = 16;
            writeVarint(nanos);
          }
          return;
        }
        case 'message':
          writeMessage(plan(field.type as protobuf.Type), v, true);
          return;
      }
    }

    function writeMessage(p: WirePlan, v: CanonicalValue, withLength: boolean): void {
      const size = sizes[sizeAt++] as number;
      if (withLength) writeVarint(size);
      if (!p.fields) {
        const bytes = blobs[blobAt++] as Uint8Array;
        buffer.set(bytes, pos);
        pos += bytes.length;
        return;
      }
      const object = v as CanonicalObject;
      for (const field of p.fields) {
        const x = object[field.name];
        if (x === undefined || x === null) continue;
        if (field.repeated) for (const item of x as CanonicalValue[]) writeScalar(field, item);
        else writeScalar(field, x);
      }
    }

    writeMessage(plan(type), value, false);
    if (pos !== total) throw new Error(`wire encoder wrote ${pos} bytes of ${total}`);
    return buffer;
  };
}
