/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON; the assertions pin their shape */
// Issue 16 item 7: the per-credential request rate and concurrent-stream limits, over real HTTP through
// POST /agent_api/v1/inference_requests and through two model planes on separate connections (two replicas), with
// the database backend (SQLite and PostgreSQL) and the Redis backend. A refused call reaches no upstream and writes
// no usage row.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminTables } from '../../src/admin/admin.table.ts';
import { createInferenceLimiter, type InferenceLimiter } from '../../src/admin/inference/inference.limits.ts';
import { LIMITS_SWEEP_MS } from '../../src/admin/inference/inference.limits.db.ts';
import type { InferenceCaller, InferenceRequest } from '../../src/admin/inference/inference.types.ts';
import { createModelPlane, type ModelPlane } from '../../src/admin/model-plane.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/admin/upstream/upstream-client.ts';
import type { PlatformDatabase } from '../../src/app/database.ts';
import { fakeClock } from '../../src/core/clock.ts';
import { AppError } from '../../src/core/errors.ts';
import { narrowTables, openDatabase, type DatabaseHandle } from '../../src/core/db/database.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { REDIS_URL, redisAvailable } from '../../src/mcp/mcp.testkit.ts';
import { dialects } from '../support/databases.ts';
import { addHuman } from './admin-harness.ts';
import { openProviderStandins, type ProviderStandins } from './provider-standins.ts';

const MODEL = 'openai/gpt-4.1';
const PATH = '/agent_api/v1/inference_requests';
const USER = [{ role: 'user' as const, content: 'Say ok.' }];
const hasRedis = await redisAvailable();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits out the last seconds of a wall-clock minute, so a fixed window cannot roll over inside a test. */
async function awayFromMinuteEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await sleep(left + 50);
}

