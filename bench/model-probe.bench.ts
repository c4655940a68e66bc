import { Agent, request } from 'node:http';
import { MODEL_TESTS_PER_WINDOW } from '../src/admin/model-test/model-test.rate-limit.ts';
import type { Dialect } from '../src/core/db/database.ts';
import type { RecordedRequest } from '../test/support/upstream/index.ts';
import { startStandinPlatform } from './standin-platform.ts';
import { percentile } from './stats.ts';

/**
 * Model-test and discovery latency above the provider's own (issue 15), on one database dialect. The shipped
 * catalog's `openai` provider is overridden (PUT definition) to an OpenAI stand-in on 127.0.0.1 (test/support) and
 * its key installed; then, one request at a time, four series are measured in the same run:
 * (a) the probe body the platform sends, POSTed directly to the stand-in's `/v1/chat/completions`;
 * (b) `POST …/model_providers/openai/model_test` of `openai/gpt-4.1-mini`, the real route end to end (auth,
 *     validation, the rate limit's table, the catalog and policy reads, the probe through the outbound client, the
 *     availability update, which finds the model already valid and writes nothing after the first);
 * (c) a direct GET of the stand-in's directory, as discovery sends it;
 * (d) `POST …/model_discovery`, whose steady state is reads and the directory fetch (the directory lists every
 *     configured model, so no mark changes and no policy write happens).
 * Each round sends a then b, then c then d, the order within a pair flipped every other round, so noise on the
 * shared machine hits both sides of a pair alike. Both sides use keep-alive connections (a node:http agent for the
 * client, the platform's undici pool towards the stand-in). Client, platform and stand-in share one process; with one
 * request in flight they take turns rather than compete. The platform logs at `warn`, as the rest of the bench does.
 * Every request carries the lock_version the previous answer or read returned.
 *
 * The model test admits 10 requests per Human per three minutes, counted in the database; the bench keeps that path
 * by rotating Humans: an `admin` Human with its own platform token is created through the identity service for every
 * 10 model tests (outside the timed requests), and its token is used once on `GET …/openai` first, as a real
 * administrator's is before they press "test". Discovery has no such limit and uses the owner's token.
 *
 * Printed: p50 and p99 of each series and the added latency b − a and d − c at p50 and p99 (difference of the
 * percentiles), with the median of the per-round differences; target: added p50 under 2 ms for both. The process's
 * CPU time per request and the SQL statements the platform sent per request (a count the machine's load does not
 * move; on PostgreSQL each is a network round trip) are printed beside them, without a target.
 *
 * Variables: BENCH_PROBE_SECONDS (measured time, default 30), BENCH_WARMUP_SECONDS (discarded rounds before it,
 * default 1).
 */

const PROBE_SECONDS = Number(process.env.BENCH_PROBE_SECONDS ?? 30);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const TARGET_ADDED_P50_MS = 2;
const STANDIN_KEY = 'sk-bench-standin-0123456789abcdef';
const PROVIDER = '/api/v1/admin/model_providers/openai';
const MODEL = 'openai/gpt-4.1-mini';
/** The stand-in records every request; it is emptied this often so a long run does not hold them all. */
const RESET_EVERY_ROUNDS = 512;

/** One timed request: wall time from sending to the last body byte, and the process's CPU time meanwhile (ms). */
interface Timing {
  ms: number;
  cpuMs: number;
  /** Platform requests: the SQL statements the platform sent while serving it. */
  statements?: number;
}

interface Exchange extends Timing {
  status: number;
  body: Buffer;
}

function exchange(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    // The CPU mark first: getrusage costs tens of microseconds on a busy machine, kept out of the wall time.
    const cpu = process.cpuUsage();
    const started = performance.now();
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const ms = performance.now() - started;
        const used = process.cpuUsage(cpu);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms, cpuMs: (used.user + used.system) / 1000 });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A request as recorded by the stand-in, to be replayed directly. */
