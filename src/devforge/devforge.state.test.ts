import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevForge, type StartedDevForge } from './devforge.app.ts';
import { createForgeBrowser } from './devforge.browser.ts';
import type { DevForgeSeed } from './devforge.seed.ts';
import { devForgeSeedFromState, devForgeStateFile, readDevForgeState } from './devforge.state.ts';

type ApiAnswer = Record<string, unknown> & Record<string, unknown>[];

const CALLBACK = 'http://127.0.0.1:3999/callback';

/** Code flow with PKCE S256 through the real pages, as the MCP server does it. */
async function signInAndGetTokens(forge: StartedDevForge, seed: DevForgeSeed) {
  const user = seed.users[0]!;
  const app = seed.applications[0]!;
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL('/oauth/authorize', forge.url);
  for (const [k, v] of Object.entries({
    client_id: app.uid,
    redirect_uri: CALLBACK,
    response_type: 'code',
    state: 's',
    scope: 'api',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })) {
    url.searchParams.set(k, v);
  }
  const location = await createForgeBrowser().authorize(url.href, { username: user.username, password: user.password });
  const code = new URL(location).searchParams.get('code') ?? '';
  const response = await fetch(`${forge.url}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: app.uid,
      code_verifier: verifier,
    }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

async function whoAmI(forge: StartedDevForge, bearer: string): Promise<number> {
  return (await fetch(`${forge.url}/api/v4/user`, { headers: { authorization: `Bearer ${bearer}` } })).status;
}

describe('dev forge state file', () => {
  const dirs: string[] = [];
  let forge: StartedDevForge | undefined;
  /** The sample project's REST API as `pat` on the forge running now (the tests restart it); every answer must be 2xx. */
  function helloForgeApi(pat: string) {
    return async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
      const response = await fetch(`${forge!.url}/api/v4/projects/dev%2Fhello-forge${path}`, {
        method,
        headers: { 'private-token': pat, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      expect(response.status, `${method} ${path}`).toBeLessThan(300);
      return (response.status === 204 ? {} : await response.json()) as ApiAnswer;
    };
  }
  afterEach(async () => {
    await forge?.close();
    forge = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function dataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'devforge-state-'));
    dirs.push(dir);
    return join(dir, 'data');
  }

  it('keeps the user, the application, tokens and changes across a restart: the same sign-in works and old tokens still authenticate', async () => {
    const file = devForgeStateFile(dataDir());
    const seed1 = devForgeSeedFromState(file, [CALLBACK]);
    forge = await startDevForge({ ...seed1, stateFile: file });
    // Written at once, private to the user, in a private directory.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    const tokens = await signInAndGetTokens(forge, seed1);
    const pat = forge.bannerPersonalAccessToken('dev', ['api'], 'banner');
    const created = await fetch(`${forge.url}/api/v4/projects/dev%2Fhello-forge/issues`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Survives a restart' }),
    });
    expect(created.status).toBe(201);
    // No token, code or refresh token in clear: only the banner's password and personal access token are.
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(tokens.access_token);
    expect(text).not.toContain(tokens.refresh_token);
    expect(readdirSync(join(file, '..'))).toEqual(['devforge.json']);
    // A crash, not a graceful stop: the state was saved before each response left.
    forge.app.server.closeAllConnections();
    await forge.close();

    const seed2 = devForgeSeedFromState(file, ['http://127.0.0.1:4999/callback', CALLBACK]);
    expect(seed2.users[0]?.password).toBe(seed1.users[0]?.password);
    expect(seed2.applications[0]?.uid).toBe(seed1.applications[0]?.uid);
    forge = await startDevForge({ ...seed2, stateFile: file });
    expect(await whoAmI(forge, tokens.access_token)).toBe(200);
    expect(forge.bannerPersonalAccessToken('dev', ['api'], 'banner')).toBe(pat);
    const issues = (await (
      await fetch(`${forge.url}/api/v4/projects/dev%2Fhello-forge/issues`, { headers: { 'private-token': pat } })
    ).json()) as {
      title: string;
    }[];
    expect(issues.map((i) => i.title)).toContain('Survives a restart');
    // The same password signs in again and the refresh token issued before the restart rotates.
    const again = await signInAndGetTokens(forge, seed2);
    expect(await whoAmI(forge, again.access_token)).toBe(200);
    const refreshed = await fetch(`${forge.url}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: seed2.applications[0]!.uid,
      }),
    });
    expect(refreshed.status).toBe(200);
    expect(await whoAmI(forge, tokens.access_token)).toBe(401);
    // The application follows the redirect URIs of this start.
    expect(readDevForgeState(file)?.store.applications[0]?.redirectUris).toEqual(['http://127.0.0.1:4999/callback', CALLBACK]);
    // Revocations are kept too.
    forge.revokeAllTokensOf('dev');
    await forge.close();
    forge = await startDevForge({ ...devForgeSeedFromState(file, [CALLBACK]), stateFile: file });
    expect(await whoAmI(forge, again.access_token)).toBe(401);
    expect(forge.bannerPersonalAccessToken('dev', ['api'], 'banner')).not.toBe(pat);
  });

  it('keeps what was done on the forge across a restart: an issue with a note, a merge request thread, a branch with a commit, a pipeline', async () => {
    const file = devForgeStateFile(dataDir());
    forge = await startDevForge({ ...devForgeSeedFromState(file, [CALLBACK]), stateFile: file });
    const pat = forge.createPersonalAccessToken('dev', ['api']);
    const api = helloForgeApi(pat);
    const issue = await api('POST', '/issues', { title: 'Kept issue', labels: 'kept' });
    const note = await api('POST', `/issues/${String(issue.iid)}/notes`, { body: 'Kept note' });
    const thread = await api('POST', '/merge_requests/1/discussions', { body: 'Kept thread' });
    await api('POST', '/repository/commits', {
      branch: 'kept-branch',
      start_branch: 'main',
      commit_message: 'Keep a file',
      actions: [{ action: 'create', file_path: 'kept.txt', content: 'kept\n' }],
    });
    const pipeline = await api('POST', '/pipeline', { ref: 'kept-branch', variables: [{ key: 'KEPT', value: 'yes' }] });
    // Every commit holds its whole tree: each file's content is in the file once.
    const stored = readFileSync(file, 'utf8');
    const words = Buffer.from((await api('GET', '/repository/files/data%2Fwords.txt?ref=main')).content as string, 'base64');
    expect(stored.split(words.toString('base64')).length - 1).toBe(1);
    forge.app.server.closeAllConnections();
    await forge.close();

    forge = await startDevForge({ ...devForgeSeedFromState(file, [CALLBACK]), stateFile: file });
    expect(await api('GET', `/issues/${String(issue.iid)}`)).toMatchObject({ title: 'Kept issue', labels: ['kept'] });
    expect((await api('GET', `/issues/${String(issue.iid)}/notes`)).map((n) => n.body)).toContain('Kept note');
    const threads = await api('GET', '/merge_requests/1/discussions');
    expect(threads.find((d) => d.id === thread.id)).toBeDefined();
    expect(await api('GET', '/repository/branches/kept-branch')).toMatchObject({ name: 'kept-branch' });
    expect(Buffer.from((await api('GET', '/repository/files/kept.txt?ref=kept-branch')).content as string, 'base64').toString()).toBe(
      'kept\n',
    );
    expect(await api('GET', `/pipelines/${String(pipeline.id)}`)).toMatchObject({ id: pipeline.id, ref: 'kept-branch' });
    expect((await api('GET', `/pipelines/${String(pipeline.id)}/jobs`)).length).toBeGreaterThan(0);
    // Counters continue: new records do not reuse the ids of kept ones.
    expect((await api('POST', `/issues/${String(issue.iid)}/notes`, { body: 'After' })).id).not.toBe(note.id);
    const next = await api('POST', '/pipeline', { ref: 'kept-branch' });
    expect(next.id).toBeGreaterThan(pipeline.id as number);
    expect(next.iid).toBeGreaterThan(pipeline.iid as number);

    // A file written before the records were kept: the store is restored, the sample repositories seeded again.
    await forge.close();
    const { records: _dropped, ...older } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(older));
    forge = await startDevForge({ ...devForgeSeedFromState(file, [CALLBACK]), stateFile: file });
    expect(await api('GET', `/issues/${String(issue.iid)}`)).toMatchObject({ title: 'Kept issue' });
    expect((await api('GET', '/repository/branches')).map((b) => b.name)).toEqual(['import', 'main', 'readme']);
  });

  it('keeps the opt-in toolsets’ data across a restart: wiki pages, milestones, tags and releases, webhooks, CI/CD variables, members', async () => {
    const file = devForgeStateFile(dataDir());
    const otto = { id: 2, username: 'otto', name: 'Otto Other', email: 'otto@example.test', password: 'pw-otto-state-1' };
    const start = async () => {
      const seed = devForgeSeedFromState(file, [CALLBACK]);
      return startDevForge({ ...seed, users: [...seed.users, otto], stateFile: file });
    };
    forge = await start();
    const pat = forge.createPersonalAccessToken('dev', ['api']);
    const api = helloForgeApi(pat);
    await api('POST', '/wikis', { title: 'kept page', content: 'Kept wiki text.' });
    await api('PUT', '/wikis/home', { content: 'Home, edited.' });
    await api('DELETE', '/wikis/getting-started');
    const milestone = await api('POST', '/milestones', { title: 'Kept milestone', due_date: '2031-05-01' });
    const v11 = (await api('GET', '/milestones?title=v1.1'))[0];
    await api('PUT', `/milestones/${String(v11?.id)}`, { state_event: 'close' });
    await api('POST', '/releases', { tag_name: 'kept-tag', ref: 'main', name: 'Kept release', milestones: ['Kept milestone'] });
    const hook = await api('POST', '/hooks', { url: 'https://kept.example.test/hook', token: 'kept-hook-secret', issues_events: true });
    await api('POST', '/variables', { key: 'KEPT_VAR', value: 'kept-value', protected: true });
    await api('DELETE', '/variables/DEPLOY_TARGET');
    await api('POST', '/members', { user_id: otto.id, access_level: 20, expires_at: '2031-01-31' });
    forge.app.server.closeAllConnections();
    await forge.close();

    forge = await start();
    const pages = await api('GET', '/wikis?with_content=1');
    expect(pages.map((w) => w.slug)).toEqual(expect.arrayContaining(['kept-page', 'home', 'ops/deploy']));
    expect(pages.map((w) => w.slug)).not.toContain('getting-started');
    expect(pages.find((w) => w.slug === 'home')).toMatchObject({ content: 'Home, edited.' });
    const milestones = await api('GET', '/milestones');
    expect(milestones.find((m) => m.id === milestone.id)).toMatchObject({ title: 'Kept milestone', due_date: '2031-05-01' });
    expect(milestones.find((m) => m.title === 'v1.1')).toMatchObject({ state: 'closed' });
    expect(await api('GET', '/repository/tags/kept-tag')).toMatchObject({ name: 'kept-tag', release: { tag_name: 'kept-tag' } });
    expect(await api('GET', '/releases/kept-tag')).toMatchObject({ name: 'Kept release', milestones: [{ title: 'Kept milestone' }] });
    expect(await api('GET', `/hooks/${String(hook.id)}`)).toMatchObject({ url: 'https://kept.example.test/hook', issues_events: true });
    expect((await api('GET', '/variables')).map((v) => [v.key, v.protected])).toEqual([
      ['DEPLOY_TOKEN', true],
      ['KEPT_VAR', true],
      ['SIGNING_KEY', false],
    ]);
    expect(await api('GET', `/members/${String(otto.id)}`)).toMatchObject({
      username: 'otto',
      access_level: 20,
      expires_at: '2031-01-31',
      created_by: { username: 'dev' },
    });
    // Otto is still a member: he sees the private project.
    const ottoPat = forge.createPersonalAccessToken('otto', ['read_api']);
    expect((await fetch(`${forge.url}/api/v4/projects/dev%2Fhello-forge`, { headers: { 'private-token': ottoPat } })).status).toBe(200);
    // Counters continue: new milestones and hooks do not reuse kept ids.
    expect((await api('POST', '/milestones', { title: 'After' })).id).toBeGreaterThan(milestone.id as number);
    expect((await api('POST', '/hooks', { url: 'https://after.example.test/' })).id).toBeGreaterThan(hook.id as number);

    // A file written before the extras were kept: they are seeded again, the rest stays.
    await forge.close();
    const state = JSON.parse(readFileSync(file, 'utf8')) as { records: Record<string, unknown> };
    delete state.records.extras;
    writeFileSync(file, JSON.stringify(state));
    forge = await start();
    expect((await api('GET', '/wikis')).map((w) => w.slug)).toEqual(['getting-started', 'home', 'ops/deploy']);
    expect(await api('GET', '/repository/tags/kept-tag')).toMatchObject({ name: 'kept-tag' });
  });

  it('stays in memory without a state file, and refuses a file that is not its state with one line', async () => {
    const dir = dataDir();
    const file = devForgeStateFile(dir);
    forge = await startDevForge({ ...devForgeSeedFromState(file, [CALLBACK]) });
    forge.createPersonalAccessToken('dev');
    expect(existsSync(dir)).toBe(false);
    await forge.close();
    forge = undefined;

    const other = join(dataDir(), '..', 'devforge.json');
    writeFileSync(other, '{"version":7}');
    expect(() => devForgeSeedFromState(other, [CALLBACK])).toThrow(/is not a version 1 dev forge state; move it away/);
    writeFileSync(other, 'not json');
    await expect(startDevForge({ ...devForgeSeedFromState(join(dir, 'x.json'), [CALLBACK]), stateFile: other })).rejects.toThrow(
      /is not valid JSON/,
    );
  });
});
