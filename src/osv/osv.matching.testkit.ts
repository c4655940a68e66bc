// Shared by the matching tests (osv.matcher.test.ts, osv.paging.test.ts): an index built from records, and a
// package query run as the service runs it (rows looked up by package, judged by a RowMatcher, one page).
import { normalizePackageName } from './ecosystems/index.ts';
import { CorpusIndex } from './osv.index.ts';
import { RowMatcher } from './osv.matcher.ts';
import { matchRows, type PageLimits } from './osv.paging.ts';
import { computeIndexRows, normalizeRepo } from './osv.rows.ts';
import type { OsvRecord } from './osv.schema.ts';

/** An index of `records`, applied in id order and sealed. */
export function indexOfRecords(records: readonly OsvRecord[]): CorpusIndex {
  const index = new CorpusIndex();
  for (const r of [...records].sort((a, b) => (a.id < b.id ? -1 : 1)))
    index.applyVuln(r.id, r.modified, r.withdrawn ? null : computeIndexRows(r));
  index.seal();
  return index;
}

/** Page limits without a deadline. */
export const limits = (pageSize = 3000, after?: string): PageLimits => ({
  pageSize,
  after,
  deadline: Number.MAX_SAFE_INTEGER,
  now: () => 0,
});

/** The ids a query finds, as the service looks rows up (§4.2 step 1). */
export function query(index: CorpusIndex, ecosystem: string, name: string, version: string, pageSize?: number, after?: string) {
  const norm = ecosystem === 'GIT' ? normalizeRepo(name) : ecosystem === '' ? name : normalizePackageName(ecosystem, name);
  const rows = ecosystem === '' ? index.nameRows(norm) : index.packageRows(ecosystem, norm);
  const page = matchRows(rows, new RowMatcher({ ecosystem, version }), limits(pageSize, after));
  return { ids: page.vulns.map((v) => v.id), cursor: page.cursor };
}
