// `npx tsx bench/grpc-codec.bench.ts`: the transport cost of a QueryBatch(1000)-sized answer (25,000 `{id, modified}`
// entries) and of a full Query answer, through the proto3 JSON codec, next to JSON.stringify. Prints figures only.
import { performance } from 'node:perf_hooks';
import { loadProtos } from '../src/grpc/protos.ts';

const protos = loadProtos();
const { codec } = protos;
const osv = protos.services.get('platform.v1.PlatformOSV');
const batch = osv?.get('QueryBatch');
if (!batch) throw new Error('QueryBatch is not loaded');
const serializer = (batch.definition).responseSerialize;
const deserializer = (batch.definition).responseDeserialize;

const results = Array.from({ length: 1000 }, (_r, i) => ({
  vulns: Array.from({ length: 25 }, (_v, j) => ({ id: `GHSA-${String(i).padStart(4, '0')}-${String(j).padStart(4, '0')}-xxxx`, modified: `2024-0${(j % 9) + 1}-1${j % 10}T0${j % 10}:12:34.${String(i % 1000).padStart(3, '0')}Z` })),
}));
const response = { results };

function time(label: string, runs: number, fn: () => unknown): void {
  for (let i = 0; i < 2; i++) fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label.padEnd(48)} p50 ${ms[Math.floor(runs / 2)]?.toFixed(2)} ms  min ${ms[0]?.toFixed(2)} ms`);
}

const type = batch.responseType;
time('JSON.stringify(response)', 10, () => JSON.stringify(response));
time('HTTP: fromJson(drop, base64) + stringify', 10, () => JSON.stringify(codec.fromJson(type, response, { unknownFields: 'drop', where: 'response', bytes: 'base64' })));
const canonical = codec.fromJson(type, response, { unknownFields: 'drop', where: 'response', bytes: 'buffer' });
time('gRPC: fromJson(drop, buffer)', 10, () => codec.fromJson(type, response, { unknownFields: 'drop', where: 'response', bytes: 'buffer' }));
time('gRPC: toProto', 10, () => codec.toProto(type, canonical));
const proto = codec.toProto(type, canonical);
time('gRPC: serialize (proto-loader)', 10, () => serializer(proto));
const wire = serializer(proto);
time('gRPC: deserialize + fromProto (client-ish)', 10, () => codec.fromProto(type, deserializer(wire) as Record<string, unknown>));
console.log(`wire ${wire.length} bytes, JSON ${JSON.stringify(response).length} bytes`);
time('gRPC: encode (one pass, what the server sends)', 10, () => codec.encode(type, canonical));
const direct = Buffer.from(codec.encode(type, canonical));
// Not byte-equal: proto-loader also writes `nanos: 0`, which the one-pass encoder leaves out as proto3 does.
const same = JSON.stringify(codec.fromProto(type, deserializer(direct) as Record<string, unknown>)) === JSON.stringify(canonical);
console.log(`encode reads back as the same message: ${same} (${direct.length} bytes)`);
