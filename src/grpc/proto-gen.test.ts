import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED_DIR, generateProtoTypes } from './proto-gen.ts';

function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

/** STYLE.md 14: the generated protobuf types are checked for freshness (regenerating must change nothing). */
describe('generated gRPC types', () => {
  it('match what `npm run proto:gen` produces from proto/ now', () => {
    const dir = mkdtempSync(join(tmpdir(), 'proto-gen-'));
    try {
      generateProtoTypes(dir);
      const fresh = filesUnder(dir);
      const committed = filesUnder(GENERATED_DIR);
      const hint = 'src/grpc/generated is stale: run `npm run proto:gen` and commit the result';
      expect([...committed.keys()].sort(), hint).toEqual([...fresh.keys()].sort());
      for (const [path, text] of fresh) expect(committed.get(path), `${hint} (${path})`).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
