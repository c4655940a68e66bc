import { defineRequirements } from '../../test/support/requirements.ts';

/**
 * Requirements of PlatformOSV, one id per rule of osv-facts.md and issue 6 (STYLE.md 12). Every test that pins a
 * requirement cites its id in brackets in its name, for example `it('[OSV-DEDUP] returns each id once …')`;
 * osv.requirements.test.ts fails when an id has no citing test.
 */
export const OSV_REQUIREMENTS = defineRequirements([
  // API surface and envelope
  {
    id: 'OSV-API-SHAPES',
    source: 'osv-facts §1',
    rule: 'Query answers full records; QueryBatch answers {id, modified} only, results[i] for queries[i]; GetVuln one full record',
  },
  { id: 'OSV-API-EMPTY', source: 'osv-facts §1', rule: 'empty fields are left out: no hits is {}, an empty batch item is {}' },
  {
    id: 'OSV-API-ERRORS-HTTP',
    source: 'osv-facts §1; issue 6 brief',
    rule: 'HTTP errors are {"code": <gRPC code>, "message"} with 400/404/500',
  },
  { id: 'OSV-BOTH-TRANSPORTS', source: 'issue 6 item 1', rule: 'gRPC and the HTTP mappings behave the same, tokens work across them' },
  { id: 'OSV-AUTH', source: 'spec "Authentication"', rule: 'every RPC needs a platform token carrying CAP_PLATFORM_OSV_READ' },
  // Validation (§2)
  {
    id: 'OSV-VALIDATION-ORDER',
    source: 'osv-facts §2',
    rule: 'queries are checked in OSV.dev order with its exact messages; the 120-case matrix gives its statuses',
  },
  { id: 'OSV-ONEOF', source: 'osv-facts §1, §2', rule: 'commit and version together fail with 400 before any handler logic' },
  {
    id: 'OSV-PURL-UNKNOWN',
    source: 'osv-facts §2, §4.4',
    rule: 'a purl of an unknown type is an empty result (200), a batch item gets an empty result',
  },
  {
    id: 'OSV-BATCH-LIMIT',
    source: 'osv-facts §2, §3',
    rule: 'more than 1000 queries: too many queries, checked after every item is parsed and before item errors',
  },
  {
    id: 'OSV-BATCH-ITEM-ERROR',
    source: 'osv-facts §2',
    rule: 'the first invalid item fails the whole batch: error in query at index i: rpc error: code = InvalidArgument desc = …',
  },
  {
    id: 'OSV-GETVULN-ERRORS',
    source: 'osv-facts §2',
    rule: 'GetVuln: ID is required, ID is too long (over 100 bytes), Vulnerability not found',
  },
  {
    id: 'OSV-GETVULN-ALIASES',
    source: 'osv-facts §2, §5',
    rule: 'an unknown id named in an alias group: Vulnerability not found, but the following aliases were: A B',
  },
  { id: 'OSV-GETVULN-WITHDRAWN', source: 'osv-facts §5', rule: 'GetVuln returns withdrawn records' },
  {
    id: 'OSV-TOKENS-INVALID',
    source: 'osv-facts §2, §3',
    rule: 'an unparseable page token is invalid cursor; FIRST_PAGE_TOKEN means start over',
  },
  // Results, pages, budgets (§3)
  {
    id: 'OSV-ORDER',
    source: 'osv-facts §3; issue 6 item 2',
    rule: 'ids in ascending byte order on both databases; batch results in input order',
  },
  { id: 'OSV-DEDUP', source: 'osv-facts §3', rule: 'one id at most once per query, also across pages' },
  {
    id: 'OSV-PAGES',
    source: 'osv-facts §3; issue 6 item 1',
    rule: 'pages of 3000 (1000 per batch item, configurable), opaque tokens carrying the last id that survive restarts',
  },
  {
    id: 'OSV-DEADLINE',
    source: 'osv-facts §3; issue 6 item 5',
    rule: 'when the time budget (20 s / 35 s) passes, the partial page comes back with a token',
  },
  { id: 'OSV-SIZE-LIMIT', source: 'osv-facts §3', rule: 'a Query page stops growing past the response soft size limit, with a token' },
  {
    id: 'OSV-ANSWERS',
    source: 'issue 6 benchmark (Query p99)',
    rule: 'Query answers spliced from stored JSON text and protobuf bytes equal the per-call conversion; a replaced record gets new ones',
  },
  {
    id: 'OSV-BATCH-BOUND',
    source: 'issue 6 item 5',
    rule: 'memory stays bounded for batches asking for large packages: one answer holds a bounded number of results',
  },
  // Matching (§4)
  {
    id: 'OSV-MATCH-KEYS',
    source: 'osv-facts §4.1',
    rule: 'rows are filed under the full ecosystem, its base and the Ubuntu variant without :Pro/:LTS',
  },
  {
    id: 'OSV-MATCH-PEP503',
    source: 'osv-facts §4.1',
    rule: 'PyPI names are PEP 503 normalised; every other name is exact and case-sensitive',
  },
  {
    id: 'OSV-MATCH-ROWS',
    source: 'osv-facts §4.1',
    rule: 'one index row per ECOSYSTEM/SEMVER range and per chunk of ≤1000 versions; an OR over rows',
  },
  { id: 'OSV-MATCH-NOVERSION', source: 'osv-facts §4.2 step 2', rule: 'without a version every record listing the package matches' },
  {
    id: 'OSV-MATCH-VERSIONS-FIRST',
    source: 'osv-facts §4.2 step 6',
    rule: 'a listed version that compares equal matches (PyPI 3.1 = 3.1.0, NuGet four parts)',
  },
  {
    id: 'OSV-MATCH-EVENTS',
    source: 'osv-facts §4.2 step 6',
    rule: 'reverse walk over sorted events: introduced affects, last_affected only when equal, fixed and limit do not',
  },
  {
    id: 'OSV-MATCH-STRING',
    source: 'osv-facts §4.2 steps 5, 7',
    rule: 'no comparator or an unparseable version: exact membership, then normalised tags and canonical forms',
  },
  { id: 'OSV-MATCH-BARE-DISTRO', source: 'osv-facts §4.2 step 6', rule: 'a bare Alpine or Ubuntu query matches enumerated versions only' },
  {
    id: 'OSV-MATCH-NOECOSYSTEM',
    source: 'osv-facts §4.2 step 3',
    rule: 'a version without an ecosystem judges each row with its own ecosystem',
  },
  { id: 'OSV-MATCH-WITHDRAWN', source: 'osv-facts §4.1; issue 6 item 1', rule: 'withdrawn records are never matched' },
  {
    id: 'OSV-MATCH-COMMIT',
    source: 'osv-facts §4.2 (commits); issue 6 item 1',
    rule: 'commit queries match introduced/last_affected hashes of GIT ranges of live records',
  },
  {
    id: 'OSV-PURL-MAP',
    source: 'osv-facts §4.4',
    rule: 'every listed purl type maps to its ecosystem and name; Debian distro qualifier to Debian:<n>',
  },
  { id: 'OSV-DIALECTS', source: 'issue 6 item 2, item 4', rule: 'SQLite and PostgreSQL give the same answers' },
  // Import and refresh (issue item 4)
  {
    id: 'OSV-IMPORT-SOURCES',
    source: 'issue 6 item 4',
    rule: 'JSON files, directories, JSON Lines and OSV.dev all.zip archives are imported',
  },
  {
    id: 'OSV-IMPORT-VALIDATE',
    source: 'issue 6 item 4',
    rule: 'each record is validated against the OSV schema; invalid ones are reported with id and reason and never half-imported',
  },
  {
    id: 'OSV-IMPORT-UPSERT',
    source: 'issue 6 item 4',
    rule: 'upsert by id, the copy with the newer modified wins; re-running changes nothing',
  },
  { id: 'OSV-IMPORT-WITHDRAWN', source: 'issue 6 item 4', rule: 'a withdrawn record keeps its record row and loses its index rows' },
  {
    id: 'OSV-IMPORT-RESUME',
    source: 'issue 6 item 4',
    rule: 'an interrupted or killed import leaves whole batches; a re-run completes it without duplicates',
  },
  {
    id: 'OSV-IMPORT-BULK',
    source: 'issue 20 item 3',
    rule: 'an import into an empty SQLite corpus builds the secondary indexes once at its end; after any import (even a killed one, once re-run) they are as the migrations made them, and the last commit syncs the WAL',
  },
  {
    id: 'OSV-INDEX-STRINGS',
    source: 'issue 20',
    rule: 'strings of replaced records are freed: once refreshes have interned a set amount, the replica builds its index again in the background and swaps it in',
  },
  { id: 'OSV-REFRESH', source: 'issue 6 item 4', rule: 'every replica picks up an import from the database without a restart' },
  {
    id: 'OSV-HEAP-SETTLED',
    source: 'issue 20',
    rule: 'once the work after a build or a refresh is done, a replica runs one full collection, without exposing gc to any context',
  },
  {
    id: 'OSV-HEAP-IDLE',
    source: 'issue 20',
    rule: 'a replica whose old generation grew by a set amount runs one full collection once its event loop has been quiet for a moment, never while busy and at most once per interval',
  },
  {
    id: 'OSV-HEAP-PRETENURING',
    source: 'issue 20',
    rule: "a replica turns V8's allocation-site pretenuring off when PlatformOSV starts, so objects of calls are allocated in the young generation and die there",
  },
]);
