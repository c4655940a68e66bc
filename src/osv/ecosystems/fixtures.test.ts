// Every upstream comparison fixture (test/fixtures/osv/version-fixtures, ~72k lines) must hold in both directions, under
// every ecosystem the README maps the file to. No skip list.
import { describe, expect, it } from 'vitest';
import { comparatorFor } from './index.ts';
import { FIXTURE_ECOSYSTEMS, FIXTURE_LINE_COUNTS, fixtureFiles, readFixture } from './fixtures.testkit.ts';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const OP_TEXT = { '-1': '<', '0': '=', '1': '>' } as const;

describe('version fixtures', () => {
  const files = fixtureFiles();

  it('maps every fixture file to its ecosystems (a new upstream file must be mapped)', () => {
    expect(files).toEqual(Object.keys(FIXTURE_ECOSYSTEMS).sort());
  });

  for (const file of files) {
    const lines = readFixture(file);
    for (const ecosystem of FIXTURE_ECOSYSTEMS[file] ?? []) {
      it(`${ecosystem}: ${file} (${lines.length} lines, both directions)`, () => {
        expect(lines.length).toBe(FIXTURE_LINE_COUNTS[file]);
        const order = comparatorFor(ecosystem);
        if (order === undefined) throw new Error(`no comparator for ${ecosystem}`);
        const parsed = new Map<string, unknown>();
        const parse = (v: string): unknown => {
          let p = parsed.get(v);
          if (p === undefined) {
            p = order.parse(v);
            if (p === undefined) throw new Error(`${file}: ${ecosystem} refused "${v}"`);
            parsed.set(v, p);
          }
          return p;
        };
        const failures: string[] = [];
        for (const { a, b, op, line } of lines) {
          const pa = parse(a);
          const pb = parse(b);
          const ab = sign(order.compare(pa, pb));
          const ba = sign(order.compare(pb, pa));
          if (ab !== op || ba !== -op) {
            failures.push(`${file}:${line}: ${a} ${OP_TEXT[op]} ${b} but got ${OP_TEXT[ab as -1]} / reversed ${OP_TEXT[ba as -1]}`);
          }
        }
        expect(failures.slice(0, 25), `${failures.length} of ${lines.length} lines fail`).toEqual([]);
      });
    }
  }
});
