/**
 * `npm run bench:grpc`: unary round trips per second and p50/p99 latency of PlatformDocuments over gRPC and over
 * its HTTP mapping, next to a no-op RPC (the test-only PlatformTesting/Ping) on the same server and pipeline
 * (authentication included) as the baseline. Scenarios: ListDocuments with one page of 100 small documents, and
 * CreateDocument of 16 kB. SQLite in a temp dir; about 25 seconds in all.
 *
 * For stable ratios every scenario is warmed up first (all of them, before any is measured, so that the JIT and the
 * connections are in the same state for each), then measured in three rounds, the scenarios interleaved within a
 * round; each figure printed is the median of its three samples.
 *
 * BENCH_SECONDS (default 1) is the measuring time per sample; BENCH_CONCURRENCY (default 1) the calls in flight;
 * BENCH_WARMUP_MS (default 500) the warm-up per scenario.
 *
 * Last, the one codec figure of the documents path (docs/grpc.md, "The codecs"): an 8 MiB Document written as JSON
 * by the generated codec's `toJson` alone and by the RPC layer's `messageToJson` (native base64 for bytes fields).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { create, toJson } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import { JSON_WRITE, messageToJson } from '../src/grpc/codec.ts';
import { DocumentSchema } from '../src/grpc/generated/es/platform/v1/documents_pb.ts';
import type { ListDocumentsResponse__Output } from '../src/grpc/generated/platform/v1/ListDocumentsResponse.ts';
import { bearer, grpcCall, startGrpcTestPlatform } from '../test/grpc/grpc-support.ts';
import { timeCalls, type CallTimings } from './stats.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '1');
const CONCURRENCY = Math.max(1, Number(process.env.BENCH_CONCURRENCY ?? '1'));
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? '500');
const ROUNDS = 3;

interface Scenario {
  scenario: string;
  transport: 'grpc' | 'http';
  call: () => Promise<void>;
}

interface Result {
  scenario: string;
  transport: 'grpc' | 'http';
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function warmUp(call: () => Promise<void>): Promise<void> {
  const end = performance.now() + WARMUP_MS;
  while (performance.now() < end) await call();
}

function sample(call: () => Promise<void>): Promise<CallTimings> {
  return timeCalls(call, SECONDS, CONCURRENCY);
}

/** Warms every scenario up, then measures all of them ROUNDS times (interleaved) and keeps each metric's median. */
async function run(scenarios: readonly Scenario[]): Promise<Result[]> {
  for (const s of scenarios) await warmUp(s.call);
  const samples = scenarios.map((): CallTimings[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, s] of scenarios.entries()) samples[i]?.push(await sample(s.call));
  }
  return scenarios.map((s, i) => {
    const taken = samples[i] ?? [];
    return {
      scenario: s.scenario,
      transport: s.transport,
      calls: median(taken.map((x) => x.calls)),
      perSecond: median(taken.map((x) => x.perSecond)),
      p50: median(taken.map((x) => x.p50)),
      p99: median(taken.map((x) => x.p99)),
    };
  });
}

async function httpCall(url: string, init: RequestInit): Promise<void> {
  const response = await fetch(url, init);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`HTTP ${response.status} from ${url}`);
}

