import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from './proto-files.ts';
import { GENERATED_DIR, generateProtoCode } from './proto-gen.ts';

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

/** STYLE.md 14: the generated protobuf code is checked for freshness (regenerating must change nothing). */
describe('generated gRPC code', () => {
  it('matches what `npm run proto:gen` (protoc-gen-es and proto-loader-gen-types) produces from proto/ now', { timeout: 60_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'proto-gen-'));
    try {
      generateProtoCode(dir);
      const fresh = filesUnder(join(dir, relative(REPOSITORY_ROOT, GENERATED_DIR)));
      expect(fresh.size).toBeGreaterThan(0);
      expect([...fresh.keys()]).toContain('es/platform/v1/osv_pb.ts');
      const committed = filesUnder(GENERATED_DIR);
      const hint = 'src/grpc/generated is stale: run `npm run proto:gen` and commit the result';
      expect([...committed.keys()].sort(), hint).toEqual([...fresh.keys()].sort());
      for (const [path, text] of fresh) expect(committed.get(path), `${hint} (${path})`).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
