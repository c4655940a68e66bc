// docs/osv.md stays true: every variable it lists is parsed by the OSV config (and the other way round), the
// commands and options it shows exist, and its defaults are the parser's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../test/support/shared.ts';
import { osvEnvSpec, parseOsvConfig } from './osv.config.ts';
import { registerOsvCommands } from './osv.command.ts';

const doc = readFileSync(join(repoRoot, 'docs', 'osv.md'), 'utf8');

describe('docs/osv.md', () => {
  it('lists exactly the OSV variables, with their defaults', () => {
    const rows = [...doc.matchAll(/^\| `(OSV_[A-Z_]+)` \| (\d+) \|/gmu)].map((m) => [m[1], Number(m[2])]);
    expect(rows.map((r) => r[0]).sort()).toEqual(Object.keys(osvEnvSpec).sort());
    const defaults = parseOsvConfig({}) as Record<string, number>;
    for (const [name, value] of rows) expect(defaults[name as string], name as string).toBe(value);
  });

  it('shows only commands and options that exist', () => {
    const program = new Command('platform');
    registerOsvCommands(program, { env: {}, out: () => undefined, err: () => undefined }, () =>
      Promise.reject(new Error('no command runs in this test')),
    );
    const osv = program.commands.find((c) => c.name() === 'osv');
    const commands = new Map(osv?.commands.map((c) => [c.name(), c.options.map((o) => o.long)]) ?? []);
    for (const m of doc.matchAll(/platform osv (\w+)([^\n`]*)/gu)) {
      const options = commands.get(m[1] as string);
      expect(options, m[0]).toBeDefined();
      for (const flag of (m[2] ?? '').match(/--[a-z-]+/gu) ?? []) expect(options, `${m[0]}: ${flag}`).toContain(flag);
    }
  });
});
