/**
 * add_commit's edits by old/new text applied in order on one file (none lost to a later one), resources/read giving
 * forge text through the same sanitiser as tool results, and completions saying when the forge has more than the
 * page they offer: through the v1 and v2 SDK clients over Streamable HTTP against the dev forge.
 */
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevForgeUser } from '../../devforge/index.ts';
import { connectSdkClients, startStack, type Stack } from '../mcp.testkit.ts';

type Json = Record<string, unknown>;
interface ToolResult {
  isError?: boolean;
  structuredContent?: unknown;
}

/** Enough other users that, once each shares two projects with the signed-in one, they fill more than a page of 20. */
const OTHERS: DevForgeUser[] = Array.from({ length: 11 }, (_, i) => ({
  id: 100 + i,
  username: `peer${i}`,
  name: `Peer ${i}`,
  email: `peer${i}@example.test`,
  password: `pw-peer-${i}-not-secret`,
}));

let stack: Stack;
let pat = '';
let project = '';
let client: V2Client;

beforeAll(async () => {
  stack = await startStack({
    mode: 'none',
    toolSurface: { toolsets: ['core', 'repository'], denied: [], readOnly: false },
    otherForgeUsers: OTHERS,
  });
  pat = stack.forge.forge.createPersonalAccessToken(stack.forge.user.username, ['api']);
  project = `${stack.forge.user.username}/hello-forge`;
  client = new V2Client({ name: 'commit-resources', version: '1' });
  await client.connect(new V2Transport(new URL(`${stack.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${pat}` } } }));
});
afterAll(async () => {
  await client.close();
  await stack.close();
});

async function call(name: string, args: Json): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

async function ok(name: string, args: Json): Promise<Json> {
  const result = await call(name, args);
  expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
  return result.structuredContent as Json;
}

const errorOf = (result: ToolResult) => (result.structuredContent as { error?: { type?: string; message?: string } }).error;

/** The file as the forge has it at `ref`, read straight from the forge's REST API. */
async function forgeFile(path: string, ref: string): Promise<string | undefined> {
  const id = encodeURIComponent(project);
  const response = await fetch(
    `${stack.forge.forge.url}/api/v4/projects/${id}/repository/files/${encodeURIComponent(path)}/raw?ref=${encodeURIComponent(ref)}`,
    { headers: { 'private-token': pat } },
  );
  return response.status === 200 ? response.text() : undefined;
}

async function headOf(branch: string): Promise<string> {
  return String(((await ok('get_commit', { project_id: project, sha: branch })) as { id: unknown }).id);
}

