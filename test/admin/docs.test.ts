import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/shared.ts';
import { openHarness, type Harness } from './admin-harness.ts';

interface Example {
  line: string;
  method: string;
  path: string;
  tokenVar: string;
  body: string | undefined;
  expect: number;
}

/** The curl examples of docs/admin.md, in order, with the status each is expected to give (200 unless noted). */
function examples(): Example[] {
  const text = readFileSync(join(repoRoot, 'docs', 'admin.md'), 'utf8');
  const out: Example[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let expected = 200;
    for (const line of (block[1] ?? '').split('\n')) {
      const note = /^# expect (\d{3})/.exec(line);
      if (note) expected = Number(note[1]);
      if (!line.startsWith('curl ')) continue;
      const path = /"\$BASE([^"]+)"/.exec(line)?.[1];
      const tokenVar = /Bearer \$(\w+)/.exec(line)?.[1];
      if (!path || !tokenVar) throw new Error(`unparsable example: ${line}`);
      out.push({
        line,
        method: /-X (\w+)/.exec(line)?.[1] ?? 'GET',
        path,
        tokenVar,
        body: /-d '([^']*)'/.exec(line)?.[1],
        expect: expected,
      });
      expected = 200;
    }
  }
  return out;
}

describe('docs/admin.md', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness('sqlite');
  });
  afterAll(async () => h.close());

  it('runs every copy-paste example against the shipped catalog with the documented outcome', async () => {
    const list = examples();
    expect(list.length).toBeGreaterThan(10);
    const member = await h.platform.ctx.identity.createToken({ humanId: h.platform.owner.human_id, plane: 'member' });
    const tokens: Record<string, string> = { TOKEN: h.token, MEMBER_TOKEN: member.token };
    for (const example of list) {
      const token = tokens[example.tokenVar];
      if (!token) throw new Error(`unknown token variable ${example.tokenVar}`);
      const r = await h.call(example.method, example.path, { token, ...(example.body !== undefined ? { rawBody: example.body } : {}) });
      expect(r.status, `${example.line}\n${r.text.slice(0, 300)}`).toBe(example.expect);
    }
  });
});