/** The refusal an in-process call throws, with its Retry-After in seconds. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; retryAfter: number }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { code: error.code, retryAfter: Number(error.headers?.['retry-after']) };
}

describe.each(dialects)('inference limits on %s', (dialect) => {
  let f: ProviderStandins;
  beforeAll(async () => {
    f = await openProviderStandins(dialect, {
      env: { PLATFORM_INFERENCE_RATE_PER_MINUTE: '3', PLATFORM_INFERENCE_MAX_STREAMS: '1' },
      standin: { reply: 'GENERATED-TEXT' },
    });
  });
  afterAll(async () => f.close());

  const db = () => f.h.platform.ctx.database.db;
  const usageRows = async (credentialId: string) =>
    Number(
      (await sql<{ n: number }>`select count(*) as n from inference_usage where credential_id = ${credentialId}`.execute(db())).rows[0]?.n,
    );

  describe('over HTTP (PLATFORM_INFERENCE_RATE_PER_MINUTE=3, PLATFORM_INFERENCE_MAX_STREAMS=1)', () => {
    it('refuses the fourth request of a credential in a minute with 429 and Retry-After, before any upstream request', async () => {
      const human = await addHuman(f.h, 'member');
      f.standins.openai.reset();
      await awayFromMinuteEdge();
      for (let i = 0; i < 3; i++) {
        const ok = await f.h.call('POST', PATH, { token: human.member, body: { model: MODEL, messages: USER } });
        expect(ok.status, ok.text).toBe(200);
      }
      const refused = await f.h.call('POST', PATH, { token: human.member, body: { model: MODEL, messages: USER } });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((60_000 - (Date.now() % 60_000)) / 1000));
      expect(f.standins.openai.requests).toHaveLength(3);
      // The other token of the same Human is another credential, with its own window.
      const other = await f.h.call('POST', PATH, { token: human.executor, body: { model: MODEL, messages: USER } });
      expect(other.status, other.text).toBe(200);
      expect(f.standins.openai.requests).toHaveLength(4);
      const { rows } = await sql<{ credential_id: string; n: number }>`
        select credential_id, count(*) as n from inference_usage where human_id = ${human.humanId} group by credential_id
      `.execute(db());
      // Three rows for the limited token (the refusal wrote none), one for the executor token.
      expect(rows.map((r) => Number(r.n)).sort()).toEqual([1, 3]);
    });

    it('refuses a second concurrent stream of a credential, and frees the slot when the first one ends', async () => {
      const human = await addHuman(f.h, 'member');
      f.standins.openai.reset();
      f.standins.openai.delay(600, { phase: 'body' });
      const first = f.h.call('POST', PATH, { token: human.member, body: { model: MODEL, messages: USER, stream: true } });
      await sleep(250);
      const second = await f.h.call('POST', PATH, { token: human.member, body: { model: MODEL, messages: USER, stream: true } });
      expect(second.status).toBe(429);
      expect(second.body.error.code).toBe('rate_limited');
      expect(second.headers.get('retry-after')).toBe('1');
      expect((await first).status).toBe(200);
      expect(f.standins.openai.requests).toHaveLength(1);
      f.standins.openai.delay(0);
      const third = await f.h.call('POST', PATH, { token: human.member, body: { model: MODEL, messages: USER, stream: true } });
      expect(third.status, third.text).toBe(200);
      expect(f.standins.openai.requests).toHaveLength(2);
    });

    it('frees the stream slot when the client disconnects mid-stream', async () => {
      const human = await addHuman(f.h, 'member');
      f.standins.openai.reset();
      f.standins.openai.delay(3_000, { phase: 'body' });
      const controller = new AbortController();
      const response = await fetch(`${f.h.url}${PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${human.executor}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: USER, stream: true }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      await response.body!.getReader().read();
      controller.abort();
      let settled = false;
      for (let i = 0; i < 60 && !settled; i++) {
        await sleep(50);
        const { rows } = await sql<{ outcome: string }>`select outcome from inference_usage where human_id = ${human.humanId}`.execute(
          db(),
        );
        settled = rows.some((r) => r.outcome === 'aborted');
      }
      expect(settled).toBe(true);
      f.standins.openai.delay(0);
      const next = await f.h.call('POST', PATH, { token: human.executor, body: { model: MODEL, messages: USER, stream: true } });
      expect(next.status, next.text).toBe(200);
    });
  });

  it('sweeps rate rows of past minutes and expired stream slots every LIMITS_SWEEP_MS, keeping the current ones', async () => {
    const clock = fakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const conn: Kysely<AdminTables> = narrowTables(db());
    const limiter = createInferenceLimiter({
      db: conn,
      clock,
      log: silentLogger(),
      ratePerMinute: 5,
      maxStreams: 2,
      inferenceTimeoutMs: 1_000,
    });
    const [gone, kept] = [`sweep-gone-${randomUUID()}`, `sweep-kept-${randomUUID()}`];
    await limiter.admitRequest(gone);
    await limiter.openStream(gone); // never released: its holder "crashed"
    const rows = async (table: 'inference_rate_windows' | 'inference_stream_slots', credentialId: string) =>
      (await conn.selectFrom(table).select('credential_id').where('credential_id', '=', credentialId).execute()).length;
    expect([await rows('inference_rate_windows', gone), await rows('inference_stream_slots', gone)]).toEqual([1, 1]);
    clock.advance(LIMITS_SWEEP_MS);
    await limiter.admitRequest(kept);
    // The sweep runs in the background, one table after the other: wait for both deletes.
    const leftover = async () => (await rows('inference_rate_windows', gone)) + (await rows('inference_stream_slots', gone));
    for (let i = 0; i < 80 && (await leftover()) > 0; i++) await sleep(25);
    expect(await rows('inference_rate_windows', gone)).toBe(0);
    expect(await rows('inference_stream_slots', gone)).toBe(0);
    expect(await rows('inference_rate_windows', kept)).toBe(1);
  });

  /** Two replicas: the harness's plane connection and a second connection, each with its own plane and limiter. */
  const backends = [
    { name: 'the database', redis: false },
    { name: 'Redis', redis: true },
  ] as const;
  for (const backend of backends) {
    describe.skipIf(backend.redis && !hasRedis)(`two replicas sharing the limits through ${backend.name}`, () => {
      const clock = fakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
      const prefix = `test:limits:${randomUUID()}:`;
      let second: DatabaseHandle<PlatformDatabase>;
      let upstream: UpstreamClient;
      const redisClients: Redis[] = [];
      let planes: ModelPlane[];
      let limiters: InferenceLimiter[];
      let human: Awaited<ReturnType<typeof addHuman>>;
      const caller = (credentialId: string): InferenceCaller => ({ accountId: f.h.accountId, humanId: human.humanId, credentialId });
      const request = (stream = false): InferenceRequest => ({
        models: [MODEL],
        input: { workload: 'text_generation', messages: USER, stream },
      });

      beforeAll(async () => {
        human = await addHuman(f.h, 'member');
        second = await openDatabase<PlatformDatabase>(f.h.platform.database.url);
        upstream = createUpstreamClient({ allowPrivate: true });
        const ctx = f.h.platform.ctx;
        const connections: Kysely<AdminTables>[] = [narrowTables(ctx.database.db), narrowTables(second.db)];
        limiters = connections.map((conn) => {
          const redis = backend.redis ? new Redis(REDIS_URL) : undefined;
          if (redis) redisClients.push(redis);
          return createInferenceLimiter({
            db: conn,
            clock,
            log: silentLogger(),
            redis,
            keyPrefix: prefix,
            ratePerMinute: 3,
            maxStreams: 2,
            inferenceTimeoutMs: 120_000,
          });
        });
        planes = connections.map((conn, i) =>
          createModelPlane({
            db: conn,
            dialect: ctx.database.dialect,
            clock: ctx.clock,
            log: silentLogger(),
            secretKeys: ctx.secretKeys,
            catalogDir: ctx.config.admin.PLATFORM_CATALOG_DIR,
            upstream,
            inferenceLimiter: limiters[i]!,
          }),
        );
      });
      afterAll(async () => {
        for (const redis of redisClients) redis.disconnect();
        await upstream.close();
        await second.close();
      });

      it('counts one window per credential across both replicas, refuses with a sane Retry-After, reopens next minute', async () => {
        const [a, b] = planes as [ModelPlane, ModelPlane];
        const signal = new AbortController().signal;
        const one = `cred-${randomUUID()}`;
        const two = `cred-${randomUUID()}`;
        clock.set(Date.UTC(2026, 0, 1, 12, 1, 45));
        f.standins.openai.reset();
        f.standins.openai.delay(0);
        await a.infer(caller(one), request(), signal);
        await b.infer(caller(one), request(), signal);
        await a.infer(caller(one), request(), signal);
        for (const plane of [a, b]) {
          const refused = await refusal(plane.infer(caller(one), request(), signal));
          expect(refused).toEqual({ code: 'rate_limited', retryAfter: 15 });
        }
        expect(f.standins.openai.requests).toHaveLength(3);
        expect(await usageRows(one)).toBe(3);
        // Another credential has its own window.
        await b.infer(caller(two), request(), signal);
        expect(f.standins.openai.requests).toHaveLength(4);
        clock.advance(15_000);
        await b.infer(caller(one), request(), signal);
        expect(f.standins.openai.requests).toHaveLength(5);
      });

      it('admits exactly the allowance when many requests of one credential arrive at once on both replicas', async () => {
        // Concurrent requests of a credential are counted together (inference.limits.db.ts: group counting); a group
        // that does not fit falls back to one count each, so neither replica admits past the limit.
        const connections = [f.h.platform.ctx.database.db, second.db].map((db) => narrowTables<PlatformDatabase, AdminTables>(db));
        const pair = connections.map((db, i) =>
          createInferenceLimiter({
            db,
            clock,
            log: silentLogger(),
            redis: backend.redis ? redisClients[i] : undefined,
            keyPrefix: prefix,
            ratePerMinute: 20,
            maxStreams: 1,
            inferenceTimeoutMs: 120_000,
          }),
        );
        const outcomes = async (credentialId: string, each: number) =>
          Promise.all(
            pair.flatMap((limiter) =>
              Array.from({ length: each }, () =>
                limiter.admitRequest(credentialId).then(
                  () => 'admitted',
                  (e: unknown) => (e instanceof AppError ? e.code : String(e)),
                ),
              ),
            ),
          );
        clock.set(Date.UTC(2026, 0, 1, 12, 5, 10));
        const credentialId = `cred-${randomUUID()}`;
        // One request alone (the credential's first), then 2 x 7 that fit the allowance of 20 (each replica's seven
        // counted as one group), then 2 x 8 more, of which exactly 5 fit.
        await pair[0]!.admitRequest(credentialId);
        expect((await outcomes(credentialId, 7)).filter((o) => o === 'admitted')).toHaveLength(14);
        const last = await outcomes(credentialId, 8);
        expect(last.filter((o) => o === 'admitted')).toHaveLength(5);
        expect(last.filter((o) => o === 'rate_limited')).toHaveLength(11);
      });

      it('holds at most N streams per credential across replicas; a slot frees when its stream ends or is released', async () => {
        const [a, b] = planes as [ModelPlane, ModelPlane];
        const one = `cred-${randomUUID()}`;
        clock.set(Date.UTC(2026, 0, 1, 13, 0, 0));
        f.standins.openai.reset();
        f.standins.openai.delay(0);
        const first = await a.infer(caller(one), request(true), new AbortController().signal);
        const leaving = new AbortController();
        const secondStream = await b.infer(caller(one), request(true), leaving.signal);
        if (!('deltas' in first) || !('deltas' in secondStream)) throw new Error('expected streams');
        expect(await refusal(a.infer(caller(one), request(true), new AbortController().signal))).toEqual({
          code: 'rate_limited',
          retryAfter: 1,
        });
        expect(f.standins.openai.requests).toHaveLength(2);
        // The first stream read to its end: its slot is free (the minute's three requests are spent, so next minute).
        for await (const delta of first.deltas) void delta;
        await first.settled;
        clock.advance(60_000);
        const third = await b.infer(caller(one), request(true), new AbortController().signal);
        if (!('deltas' in third)) throw new Error('expected a stream');
        expect(await refusal(a.infer(caller(one), request(true), new AbortController().signal))).toMatchObject({ code: 'rate_limited' });
        // The second stream's client goes away (the upstream call is aborted): its slot is released as it settles.
        leaving.abort();
        const iterator = secondStream.deltas[Symbol.asyncIterator]();
        await iterator.next().catch(() => undefined);
        await iterator.return?.();
        expect((await secondStream.settled).usage).toBeNull();
        await secondStream.settled;
        clock.advance(60_000);
        const fourth = await a.infer(caller(one), request(true), new AbortController().signal);
        if (!('deltas' in fourth)) throw new Error('expected a stream');
        for (const stream of [third, fourth]) {
          for await (const delta of stream.deltas) void delta;
          await stream.settled;
        }
      });

      it('a replica that never gives its slot back (crashed) holds it only until the lease expires', async () => {
        const [a, b] = limiters as [InferenceLimiter, InferenceLimiter];
        const one = `cred-${randomUUID()}`;
        clock.set(Date.UTC(2026, 0, 1, 14, 0, 0));
        const held = [await a.openStream(one), await b.openStream(one)];
        expect((await refusal(b.openStream(one))).code).toBe('rate_limited');
        // Lease: the inference deadline (120 s here) plus a 10 s grace.
        clock.advance(129_000);
        expect((await refusal(a.openStream(one))).code).toBe('rate_limited');
        clock.advance(1_001);
        const taken = [await b.openStream(one), await a.openStream(one)];
        expect((await refusal(a.openStream(one))).code).toBe('rate_limited');
        // Releasing a lease that was taken over does not free the new holder's slot.
        for (const slot of held) await slot.release();
        expect((await refusal(a.openStream(one))).code).toBe('rate_limited');
        await taken[0]!.release();
        await taken[0]!.release();
        const again = await a.openStream(one);
        expect((await refusal(b.openStream(one))).code).toBe('rate_limited');
        await again.release();
        await taken[1]!.release();
      });
    });
  }
});
