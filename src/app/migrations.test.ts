// The migration pin: every landed migration keeps its name, its place and its content. A landed migration may have
// run on databases we cannot see; editing it would leave them with a schema the code no longer describes.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PLATFORM_MIGRATIONS } from './migrations.ts';

interface Pin {
  name: string;
  /** The file that defines it, from the repository root; named after the migration. */
  file: string;
  sha256: string;
}

const root = join(import.meta.dirname, '..', '..');
const pins = JSON.parse(readFileSync(join(import.meta.dirname, 'migrations.pin.json'), 'utf8')) as Pin[];

/**
 * The hash of a migration's tokens, not its bytes: line endings, indentation, comments, quote style and trailing
 * commas do not change what a migration does (and a formatter run over the tree must not look like an edit); a
 * changed token (a column, a type, a name, an import) does.
 */
function migrationHash(source: string): string {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source.replace(/\r\n?/g, '\n'));
  const tokens: string[] = [];
  // Which open brace a `}` closes: a block's, or a template substitution's (then the template goes on).
  const braces: ('block' | 'template')[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.OpenBraceToken) braces.push('block');
    else if (kind === ts.SyntaxKind.TemplateHead) braces.push('template');
    else if (kind === ts.SyntaxKind.CloseBraceToken && braces.pop() === 'template') {
      kind = scanner.reScanTemplateToken(false);
      if (kind === ts.SyntaxKind.TemplateMiddle) braces.push('template');
    }
    tokens.push(kind === ts.SyntaxKind.StringLiteral ? JSON.stringify(scanner.getTokenValue()) : scanner.getTokenText());
  }
  const kept = tokens.filter((token, i) => !(token === ',' && [')', ']', '}'].includes(tokens[i + 1] ?? '')));
  return createHash('sha256').update(kept.join('\u0000')).digest('hex');
}

/** Every file under src/ named like a migration (`YYYYMMDD_NNNN_subject.ts`), relative to the repository root. */
function migrationFiles(dir = join(root, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return migrationFiles(path);
    return /^\d{8}_\d{4}_\w+\.ts$/.test(entry.name) ? [relative(root, path).split('\\').join('/')] : [];
  });
}

describe('landed migrations', () => {
  it('the list has the pinned names in the pinned order, new ones only at the end', () => {
    const names = PLATFORM_MIGRATIONS.map((m) => m.name);
    expect(names.slice(0, pins.length), 'a landed migration was renamed, removed or moved in the list').toEqual(pins.map((p) => p.name));
    for (const name of names.slice(pins.length)) expect.fail(`migration ${name} is not pinned: add it to src/app/migrations.pin.json`);
    // The migrator applies by name; the list's order must be that order, or a reader of the list is misled.
    expect(names).toEqual([...names].sort());
  });

  it('no landed migration was edited', () => {
    for (const pin of pins) {
      const hash = migrationHash(readFileSync(join(root, pin.file), 'utf8'));
      if (hash !== pin.sha256) expect.fail(`landed migration ${pin.name} was edited; add a new migration instead`);
    }
  });

  it('each pinned file defines the migration of its name, and every migration file is listed', async () => {
    for (const pin of pins) {
      expect(pin.file.endsWith(`/${pin.name}.ts`), `${pin.file} is not named after ${pin.name}`).toBe(true);
      const exported = Object.values((await import(pathToFileURL(join(root, pin.file)).href)) as Record<string, unknown>);
      const listed = PLATFORM_MIGRATIONS.find((m) => m.name === pin.name);
      expect(listed && exported.includes(listed), `${pin.file} does not export the listed ${pin.name}`).toBe(true);
    }
    expect(migrationFiles().sort(), 'a migration file is missing from the list or the pin').toEqual(pins.map((p) => p.file).sort());
  });

  it('the hash ignores layout and comments but not a changed token', () => {
    const landed =
      "export const m = {\n  name: '1',\n  async up(db) {\n    await db.schema.createTable('t').addColumn('id', 'text').execute();\n  },\n};\n";
    const reformatted =
      '// a comment\r\nexport const m = { name: "1", async up(db) { await db.schema.createTable("t").addColumn("id", "text").execute(); } };';
    expect(migrationHash(reformatted)).toBe(migrationHash(landed));
    expect(migrationHash(landed.replace("'text'", "'integer'"))).not.toBe(migrationHash(landed));
    expect(migrationHash('const q = sql`a ${x} b`;')).not.toBe(migrationHash('const q = sql`a ${x}   b`;'));
  });
});