interface Replay {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

function replayOf(recorded: RecordedRequest | undefined, what: string): Replay {
  if (!recorded) throw new Error(`the stand-in did not receive the ${what}`);
  const headers: Record<string, string> = {};
  for (const name of ['authorization', 'content-type', 'accept']) {
    const value = recorded.headers[name];
    if (value !== undefined) headers[name] = value;
  }
  return { method: recorded.method, url: recorded.url, headers, body: recorded.body };
}

const ms = (n: number) => `${n.toFixed(2)} ms`;
const wallOf = (t: Timing) => t.ms;
const cpuOf = (t: Timing) => t.cpuMs;

/** The p-th percentile of unsorted `values`. */
function pct(values: readonly number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return percentile(sorted, p);
}

/**
 * Prints one series pair and the latency the platform adds; false when the added p50 misses the target. The CPU
 * figures (the whole process: client, platform and stand-in) are printed without a target: on a loaded machine they
 * say how much of the added wall time is the platform's own work rather than waiting for a core or the database.
 */
function report(directName: string, direct: Timing[], platformName: string, platform: Timing[]): boolean {
  const wall = (series: Timing[], p: number) => pct(series.map(wallOf), p);
  const cpu = (series: Timing[]) => pct(series.map(cpuOf), 50);
  const addedP50 = wall(platform, 50) - wall(direct, 50);
  const addedP99 = wall(platform, 99) - wall(direct, 99);
  const differences = platform.map((t, i) => t.ms - (direct[i]?.ms ?? NaN));
  const paired = pct(differences, 50);
  const ok = addedP50 < TARGET_ADDED_P50_MS;
  const line = (name: string, series: Timing[]) =>
    console.log(`${name.padEnd(38)} p50 ${ms(wall(series, 50))}  p99 ${ms(wall(series, 99))}  (CPU p50 ${ms(cpu(series))})`);
  line(directName, direct);
  line(platformName, platform);
  const statements = platform.map((t) => t.statements ?? 0);
  const mean = statements.reduce((sum, n) => sum + n, 0) / Math.max(1, statements.length);
  console.log(
    `${'  SQL statements per request'.padEnd(38)} mean ${mean.toFixed(2)}  min ${Math.min(...statements)}  max ${Math.max(...statements)}`,
  );
  console.log(
    `${'  added by the platform'.padEnd(38)} p50 ${ms(addedP50)} (target < ${TARGET_ADDED_P50_MS} ms) ${ok ? 'OK' : 'ABOVE TARGET'}  p99 ${ms(addedP99)}  median of per-round differences ${ms(paired)}  CPU p50 ${ms(cpu(platform) - cpu(direct))}`,
  );
  return ok;
}

/** Runs the section on `dialect` and prints its figures; false when a target is missed. */
export async function benchModelProbeLatency(dialect: Dialect): Promise<boolean> {
  const platform = await startStandinPlatform(dialect, STANDIN_KEY, {
    // Hundreds of Humans are created; the production scrypt cost would spend minutes hashing their passwords.
    PLATFORM_PASSWORD_COST: '14',
  });
  if (!platform) return true;
  const { standin, ctx, port } = platform;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const standinAgent = new Agent({ keepAlive: true, maxSockets: 1 });

  /** An admin API call; throws unless the status is `expect`. */
  const admin = async (method: string, path: string, token: string, body?: unknown, expect = 200) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const answer = await exchange(agent, port, method, path, headers, payload);
    if (answer.status !== expect) throw new Error(`${method} ${path}: ${answer.status} ${answer.body.toString('utf8')}`);
    return { json: JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>, timing: { ms: answer.ms, cpuMs: answer.cpuMs } };
  };
  const versionIn = (json: Record<string, unknown>) => (json.model_provider as { lock_version: number | null }).lock_version;