async function main(): Promise<void> {
  const p = await startGrpcTestPlatform('sqlite');
  try {
    const token = p.platform.owner.platform_token;
    const md = bearer(token);
    const loaded = grpc.loadPackageDefinition(p.protos.packageDefinition) as unknown as {
      platform: { testing: { v1: { PlatformTesting: grpc.ServiceClientConstructor } } };
    };
    const testing = new loaded.platform.testing.v1.PlatformTesting(p.grpcAddress, grpc.credentials.createInsecure());
    const documents = p.documentsClient();
    const ping = (
      testing as unknown as { Ping: (r: object, m: grpc.Metadata, cb: grpc.requestCallback<object>) => grpc.ClientUnaryCall }
    ).Ping.bind(testing);

    // One organization with exactly 100 small documents for the list scenario; creates go to another one.
    const listOrg = await p.platform.ctx.identity.bootstrap({ accountName: 'bench-list', email: `bench-list-${Date.now()}@example.test` });
    const listMd = bearer(listOrg.platform_token);
    const small = () => ({
      ciphertext: randomBytes(256),
      encryption: { algorithm: 'A256GCM-HKDF-SHA256/v1', key_id: 'bench', nonce: randomBytes(12) },
      encrypted_metadata: randomBytes(48),
    });
    for (let i = 0; i < 100; i++) await grpcCall((cb) => documents.CreateDocument(small(), listMd, cb));

    const doc16k = {
      ciphertext: randomBytes(16 * 1024),
      encryption: { algorithm: 'A256GCM-HKDF-SHA256/v1', key_id: 'bench', nonce: randomBytes(12) },
      encrypted_metadata: randomBytes(48),
    };
    const doc16kJson = JSON.stringify({
      ciphertext: doc16k.ciphertext.toString('base64'),
      encryption: {
        algorithm: doc16k.encryption.algorithm,
        key_id: doc16k.encryption.key_id,
        nonce: doc16k.encryption.nonce.toString('base64'),
      },
      encrypted_metadata: doc16k.encrypted_metadata.toString('base64'),
    });
    const jsonHeaders = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const results = await run([
      { scenario: 'no-op (Ping)', transport: 'grpc', call: async () => void (await grpcCall((cb) => ping({ text: 'x' }, md, cb))) },
      {
        scenario: 'no-op (Ping)',
        transport: 'http',
        call: () => httpCall(`${p.restUrl}/platform/testing/v1/ping`, { method: 'POST', headers: jsonHeaders, body: '{"text":"x"}' }),
      },
      {
        scenario: 'ListDocuments (100 docs)',
        transport: 'grpc',
        call: async () => {
          const page = await grpcCall<ListDocumentsResponse__Output>((cb) => documents.ListDocuments({ page_size: 100 }, listMd, cb));
          if (page.documents?.length !== 100) throw new Error('expected a page of 100');
        },
      },
      {
        scenario: 'ListDocuments (100 docs)',
        transport: 'http',
        call: () =>
          httpCall(`${p.restUrl}/platform/v1/documents?page_size=100`, { headers: { authorization: `Bearer ${listOrg.platform_token}` } }),
      },
      {
        scenario: 'CreateDocument (16 kB)',
        transport: 'grpc',
        call: async () => void (await grpcCall((cb) => documents.CreateDocument(doc16k, md, cb))),
      },
      {
        scenario: 'CreateDocument (16 kB)',
        transport: 'http',
        call: () => httpCall(`${p.restUrl}/platform/v1/documents`, { method: 'POST', headers: jsonHeaders, body: doc16kJson }),
      },
    ]);
    testing.close();

    const baseline = (transport: 'grpc' | 'http') =>
      results.find((r) => r.scenario.startsWith('no-op') && r.transport === transport) as Result;
    const other = (r: Result) => results.find((x) => x.scenario === r.scenario && x.transport !== r.transport) as Result;
    console.log(
      `\nPlatform RPC benchmark: median of ${ROUNDS} samples of ${SECONDS}s per scenario (after ${WARMUP_MS} ms warm-up each), concurrency ${CONCURRENCY}, SQLite, Node ${process.version}\n`,
    );
    console.log(
      [
        'scenario'.padEnd(26),
        'transport',
        'calls'.padStart(7),
        'calls/s'.padStart(9),
        'p50 ms'.padStart(8),
        'p99 ms'.padStart(8),
        'vs no-op'.padStart(9),
        'grpc/http'.padStart(10),
      ].join('  '),
    );
    for (const r of results) {
      const vsNoop = baseline(r.transport).perSecond / r.perSecond;
      const grpcOverHttp = r.transport === 'grpc' ? r.perSecond / other(r).perSecond : NaN;
      console.log(
        [
          r.scenario.padEnd(26),
          r.transport.padEnd(9),
          String(r.calls).padStart(7),
          r.perSecond.toFixed(0).padStart(9),
          r.p50.toFixed(2).padStart(8),
          r.p99.toFixed(2).padStart(8),
          `${vsNoop.toFixed(2)}x`.padStart(9),
          (Number.isNaN(grpcOverHttp) ? '' : `${grpcOverHttp.toFixed(2)}x`).padStart(10),
        ].join('  '),
      );
    }
    console.log('\n"vs no-op": no-op calls/s divided by this scenario\'s calls/s on the same transport (the cost of the RPC\'s own work).');
    console.log('"grpc/http": gRPC calls/s divided by HTTP-mapping calls/s for the same scenario (above 1: gRPC is faster).');
  } finally {
    await p.close();
  }
}

/** Median wall time in ms of `runs` calls of `fn`. */
function medianMs(runs: number, fn: () => unknown): number {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(runs / 2)] as number;
}

function codecFigure(): void {
  const document = create(DocumentSchema, {
    id: 'd',
    creatorId: 'h',
    sizeBytes: 8n << 20n,
    ciphertext: randomBytes(8 << 20),
    encryption: { algorithm: 'A256GCM', nonce: randomBytes(12) },
    createTime: timestampFromMs(Date.now()),
  });
  const generated = medianMs(3, () => toJson(DocumentSchema, document, JSON_WRITE));
  const native = medianMs(3, () => messageToJson(DocumentSchema, document));
  console.log(
    `\nDocument of 8 MiB to JSON: generated toJson ${generated.toFixed(0)} ms, messageToJson (native base64) ${native.toFixed(0)} ms (median of 3)`,
  );
}

await main();
codecFigure();
