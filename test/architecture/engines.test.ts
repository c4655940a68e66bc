/**
 * Every package the lockfile installs must run on the Node.js lines the platform supports (README: ≥ 20.19; Node 22
 * and 24 too). A transitive upgrade that drops Node 20 shows up here instead of as a runtime surprise: that is how
 * `cookie@2` (engines `>=22`, pulled in by `@fastify/cookie` ≥ 11.1.1 and `light-my-request` ≥ 6.8) was found and
 * kept out, by pinning `@fastify/cookie` 11.1.0 and overriding `light-my-request` to 6.6.0 in package.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const SUPPORTED_NODE = ['20.19.0', '22.13.0', '24.0.0'];

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  dev?: boolean;
}

function lockedPackages(): [string, LockEntry][] {
  const lock = JSON.parse(readFileSync(join(import.meta.dirname, '../../package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  return Object.entries(lock.packages).filter(([path]) => path !== '');
}

describe('installed packages and the supported Node.js lines', () => {
  it('reads engine ranges from the lockfile (the check has something to check)', () => {
    const withEngines = lockedPackages().filter(([, entry]) => typeof (entry.engines as { node?: string })?.node === 'string');
    expect(withEngines.length).toBeGreaterThan(50);
  });

  it('accepts Node 20.19, 22 and 24 for every locked package', () => {
    const refused: string[] = [];
    for (const [path, entry] of lockedPackages()) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range === undefined) continue;
      for (const node of SUPPORTED_NODE)
        if (!semver.satisfies(node, range, { includePrerelease: false }))
          refused.push(`${path}@${entry.version ?? '?'} wants node ${range}, not ${node}`);
    }
    expect(refused).toEqual([]);
  });

  it('would refuse a package that wants Node 22 or newer', () => {
    expect(semver.satisfies('20.19.0', '>=22')).toBe(false);
  });
});