  try {
    const owner = await ctx.identity.bootstrap({ accountName: 'Bench', email: 'bench@example.test' });
    let version = versionIn((await admin('GET', PROVIDER, owner.platform_token)).json);
    const definition = { display_name: 'OpenAI', base_url: standin.baseUrl, api_format: 'openai_chat', credentials: 'api_key' };
    await admin('PUT', `${PROVIDER}/definition`, owner.platform_token, { command: { definition, expected_lock_version: version } });
    version = versionIn((await admin('PUT', `${PROVIDER}/api_key`, owner.platform_token, { command: { api_key: STANDIN_KEY } })).json);

    // Model tests rotate Humans: a fresh administrator for every MODEL_TESTS_PER_WINDOW tests (see the header).
    let humans = 0;
    let token = '';
    let testsLeft = 0;
    const testerToken = async (): Promise<string> => {
      if (testsLeft === 0) {
        const human = await ctx.identity.addHuman({
          accountId: owner.account_id,
          email: `bench-admin-${humans++}@example.test`,
          role: 'admin',
        });
        token = (await ctx.identity.createToken({ humanId: human.human_id, plane: 'platform' })).token;
        version = versionIn((await admin('GET', PROVIDER, token)).json);
        testsLeft = MODEL_TESTS_PER_WINDOW;
      }
      testsLeft--;
      return token;
    };

    const modelTest = async (): Promise<Timing> => {
      const command = { command: { model: MODEL, expected_lock_version: version } };
      const tester = await testerToken();
      const before = platform.statements();
      const answer = await admin('POST', `${PROVIDER}/model_test`, tester, command);
      const statements = platform.statements() - before;
      const test = answer.json.model_test as { outcome: string; availability_update: string };
      if (test.outcome !== 'succeeded' || !['noop', 'applied'].includes(test.availability_update))
        throw new Error(`model test: ${JSON.stringify(test)}`);
      version = versionIn(answer.json);
      return { ...answer.timing, statements };
    };
    const discovery = async (): Promise<Timing> => {
      const before = platform.statements();
      const answer = await admin('POST', `${PROVIDER}/model_discovery`, owner.platform_token, {
        command: { expected_lock_version: version },
      });
      const statements = platform.statements() - before;
      if ((answer.json.models as unknown[]).length === 0) throw new Error('discovery listed no models');
      return { ...answer.timing, statements };
    };

    // One of each through the platform, so the requests it sends can be replayed directly; the discovery also
    // settles the marks (none expected), after which the version is read again.
    standin.reset();
    await modelTest();
    await discovery();
    version = versionIn((await admin('GET', PROVIDER, owner.platform_token)).json);
    const probe = replayOf(
      standin.requests.find((r) => r.path.endsWith('/chat/completions')),
      'probe',
    );
    const directory = replayOf(
      standin.requests.find((r) => r.method === 'GET'),
      'directory request',
    );
    const direct = (replay: Replay) => async (): Promise<Timing> => {
      const answer = await exchange(standinAgent, standin.port, replay.method, replay.url, replay.headers, replay.body);
      if (answer.status !== 200) throw new Error(`direct ${replay.method} ${replay.url}: ${answer.status}`);
      return { ms: answer.ms, cpuMs: answer.cpuMs };
    };
    const directProbe = direct(probe);
    const directDirectory = direct(directory);

    /** Times both of a pair, `flip` deciding which goes first. */
    const pair = async (first: () => Promise<Timing>, second: () => Promise<Timing>, flip: boolean): Promise<[Timing, Timing]> => {
      if (!flip) {
        const x = await first();
        return [x, await second()];
      }
      const y = await second();
      return [await first(), y];
    };

    const series = { a: [] as Timing[], b: [] as Timing[], c: [] as Timing[], d: [] as Timing[] };
    const warmEnd = performance.now() + WARMUP_SECONDS * 1000;
    const end = warmEnd + PROBE_SECONDS * 1000;
    for (let round = 0; performance.now() < end; round++) {
      const measuring = performance.now() >= warmEnd;
      const flip = round % 2 === 1;
      const [a, b] = await pair(directProbe, modelTest, flip);
      const [c, d] = await pair(directDirectory, discovery, flip);
      if (measuring) {
        series.a.push(a);
        series.b.push(b);
        series.c.push(c);
        series.d.push(d);
      }
      if (round % RESET_EVERY_ROUNDS === 0) standin.reset();
    }

    console.log(
      `\n== ${dialect}: model test and discovery latency, one request at a time (${series.a.length} rounds in ${PROBE_SECONDS} s after ${WARMUP_SECONDS} s warm-up; ${humans} Humans created, ${MODEL_TESTS_PER_WINDOW} model tests each) ==`,
    );
    const testOk = report('(a) direct POST /v1/chat/completions', series.a, '(b) POST …/model_test', series.b);
    const discoveryOk = report('(c) direct GET /v1/models', series.c, '(d) POST …/model_discovery', series.d);
    return testOk && discoveryOk;
  } finally {
    agent.destroy();
    standinAgent.destroy();
    await platform.close();
  }
}
