/**
 * The dev forge's wiki, release, milestone, CI/CD variable, member and webhook APIs against GitLab's documented
 * examples (wikis.md, releases/index.md, milestones.md, project_level_variables.md, members.md,
 * project_webhooks.md): every documented field present with the documented type, offset-pagination headers past
 * page one, GitLab's error bodies, scopes, access levels and visibility.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedDevForge } from './devforge.app.ts';
import { apiCaller, expectShape, startTwoUserForge, type Kind } from './devforge.testkit.ts';

let forge: StartedDevForge;
let pat = '';
let readOnly = '';
let otto = '';
const P = 'rita%2Fhello-forge';

beforeAll(async () => {
  ({ forge, pat, readOnly, otto } = await startTwoUserForge());
});
afterAll(async () => {
  await forge.close();
});

const api = apiCaller<Record<string, unknown> & Record<string, unknown>[]>(
  () => forge.url,
  () => pat,
);

const MILESTONE: Record<string, Kind | Kind[]> = {
  id: 'number',
  iid: 'number',
  project_id: 'number',
  title: 'string',
  description: 'string',
  state: 'string',
  created_at: 'string',
  updated_at: 'string',
  due_date: ['string', 'null'],
  start_date: ['string', 'null'],
  expired: 'boolean',
  web_url: 'string',
};
const USER_BASIC: Record<string, Kind | Kind[]> = {
  id: 'number',
  username: 'string',
  name: 'string',
  state: 'string',
  avatar_url: ['string', 'null'],
  web_url: 'string',
};

describe('dev forge wiki API', () => {
  it('lists pages without content (with_content adds it), gets one by slug, creates, renames, deletes, 404s as GitLab', async () => {
    const list = await api(`/projects/${P}/wikis`);
    expect(list.status).toBe(200);
    for (const page of list.body) {
      expectShape(page, { format: 'string', slug: 'string', title: 'string' }, 'wiki page');
      expect(page).not.toHaveProperty('content');
    }
    expect(list.body.map((p) => p.slug)).toEqual(['getting-started', 'home', 'ops/deploy']);
    const withContent = await api(`/projects/${P}/wikis?with_content=1`);
    expect(withContent.body[0]).toHaveProperty('content');
    const one = await api(`/projects/${P}/wikis/ops%2Fdeploy`);
    expectShape(one.body, { content: 'string', format: 'string', slug: 'string', title: 'string', encoding: 'string' }, 'wiki page');
    expect(one.body).toMatchObject({ slug: 'ops/deploy', title: 'ops/deploy', format: 'markdown', encoding: 'UTF-8' });
    expect(await api(`/projects/${P}/wikis/nope`)).toMatchObject({ status: 404, body: { message: '404 Wiki Page Not Found' } });

    expect(await api(`/projects/${P}/wikis`, { method: 'POST', body: { content: 'x' } })).toMatchObject({
      status: 400,
      body: { error: 'title is missing' },
    });
    expect(await api(`/projects/${P}/wikis`, { method: 'POST', body: { title: 'x', content: 'x', format: 'docx' } })).toMatchObject({
      status: 400,
      body: { error: 'format does not have a valid value' },
    });
    const created = await api(`/projects/${P}/wikis`, { method: 'POST', body: { title: 'Release checklist', content: '- tag\n- notes' } });
    expect(created).toMatchObject({ status: 201, body: { slug: 'Release-checklist', title: 'Release checklist', format: 'markdown' } });
    expect((await api(`/projects/${P}/wikis`, { method: 'POST', body: { title: 'Release checklist', content: 'again' } })).status).toBe(
      400,
    );
    expect((await api(`/projects/${P}/wikis/Release-checklist`, { method: 'PUT', body: {} })).body).toEqual({
      error: 'content, title, format are missing, at least one parameter must be provided',
    });
    const renamed = await api(`/projects/${P}/wikis/Release-checklist`, { method: 'PUT', body: { title: 'Releasing' } });
    expect(renamed.body).toMatchObject({ slug: 'Releasing', content: '- tag\n- notes' });
    expect((await api(`/projects/${P}/wikis/Release-checklist`)).status).toBe(404);
    expect((await api(`/projects/${P}/wikis/Releasing`, { method: 'DELETE', token: readOnly })).body).toMatchObject({
      error: 'insufficient_scope',
    });
    expect((await api(`/projects/${P}/wikis/Releasing`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/projects/${P}/wikis/Releasing`, { method: 'DELETE' })).status).toBe(404);
  });

  it('pages past page one with GitLab’s headers, hides a private project’s wiki from others, and is searchable as wiki_blobs', async () => {
    const page2 = await api(`/projects/${P}/wikis?per_page=2&page=2`);
    expect(page2.body.map((p) => p.slug)).toEqual(['ops/deploy']);
    expect(page2.headers.get('x-total')).toBe('3');
    expect(page2.headers.get('x-page')).toBe('2');
    expect(page2.headers.get('x-next-page')).toBe('');
    expect(page2.headers.get('x-prev-page')).toBe('1');
    expect(await api(`/projects/${P}/wikis`, { token: otto })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const found = await api(`/projects/${P}/search?scope=wiki_blobs&search=deploy`);
    expect(found.status).toBe(200);
    for (const blob of found.body)
      expectShape(
        blob,
        {
          basename: 'string',
          data: 'string',
          path: 'string',
          filename: 'string',
          id: 'null',
          ref: 'string',
          startline: 'number',
          project_id: 'number',
          group_id: 'null',
        },
        'wiki blob',
      );
    expect(found.body.map((b) => b.path).sort()).toEqual(['home.md', 'ops/deploy.md']);
    // Otto's global search finds his own sample wiki, never Rita's private one.
    const ritaProject = found.body[0]?.project_id;
    const ottos = (await api(`/search?scope=wiki_blobs&search=deploy`, { token: otto })).body;
    expect(ottos.length).toBeGreaterThan(0);
    expect(ottos.map((b) => b.project_id)).not.toContain(ritaProject);
  });
});

describe('dev forge milestones API', () => {
  it('lists with state and search filters, gets one, creates and closes, with GitLab’s validation answers', async () => {
    const all = await api(`/projects/${P}/milestones`);
    for (const m of all.body) expectShape(m, MILESTONE, 'milestone');
    expect(all.body).toHaveLength(5);
    expect((await api(`/projects/${P}/milestones?state=closed`)).body.map((m) => m.title)).toEqual(['v1.0']);
    expect((await api(`/projects/${P}/milestones?search=v1.`)).body.map((m) => m.title)).toEqual(['v1.0', 'v1.1', 'v1.2']);
    expect((await api(`/projects/${P}/milestones?state=open`)).body).toEqual({ error: 'state does not have a valid value' });
    const second = await api(`/projects/${P}/milestones?per_page=2&page=2`);
    expect(second.headers.get('x-next-page')).toBe('3');
    expect(second.body).toHaveLength(2);

    const created = await api(`/projects/${P}/milestones`, {
      method: 'POST',
      body: { title: 'v3.0', description: 'Later', start_date: '2031-01-01', due_date: '2031-03-01' },
    });
    expect(created).toMatchObject({ status: 201, body: { title: 'v3.0', state: 'active', iid: 6, expired: false } });
    const id = Number(created.body.id);
    expect((await api(`/projects/${P}/milestones`, { method: 'POST', body: { title: 'v3.0' } })).body).toEqual({
      message: { title: ['has already been taken'] },
    });
    expect((await api(`/projects/${P}/milestones`, { method: 'POST', body: { title: 'bad', due_date: 'soon' } })).body).toEqual({
      error: 'due_date is invalid',
    });
    const closed = await api(`/projects/${P}/milestones/${id}`, { method: 'PUT', body: { state_event: 'close' } });
    expect(closed.body).toMatchObject({ id, state: 'closed' });
    expect((await api(`/projects/${P}/milestones/${id}`)).body).toMatchObject({ title: 'v3.0', state: 'closed' });
    expect(await api(`/projects/${P}/milestones/999999`)).toMatchObject({ status: 404, body: { message: '404 Milestone Not Found' } });
    expect((await api(`/projects/${P}/milestones`, { method: 'POST', token: readOnly, body: { title: 'x' } })).status).toBe(403);
  });
});

describe('dev forge releases API', () => {
  it('answers a release with every documented field, creates one with a new tag from a ref, updates it, 409 on a duplicate', async () => {
    const list = await api(`/projects/${P}/releases`);
    expect(list.body).toHaveLength(1);
    const release = list.body[0] as Record<string, unknown>;
    expectShape(
      release,
      {
        tag_name: 'string',
        description: 'string',
        name: 'string',
        created_at: 'string',
        released_at: 'string',
        upcoming_release: 'boolean',
        author: 'object',
        commit: 'object',
        milestones: 'array',
        commit_path: 'string',
        tag_path: 'string',
        assets: 'object',
        evidences: 'array',
        _links: 'object',
      },
      'release',
    );
    expectShape(release.author, USER_BASIC, 'release.author');
    expectShape((release.milestones as unknown[])[0], MILESTONE, 'release.milestones[0]');
    expect(release).toMatchObject({ tag_name: 'v1.0.0', tag_path: '/rita/hello-forge/-/tags/v1.0.0' });
    expect((release.assets as { sources: { format: string }[] }).sources.map((s) => s.format)).toEqual(['zip', 'tar.gz', 'tar.bz2', 'tar']);
    expect(Object.keys(release._links as object).sort()).toEqual([
      'closed_issues_url',
      'closed_merge_requests_url',
      'edit_url',
      'merged_merge_requests_url',
      'opened_issues_url',
      'opened_merge_requests_url',
      'self',
    ]);

    expect((await api(`/projects/${P}/releases`, { method: 'POST', body: { tag_name: 'v9.9.9' } })).body).toEqual({
      message: 'Ref is not specified',
    });
    expect(
      (await api(`/projects/${P}/releases`, { method: 'POST', body: { tag_name: 'v9.9.9', ref: 'main', milestones: ['nope'] } })).body,
    ).toEqual({ message: 'Milestone(s) not found: nope' });
    const created = await api(`/projects/${P}/releases`, {
      method: 'POST',
      body: { tag_name: 'v1.1.0', ref: 'main', name: 'One point one', description: 'Notes', milestones: ['v1.1'] },
    });
    expect(created).toMatchObject({ status: 201, body: { tag_name: 'v1.1.0', name: 'One point one', milestones: [{ title: 'v1.1' }] } });
    // The tag was created with the release, and shows it as GitLab's tag entity does.
    expect((await api(`/projects/${P}/repository/tags/v1.1.0`)).body).toMatchObject({
      name: 'v1.1.0',
      release: { tag_name: 'v1.1.0', description: 'Notes' },
    });
    expect((await api(`/projects/${P}/repository/tags/v0.1.0`)).body).toMatchObject({ release: null });
    expect(await api(`/projects/${P}/releases`, { method: 'POST', body: { tag_name: 'v1.1.0', ref: 'main' } })).toMatchObject({
      status: 409,
      body: { message: 'Release already exists' },
    });
    const updated = await api(`/projects/${P}/releases/v1.1.0`, { method: 'PUT', body: { description: 'Better notes', milestones: [] } });
    expect(updated.body).toMatchObject({ description: 'Better notes', milestones: [] });
    const page2 = await api(`/projects/${P}/releases?per_page=1&page=2`);
    expect(page2.headers.get('x-total')).toBe('2');
    expect(page2.body.map((r) => r.tag_name)).toEqual(['v1.0.0']);
    expect(await api(`/projects/${P}/releases/v0.0.0`)).toMatchObject({ status: 404, body: { message: '404 Release Not Found' } });
  });
});

describe('dev forge CI/CD variables, members and hooks APIs', () => {
  it('returns variables to a maintainer (a hidden one without value), 403 to a developer, 404 to an outsider', async () => {
    const list = await api(`/projects/${P}/variables`, { token: readOnly });
    expect(list.status).toBe(200);
    for (const v of list.body)
      expectShape(
        v,
        {
          variable_type: 'string',
          key: 'string',
          value: ['string', 'null'],
          protected: 'boolean',
          masked: 'boolean',
          hidden: 'boolean',
          raw: 'boolean',
          environment_scope: 'string',
          description: ['string', 'null'],
        },
        'variable',
      );
    expect(list.body.map((v) => [v.key, v.masked, v.value === null])).toEqual([
      ['DEPLOY_TARGET', false, false],
      ['DEPLOY_TOKEN', true, false],
      ['SIGNING_KEY', true, true],
    ]);
    expect((await api(`/projects/${P}/variables/DEPLOY_TARGET`)).body).toMatchObject({ value: 'staging.example.test' });
    expect(await api(`/projects/${P}/variables/NOPE`)).toMatchObject({ status: 404, body: { message: '404 Variable Not Found' } });
    expect((await api(`/projects/${P}/variables`, { token: otto })).status).toBe(404);
    // In the demo group, the second member is a Developer.
    const members = await api('/projects/demo%2Fwebshop/members');
    const developer = members.body.find((m) => m.access_level === 30);
    expect(developer).toBeDefined();
    const devToken = forge.createPersonalAccessToken(String(developer?.username), ['api']);
    expect(await api('/projects/demo%2Fwebshop/variables', { token: devToken })).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden' },
    });
  });

  it('creates, updates and deletes variables with GitLab’s validation messages; a refused update changes nothing', async () => {
    const variables = `/projects/${P}/variables`;
    const create = (body: Record<string, unknown>, token?: string) => api(variables, { method: 'POST', body, ...(token ? { token } : {}) });
    expect(await create({ key: 'NEW_VAR', value: 'v' }, readOnly)).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect((await create({ key: 'NEW_VAR', value: 'v' }, otto)).status).toBe(404);
    expect(await create({ value: 'v' })).toMatchObject({ status: 400, body: { error: 'key is missing' } });
    expect(await create({ key: 'NEW_VAR' })).toMatchObject({ status: 400, body: { error: 'value is missing' } });
    expect(await create({ key: 'bad-key', value: 'v' })).toMatchObject({
      status: 400,
      body: { message: { key: ["can contain only letters, digits and '_'."] } },
    });
    expect(await create({ key: 'DEPLOY_TARGET', value: 'v' })).toMatchObject({
      status: 400,
      body: { message: { key: ['(DEPLOY_TARGET) has already been taken'] } },
    });
    expect(await create({ key: 'SHORT', value: 'short', masked: true })).toMatchObject({
      status: 400,
      body: { message: { value: ['is invalid'] } },
    });

    const made = await create({ key: 'NEW_VAR', value: 'hello', variable_type: 'file', protected: true, description: 'A file' });
    expect(made).toMatchObject({
      status: 201,
      body: {
        key: 'NEW_VAR',
        value: 'hello',
        variable_type: 'file',
        protected: true,
        masked: false,
        hidden: false,
        environment_scope: '*',
      },
    });
    expect((await api(`${variables}/NEW_VAR`, { method: 'PUT', body: { value: 'changed', masked: true } })).status).toBe(400);
    expect((await api(`${variables}/NEW_VAR`)).body).toMatchObject({ value: 'hello', masked: false });
    expect((await api(`${variables}/NEW_VAR`, { method: 'PUT', body: { value: 'changed-value', masked: true } })).body).toMatchObject({
      value: 'changed-value',
      masked: true,
      variable_type: 'file',
    });
    expect((await api(`${variables}/SIGNING_KEY`, { method: 'PUT', body: { masked: false } })).status).toBe(400);
    const hidden = await create({ key: 'HIDDEN_ONE', value: 'hidden-value-1', masked_and_hidden: true });
    expect(hidden).toMatchObject({ status: 201, body: { value: null, masked: true, hidden: true } });
    for (const key of ['NEW_VAR', 'HIDDEN_ONE']) expect((await api(`${variables}/${key}`, { method: 'DELETE' })).status).toBe(204);
    expect(await api(`${variables}/NEW_VAR`, { method: 'DELETE' })).toMatchObject({
      status: 404,
      body: { message: '404 Variable Not Found' },
    });
    expect((await api(variables)).body.map((v) => v.key)).toEqual(['DEPLOY_TARGET', 'DEPLOY_TOKEN', 'SIGNING_KEY']);
  });

  it('lists members (direct and all) with access levels and filters, one member by id', async () => {
    const members = await api(`/projects/${P}/members`);
    expect(members.body).toHaveLength(1);
    expectShape(
      members.body[0],
      {
        ...USER_BASIC,
        expires_at: 'null',
        access_level: 'number',
        created_at: 'string',
        created_by: 'object',
        group_saml_identity: 'null',
        membership_state: 'string',
      },
      'member',
    );
    expect(members.body[0]).toMatchObject({ username: 'rita', access_level: 50 });
    expect((await api(`/projects/${P}/members/all?query=zzz`)).body).toEqual([]);
    expect((await api(`/projects/${P}/members/1`)).body).toMatchObject({ username: 'rita', access_level: 50 });
    expect(await api(`/projects/${P}/members/2`)).toMatchObject({ status: 404, body: { message: '404 Member Not Found' } });
  });

  it('adds, changes and removes members with GitLab’s answers: 201, 400, 403, 404 and 409', async () => {
    const members = `/projects/${P}/members`;
    const add = (body: Record<string, unknown>, token?: string) => api(members, { method: 'POST', body, ...(token ? { token } : {}) });
    // Otto cannot see rita's private project, and a read_api token cannot write.
    expect(await add({ user_id: 2, access_level: 30 }, otto)).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await add({ user_id: 2, access_level: 30 }, readOnly)).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect(await add({ access_level: 30 })).toMatchObject({
      status: 400,
      body: { error: 'user_id, username are missing, at least one parameter must be provided' },
    });
    expect(await add({ user_id: 2 })).toMatchObject({ status: 400, body: { error: 'access_level is missing' } });
    expect(await add({ user_id: 2, access_level: 35 })).toMatchObject({
      status: 400,
      body: { error: 'access_level does not have a valid value' },
    });
    expect(await add({ user_id: 99, access_level: 30 })).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });

    const added = await add({ user_id: 2, access_level: 30, expires_at: '2030-01-31' });
    expect(added.status).toBe(201);
    expectShape(
      added.body,
      { ...USER_BASIC, expires_at: 'string', access_level: 'number', created_at: 'string', created_by: 'object' },
      'member',
    );
    expect(added.body).toMatchObject({ username: 'otto', access_level: 30, expires_at: '2030-01-31', created_by: { username: 'rita' } });
    expect(await add({ user_id: 2, access_level: 40 })).toMatchObject({ status: 409, body: { message: 'Member already exists' } });
    // A member now: otto sees the project and its two members and may push, but a Developer manages no one.
    const branch = (name: string) =>
      api(`/projects/${P}/repository/branches`, { token: otto, method: 'POST', body: { branch: name, ref: 'main' } });
    expect((await branch('otto-developer')).status).toBe(201);
    const mergeRequests = `/projects/${P}/merge_requests`;
    const opened = await api(mergeRequests, {
      token: otto,
      method: 'POST',
      body: { source_branch: 'otto-developer', target_branch: 'main', title: 'Otto as a Developer' },
    });
    expect(opened.status).toBe(201);
    const ottosMr = `${mergeRequests}/${(opened.body as unknown as { iid: number }).iid}`;
    expect((await api(members, { token: otto })).body.map((m) => m.username)).toEqual(['rita', 'otto']);
    expect(await api(`${members}/2`, { token: otto, method: 'PUT', body: { access_level: 40 } })).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden' },
    });

    expect((await api(`${members}/2`, { method: 'PUT', body: { access_level: 40 } })).body).toMatchObject({
      access_level: 40,
      expires_at: '2030-01-31',
    });
    expect((await api(`${members}/2`)).body).toMatchObject({ access_level: 40 });
    expect(await api(`${members}/99`, { method: 'PUT', body: { access_level: 30 } })).toMatchObject({
      status: 404,
      body: { message: '404 Member Not Found' },
    });
    // The namespace owner's membership is nobody's to change; a Maintainer grants no Owner.
    expect((await api(`${members}/1`, { method: 'PUT', body: { access_level: 30 } })).status).toBe(403);
    expect((await api(`${members}/1`, { method: 'DELETE' })).status).toBe(403);
    expect((await api(`${members}/2`, { token: otto, method: 'PUT', body: { access_level: 50 } })).status).toBe(403);
    // A Maintainer may now read the variables; anyone may leave.
    expect((await api(`/projects/${P}/variables`, { token: otto })).status).toBe(200);
    expect((await api(`${members}/2`, { token: otto, method: 'DELETE' })).status).toBe(204);
    expect((await api(`/projects/${P}`, { token: otto })).status).toBe(404);

    // By username; a Reporter removes no one else; the Owner removes them; a second removal is a 404.
    expect(await add({ username: 'otto', access_level: 20 })).toMatchObject({ status: 201, body: { access_level: 20, expires_at: null } });
    expect(await branch('otto-reporter')).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    // A Reporter comments on merge requests but opens, edits, approves and merges none (GitLab: Developer or above).
    const forbidden = { status: 403, body: { message: '403 Forbidden' } };
    const asOtto = (path: string, method: string, body: Record<string, unknown> = {}) => api(path, { token: otto, method, body });
    expect(await asOtto(mergeRequests, 'POST', { source_branch: 'otto-reporter', target_branch: 'main', title: 'x' })).toMatchObject(
      forbidden,
    );
    expect(await asOtto(ottosMr, 'PUT', { title: 'Renamed by a Reporter' })).toMatchObject(forbidden);
    expect(await asOtto(`${ottosMr}/approve`, 'POST')).toMatchObject(forbidden);
    expect(await asOtto(`${ottosMr}/merge`, 'PUT')).toMatchObject(forbidden);
    expect((await api(ottosMr)).body).toMatchObject({ title: 'Otto as a Developer', state: 'opened' });
    expect((await asOtto(`${ottosMr}/notes`, 'POST', { body: 'A Reporter’s comment' })).status).toBe(201);
    expect((await api(`${members}/1`, { token: otto, method: 'DELETE' })).status).toBe(403);
    expect((await api(`${members}/2`, { method: 'DELETE' })).status).toBe(204);
    expect(await api(`${members}/2`, { method: 'DELETE' })).toMatchObject({ status: 404, body: { message: '404 Member Not Found' } });
    expect((await api(members)).body.map((m) => m.username)).toEqual(['rita']);
  });

  it('lists, creates, updates and deletes hooks without ever returning the token; validates the URL with 422', async () => {
    const list = await api(`/projects/${P}/hooks`);
    expectShape(
      list.body[0],
      {
        id: 'number',
        url: 'string',
        name: 'string',
        description: 'string',
        project_id: 'number',
        push_events: 'boolean',
        push_events_branch_filter: 'string',
        issues_events: 'boolean',
        confidential_issues_events: 'boolean',
        merge_requests_events: 'boolean',
        tag_push_events: 'boolean',
        note_events: 'boolean',
        confidential_note_events: 'boolean',
        job_events: 'boolean',
        pipeline_events: 'boolean',
        wiki_page_events: 'boolean',
        deployment_events: 'boolean',
        releases_events: 'boolean',
        feature_flag_events: 'boolean',
        enable_ssl_verification: 'boolean',
        repository_update_events: 'boolean',
        alert_status: 'string',
        disabled_until: 'null',
        url_variables: 'array',
        created_at: 'string',
        resource_access_token_events: 'boolean',
        custom_webhook_template: 'string',
        custom_headers: 'array',
      },
      'hook',
    );
    expect(JSON.stringify(list.body)).not.toContain('devforge-hook-secret');
    expect((await api(`/projects/${P}/hooks`, { method: 'POST', body: {} })).body).toEqual({ error: 'url is missing' });
    expect(await api(`/projects/${P}/hooks`, { method: 'POST', body: { url: 'ftp://x.test/' } })).toMatchObject({
      status: 422,
      body: { message: { url: ['is blocked: Only allowed schemes are http, https'] } },
    });
    const created = await api(`/projects/${P}/hooks`, {
      method: 'POST',
      body: { url: 'https://hooks.example.test/new', token: 'secret-123', issues_events: true },
    });
    expect(created).toMatchObject({ status: 201, body: { push_events: true, issues_events: true, note_events: false } });
    expect(JSON.stringify(created.body)).not.toContain('secret-123');
    const id = Number(created.body.id);
    expect((await api(`/projects/${P}/hooks/${id}`, { method: 'PUT', body: { push_events: false } })).body).toMatchObject({
      push_events: false,
      url: 'https://hooks.example.test/new',
    });
    expect((await api(`/projects/${P}/hooks/${id}`, { method: 'PUT', token: readOnly, body: { push_events: true } })).status).toBe(403);
    expect((await api(`/projects/${P}/hooks?per_page=1&page=2`)).body.map((h) => h.id)).toEqual([id]);
    expect((await api(`/projects/${P}/hooks/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await api(`/projects/${P}/hooks/${id}`)).toMatchObject({ status: 404, body: { message: '404 Hook Not Found' } });
  });
});
