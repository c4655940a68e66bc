// `npx tsx bench/grpc-codec.bench.ts`: the transport cost of a QueryBatch(1000)-sized answer (25,000 `{id, modified}`
// entries) through the generated codec (@bufbuild/protobuf), next to JSON.stringify. Prints figures only.
import { performance } from 'node:perf_hooks';
import { fromBinary, toBinary, toJsonString } from '@bufbuild/protobuf';
import { JSON_WRITE, responseFromJson } from '../src/grpc/codec.ts';
import { BatchVulnerabilityListSchema, type BatchVulnerabilityList } from '../src/grpc/generated/es/platform/v1/osv_pb.ts';

const results = Array.from({ length: 1000 }, (_r, i) => ({
  vulns: Array.from({ length: 25 }, (_v, j) => ({
    id: `GHSA-${String(i).padStart(4, '0')}-${String(j).padStart(4, '0')}-xxxx`,
    modified: `2024-0${(j % 9) + 1}-1${j % 10}T0${j % 10}:12:34.${String(i % 1000).padStart(3, '0')}Z`,
  })),
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

const read = () => responseFromJson(BatchVulnerabilityListSchema, response, false) as BatchVulnerabilityList;
time('JSON.stringify(response)', 10, () => JSON.stringify(response));
time("read the handler's JSON (fromJson)", 10, read);
const message = read();
time('HTTP: toJsonString', 10, () => toJsonString(BatchVulnerabilityListSchema, message, JSON_WRITE));
time('gRPC: toBinary', 10, () => toBinary(BatchVulnerabilityListSchema, message));
const wire = toBinary(BatchVulnerabilityListSchema, message);
time('client: fromBinary', 10, () => fromBinary(BatchVulnerabilityListSchema, wire));
console.log(`wire ${wire.length} bytes, JSON ${JSON.stringify(response).length} bytes`);