describe('add_commit edits by old/new text', () => {
  it('[REPO-COMMIT] two edits of one file in one call both land, the second applied on the first’s result', async () => {
    const branch = 'two-edits';
    await ok('add_commit', {
      project_id: project,
      branch,
      start_branch: 'main',
      commit_message: 'Two edits of the greeting',
      actions: [
        { action: 'update', file_path: 'src/greet.ts', old: 'greet(name: string)', new: 'greet(name: string, loud = false)' },
        // Its old text exists only after the first edit.
        { action: 'update', file_path: 'src/greet.ts', old: 'loud = false', new: 'loud = true' },
        { action: 'update', file_path: 'src/greet.ts', old: '`Hello, ${name}!`', new: '`Hi, ${name}!`' },
      ],
    });
    expect(await forgeFile('src/greet.ts', branch)).toBe(
      'export function greet(name: string, loud = true): string {\n  return `Hi, ${name}!`;\n}\n',
    );
  });

  it('[REPO-COMMIT] an edit applies to a file created, updated or moved earlier in the same call', async () => {
    const branch = 'edit-after';
    await ok('add_commit', {
      project_id: project,
      branch,
      start_branch: 'main',
      commit_message: 'Edits after other actions',
      actions: [
        { action: 'create', file_path: 'docs/fresh.md', content: '# Fresh\n\nDraft.\n' },
        { action: 'update', file_path: 'docs/fresh.md', old: 'Draft.', new: 'Done.' },
        { action: 'update', file_path: 'src/app.ts', content: "console.log('one');\n" },
        { action: 'update', file_path: 'src/app.ts', old: 'one', new: 'two' },
        { action: 'move', file_path: 'src/salute.ts', previous_path: 'src/greet.ts' },
        { action: 'update', file_path: 'src/salute.ts', old: 'Hello', new: 'Salut' },
      ],
    });
    expect(await forgeFile('docs/fresh.md', branch)).toBe('# Fresh\n\nDone.\n');
    expect(await forgeFile('src/app.ts', branch)).toBe("console.log('two');\n");
    expect(await forgeFile('src/salute.ts', branch)).toContain('`Salut, ${name}!`');
    expect(await forgeFile('src/greet.ts', branch)).toBeUndefined();

    const gone = await call('add_commit', {
      project_id: project,
      branch,
      commit_message: 'Edit a file moved away',
      actions: [
        { action: 'move', file_path: 'docs/moved.md', previous_path: 'docs/fresh.md' },
        { action: 'update', file_path: 'docs/fresh.md', old: 'Done.', new: 'Again.' },
      ],
    });
    expect(errorOf(gone)?.message).toMatch(/^actions\[1\]: an earlier action of this call deleted or moved that file away/);
    expect(await forgeFile('docs/fresh.md', branch)).toBe('# Fresh\n\nDone.\n');
  });

  it('[REPO-COMMIT] an old text not found, or no old at all, is refused naming the action, and nothing is committed', async () => {
    const branch = 'refused-edit';
    await ok('add_commit', {
      project_id: project,
      branch,
      start_branch: 'main',
      commit_message: 'Start',
      actions: [{ action: 'create', file_path: 'notes.txt', content: 'alpha\n' }],
    });
    const head = await headOf(branch);
    const missing = await call('add_commit', {
      project_id: project,
      branch,
      commit_message: 'Edit twice, the second missing',
      actions: [
        { action: 'update', file_path: 'src/greet.ts', old: 'Hello', new: 'Hi' },
        { action: 'update', file_path: 'src/greet.ts', old: 'Hello', new: 'Hey' },
      ],
    });
    expect(errorOf(missing)).toMatchObject({ type: 'validation' });
    expect(errorOf(missing)?.message).toMatch(/^actions\[1\]: old text not found/);
    const noOld = await call('add_commit', {
      project_id: project,
      branch,
      commit_message: 'No old',
      actions: [{ action: 'update', file_path: 'notes.txt', new: 'beta\n' }],
    });
    expect(errorOf(noOld)?.message).toMatch(/^actions\[0\]: old and new are both needed/);
    expect(await headOf(branch)).toBe(head);
    expect(await forgeFile('src/greet.ts', branch)).toContain('`Hello, ${name}!`');
    expect(await forgeFile('notes.txt', branch)).toBe('alpha\n');
  });
});

describe('resources and completions', () => {
  it('[TOOL-UNTRUSTED] a file read as a resource comes without bidirectional controls and zero-width characters', async () => {
    const hidden = 'safe\u202Etxt.exe\u200B and\u2066 more\u2069\u200D';
    await ok('add_commit', {
      project_id: project,
      branch: 'hidden-text',
      start_branch: 'main',
      commit_message: 'A file with hidden characters',
      actions: [{ action: 'create', file_path: 'hidden.md', content: `${hidden}\nline two\r\n` }],
    });
    expect(await forgeFile('hidden.md', 'hidden-text')).toContain('\u202E');
    for (const c of await connectSdkClients(stack.url, pat)) {
      try {
        const read = await c.readResource({ uri: `forge://projects/${encodeURIComponent(project)}/files/hidden-text/hidden.md` });
        expect((read.contents[0] as { text?: string }).text).toBe('safetxt.exe and more\nline two\r\n');
      } finally {
        await c.close();
      }
    }
  });

  it('[MCP-COMPLETIONS] a completion over more projects than one forge page says hasMore; a narrower one does not', async () => {
    for (const peer of OTHERS) {
      const token = stack.forge.forge.createPersonalAccessToken(peer.username, ['api']);
      for (const name of ['hello-forge', 'handbook']) {
        const response = await fetch(`${stack.forge.forge.url}/api/v4/projects/${encodeURIComponent(`${peer.username}/${name}`)}/members`, {
          method: 'POST',
          headers: { 'private-token': token, 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: stack.forge.user.id, access_level: 30 }),
        });
        expect(response.status).toBe(201);
      }
    }
    const ref = { type: 'ref/resource' as const, uri: 'forge://projects/{project}/files/{ref}/{+path}' };
    for (const c of await connectSdkClients(stack.url, pat)) {
      try {
        const all = await c.complete({ ref, argument: { name: 'project', value: '' } });
        expect(all.completion.values).toHaveLength(20);
        expect(all.completion.hasMore).toBe(true);
        expect(all.completion.total).toBeUndefined();
        const narrow = await c.complete({ ref, argument: { name: 'project', value: 'handbook' } });
        expect(narrow.completion.values).toHaveLength(OTHERS.length + 1);
        expect(narrow.completion).toMatchObject({ hasMore: false, total: OTHERS.length + 1 });
      } finally {
        await c.close();
      }
    }
  });
});
