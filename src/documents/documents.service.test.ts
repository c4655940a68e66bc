import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { fakeClock } from '../core/clock.ts';
import type { DocumentsTables } from './documents.table.ts';
import { isAppError } from '../core/errors.ts';
import { parseDocumentsConfig } from './documents.config.ts';
import { createDocumentsService } from './documents.service.ts';
import { createPageTokenCodec } from './page-token.ts';

/** DocumentsService rules that need no database: they must hold before any query runs. */
describe('DocumentsService without a database', () => {
  const queried: string[] = [];
  // Any use of the database records the member touched and fails, so a test sees whether a query was attempted.
  const db = new Proxy({} as Kysely<DocumentsTables>, {
    get(_target, property) {
      queried.push(String(property));
      throw new Error(`the database was used (${String(property)})`);
    },
  });
  const service = createDocumentsService({
    db,
    dialect: 'postgres',
    clock: fakeClock(),
    config: parseDocumentsConfig({}),
    pageTokens: createPageTokenCodec([Buffer.alloc(32, 1)]),
  });
  const actor = { accountId: 'a', humanId: 'h' };

  it('answers NOT_FOUND for a delete id that is not a UUID without a query (regression: a NUL in the id was INTERNAL on PostgreSQL)', async () => {
    for (const id of ['abc\u0000def', 'not-a-uuid', '', `${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}\u0000`, '../x']) {
      const error: unknown = await service.remove(actor, id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isAppError(error) && error.code, JSON.stringify(id)).toBe('not_found');
    }
    expect(queried).toEqual([]);
  });
});
