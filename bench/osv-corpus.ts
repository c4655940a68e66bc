// A synthetic OSV corpus for the benchmark (bench/osv.bench.ts): deterministic, valid against the OSV schema, with
// ecosystems in roughly OSV.dev's proportions, 1–20 ranges per record, up to 400 enumerated versions, and a few
// popular packages holding hundreds of records each. It also samples realistic queries (hits, near misses,
// unknown packages, purls) while it generates.
import type { OsvAffected, OsvRange, OsvRecord } from '../src/osv/osv.schema.ts';

/** xorshift32: fast, deterministic, good enough to spread data. */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

type Family = 'semver' | 'pypi' | 'maven' | 'dpkg' | 'apk' | 'rpm' | 'tags' | 'git';

interface EcoSpec {
  ecosystem: string;
  /** Share of records (percent; normalised). */
  weight: number;
  family: Family;
  prefix: string;
  /** Distinct package names in the pool. */
  pool: number;
  /** Release suffixes (Debian:12, Ubuntu:22.04:LTS, Alpine:v3.19); one record may cover several. */
  releases?: string[];
  /** Chance that an affected entry enumerates versions. */
  versions: number;
  /** npm's malicious-package records: one entry, one or two versions, no ranges, mostly unique names. */
  malicious?: boolean;
}

// Proportions after OSV.dev's published per-ecosystem counts (malicious npm packages dominate; distributions next).
const ECOSYSTEMS: EcoSpec[] = [
  { ecosystem: 'npm', weight: 22, family: 'semver', prefix: 'MAL', pool: 400_000, versions: 1, malicious: true },
  { ecosystem: 'npm', weight: 6, family: 'semver', prefix: 'GHSA', pool: 12_000, versions: 0.1 },
  {
    ecosystem: 'Ubuntu',
    weight: 11,
    family: 'dpkg',
    prefix: 'UBUNTU-CVE',
    pool: 6_000,
    releases: ['Ubuntu:20.04:LTS', 'Ubuntu:22.04:LTS', 'Ubuntu:24.04:LTS', 'Ubuntu:Pro:18.04:LTS', 'Ubuntu:Pro:16.04:LTS'],
    versions: 0.5,
  },
  {
    ecosystem: 'Debian',
    weight: 10,
    family: 'dpkg',
    prefix: 'DEBIAN-CVE',
    pool: 8_000,
    releases: ['Debian:11', 'Debian:12', 'Debian:13'],
    versions: 0.3,
  },
  { ecosystem: 'GIT', weight: 7, family: 'git', prefix: 'CVE', pool: 20_000, versions: 0.6 },
  {
    ecosystem: 'SUSE',
    weight: 4,
    family: 'rpm',
    prefix: 'SUSE-SU',
    pool: 6_000,
    releases: ['SUSE:Linux Enterprise Server 15 SP5', 'SUSE:Linux Enterprise Server 12 SP5'],
    versions: 0,
  },
  {
    ecosystem: 'openSUSE',
    weight: 2,
    family: 'rpm',
    prefix: 'openSUSE-SU',
    pool: 6_000,
    releases: ['openSUSE:Leap 15.5', 'openSUSE:Tumbleweed'],
    versions: 0,
  },
  { ecosystem: 'PyPI', weight: 6, family: 'pypi', prefix: 'PYSEC', pool: 9_000, versions: 0.8 },
  { ecosystem: 'Wolfi', weight: 3, family: 'apk', prefix: 'CGA', pool: 4_000, versions: 0 },
  { ecosystem: 'Chainguard', weight: 2, family: 'apk', prefix: 'CGA', pool: 4_000, versions: 0 },
  {
    ecosystem: 'Alpine',
    weight: 3,
    family: 'apk',
    prefix: 'ALPINE-CVE',
    pool: 3_000,
    releases: ['Alpine:v3.18', 'Alpine:v3.19', 'Alpine:v3.20'],
    versions: 0,
  },
  {
    ecosystem: 'Red Hat',
    weight: 4,
    family: 'rpm',
    prefix: 'RHSA',
    pool: 5_000,
    releases: ['Red Hat:enterprise_linux:8::appstream', 'Red Hat:enterprise_linux:9::baseos'],
    versions: 0,
  },
  { ecosystem: 'AlmaLinux', weight: 2, family: 'rpm', prefix: 'ALSA', pool: 4_000, releases: ['AlmaLinux:8', 'AlmaLinux:9'], versions: 0 },
  {
    ecosystem: 'Rocky Linux',
    weight: 1,
    family: 'rpm',
    prefix: 'RLSA',
    pool: 4_000,
    releases: ['Rocky Linux:8', 'Rocky Linux:9'],
    versions: 0,
  },
  { ecosystem: 'Linux', weight: 3, family: 'tags', prefix: 'CVE', pool: 1, versions: 0.2 },
  { ecosystem: 'Maven', weight: 3, family: 'maven', prefix: 'GHSA', pool: 8_000, versions: 0.8 },
  { ecosystem: 'Go', weight: 1.5, family: 'semver', prefix: 'GO', pool: 3_000, versions: 0 },
  { ecosystem: 'Packagist', weight: 1, family: 'semver', prefix: 'GHSA', pool: 3_000, versions: 0.7 },
  { ecosystem: 'Android', weight: 1, family: 'tags', prefix: 'ASB-A', pool: 300, versions: 1 },
  { ecosystem: 'OSS-Fuzz', weight: 1, family: 'tags', prefix: 'OSV', pool: 1_500, versions: 1 },
  { ecosystem: 'crates.io', weight: 0.5, family: 'semver', prefix: 'RUSTSEC', pool: 1_500, versions: 0 },
  { ecosystem: 'RubyGems', weight: 0.5, family: 'semver', prefix: 'GHSA', pool: 1_500, versions: 0.7 },
  { ecosystem: 'NuGet', weight: 0.5, family: 'semver', prefix: 'GHSA', pool: 1_500, versions: 0.7 },
  { ecosystem: 'Hex', weight: 0.25, family: 'semver', prefix: 'GHSA', pool: 500, versions: 0.7 },
  { ecosystem: 'Pub', weight: 0.25, family: 'semver', prefix: 'GHSA', pool: 500, versions: 0.7 },
];

const TOTAL_WEIGHT = ECOSYSTEMS.reduce((s, e) => s + e.weight, 0);
const WORDS =
  'buffer overflow remote attacker crafted request allows denial service memory corruption arbitrary code execution via improper validation input parser library function heap use after free out of bounds read write integer cross site scripting injection path traversal authentication bypass'.split(
    ' ',
  );
const HEX = '0123456789abcdef';

/** A query the benchmark sends, with the ids it must find when the corpus is loaded. */
export interface SampleQuery {
  query: { package: { ecosystem?: string; name?: string; purl?: string }; version?: string } | { commit: string };
  kind: 'hit' | 'range' | 'miss' | 'unknown' | 'purl' | 'popular' | 'commit';
}

export interface CorpusOptions {
  records: number;
  seed?: number;
  /** How many queries to sample. */
  samples?: number;
}

/** Generates records one at a time (so 500,000 records never sit in memory) and samples queries along the way. */
export class SyntheticCorpus {
  /** Sampled queries per kind (each a reservoir of up to `samples`). */
  readonly pools = new Map<SampleQuery['kind'], SampleQuery[]>();
  private readonly seenByKind = new Map<SampleQuery['kind'], number>();
  private readonly random: () => number;
  private readonly wanted: number;

  constructor(private readonly options: CorpusOptions) {
    this.random = rng(options.seed ?? 20261121);
    this.wanted = options.samples ?? 5000;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  private int(max: number): number {
    return Math.floor(this.random() * max);
  }

  /** A package index: one record in ten goes to one of 20 popular packages (hundreds of records each at 500k). */
  private packageIndex(max: number): number {
    if (max > 20 && this.random() < 0.1) return this.int(20);
    return this.int(max);
  }

  private version(family: Family, major: number, minor: number, patch: number, build = 1): string {
    switch (family) {
      case 'pypi':
        return patch === 0 ? `${major}.${minor}` : `${major}.${minor}.${patch}`;
      case 'maven':
        return `${major}.${minor}.${patch}`;
      case 'dpkg':
        return `${major}.${minor}.${patch}-${build}`;
      case 'apk':
        return `${major}.${minor}.${patch}-r${build}`;
      case 'rpm':
        return `${major}.${minor}.${patch}-${build}.el9`;
      case 'tags':
        return `v${major}.${minor}.${patch}`;
      default:
        return `${major}.${minor}.${patch}`;
    }
  }

  private commit(): string {
    let s = '';
    for (let i = 0; i < 40; i++) s += HEX[this.int(16)];
    return s;
  }

  private text(words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.pick(WORDS));
    return out.join(' ');
  }

  private packageName(spec: EcoSpec, index: number): string {
    if (spec.ecosystem === 'Linux') return 'Kernel';
    if (spec.ecosystem === 'Maven') return `org.example${index % 97}:artifact-${index}`;
    if (spec.ecosystem === 'Go') return `github.com/org${index % 211}/module${index}`;
    if (spec.ecosystem === 'Packagist') return `vendor${index % 101}/package${index}`;
    if (spec.ecosystem === 'Android') return `platform/component${index}`;
    return `${spec.ecosystem === 'PyPI' ? 'Py_Pkg' : 'pkg'}-${index}`;
  }

  private sample(q: SampleQuery): void {
    const seen = (this.seenByKind.get(q.kind) ?? 0) + 1;
    this.seenByKind.set(q.kind, seen);
    let pool = this.pools.get(q.kind);
    if (pool === undefined) {
      pool = [];
      this.pools.set(q.kind, pool);
    }
    if (pool.length < this.wanted) pool.push(q);
    else {
      const j = this.int(seen);
      if (j < this.wanted) pool[j] = q;
    }
  }

  /**
   * A query mix like a scanner's traffic: most packages it asks about are not affected (a version above every fix,
   * or a package without records), a third are hits, and a few ask about very popular packages.
   */
  mix(count: number): SampleQuery[] {
    const shares: [SampleQuery['kind'], number][] = [
      ['miss', 0.5],
      ['unknown', 0.08],
      ['hit', 0.2],
      ['range', 0.14],
      ['popular', 0.03],
      ['purl', 0.03],
      ['commit', 0.02],
    ];
    const out: SampleQuery[] = [];
    for (const [kind, share] of shares) {
      const pool = this.pools.get(kind) ?? [];
      for (let i = 0; i < Math.round(count * share) && pool.length > 0; i++) out.push(pool[i % pool.length] as SampleQuery);
    }
    // A fixed shuffle, so batches mix kinds.
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j] as SampleQuery, out[i] as SampleQuery];
    }
    return out;
  }

  /** The record with sequence number `n`. */
  record(n: number): OsvRecord {
    let w = this.random() * TOTAL_WEIGHT;
    let spec = ECOSYSTEMS[0] as EcoSpec;
    for (const e of ECOSYSTEMS) {
      w -= e.weight;
      if (w <= 0) {
        spec = e;
        break;
      }
    }
    const year = 2015 + (n % 11);
    const id = `${spec.prefix}-${year}-${String(n).padStart(7, '0')}`;
    const modified = new Date(Date.UTC(year, n % 12, 1 + (n % 28), n % 24, n % 60, n % 60, n % 1000)).toISOString();
    const record: OsvRecord = {
      id,
      modified,
      published: modified,
      schema_version: '1.7.3',
      summary: this.text(8),
      details: this.text(60 + this.int(100)),
      aliases: spec.prefix === 'CVE' ? [] : [`CVE-${year}-${String(n).padStart(6, '0')}`],
      references: Array.from({ length: 1 + this.int(5) }, (_, i) => ({
        type: i === 0 ? 'ADVISORY' : 'WEB',
        url: `https://example.com/advisories/${id}/${i}`,
      })),
      database_specific: { source: 'synthetic', severity: this.pick(['LOW', 'MODERATE', 'HIGH', 'CRITICAL']) },
    };
    if (this.random() < 0.5) record.severity = [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }];

    if (spec.malicious) {
      const name = `malicious-${this.int(spec.pool)}`;
      const v = this.version('semver', this.int(3), this.int(10), this.int(10));
      record.affected = [{ package: { ecosystem: 'npm', name }, versions: [v] }];
      if (this.random() < 0.02) this.sample({ query: { package: { ecosystem: 'npm', name }, version: v }, kind: 'hit' });
      return record;
    }

    const packageIndex = this.packageIndex(spec.pool);
    const name = this.packageName(spec, packageIndex);
    // 1–20 ranges per record, most records with one or two.
    let ranges = 1;
    while (ranges < 20 && this.random() < 0.45) ranges++;
    const releases = spec.releases ?? [spec.ecosystem];
    const releaseCount = spec.releases ? 1 + this.int(Math.min(releases.length, 3)) : 1;
    const affected: OsvAffected[] = [];
    const major = this.int(12);
    for (let r = 0; r < releaseCount; r++) {
      const ecosystem = releases[(n + r) % releases.length] as string;
      const entryRanges: OsvRange[] = [];
      let versions: string[] | undefined;
      if (spec.family === 'git') {
        const repo = `https://github.com/org${packageIndex % 503}/repo${packageIndex}`;
        const events = [{ introduced: this.random() < 0.4 ? '0' : this.commit() }, { fixed: this.commit() }];
        entryRanges.push({ type: 'GIT', repo, events });
        if (this.random() < spec.versions)
          versions = Array.from({ length: 1 + this.int(60) }, (_, i) => `v${major}.${Math.floor(i / 10)}.${i % 10}`);
        affected.push({ ranges: entryRanges, ...(versions ? { versions } : {}) });
        const first = events[0]?.introduced;
        if (first !== undefined && first !== '0' && this.random() < 0.05) this.sample({ query: { commit: first }, kind: 'commit' });
        if (versions && this.random() < 0.05)
          this.sample({ query: { package: { ecosystem: 'GIT', name: repo }, version: this.pick(versions) }, kind: 'hit' });
        continue;
      }
      const perEntry = Math.max(1, Math.round(ranges / releaseCount));
      let minor = 0;
      for (let k = 0; k < perEntry; k++) {
        const start = minor;
        minor += 1 + this.int(3);
        const events =
          k === 0 && this.random() < 0.5
            ? [{ introduced: '0' }, { fixed: this.version(spec.family, major, minor, this.int(10), 2) }]
            : this.random() < 0.1
              ? [
                  { introduced: this.version(spec.family, major, start, 0) },
                  { last_affected: this.version(spec.family, major, minor, this.int(10)) },
                ]
              : [
                  { introduced: this.version(spec.family, major, start, 0) },
                  { fixed: this.version(spec.family, major, minor, this.int(10), 2) },
                ];
        entryRanges.push({ type: spec.family === 'semver' && spec.ecosystem !== 'Packagist' ? 'SEMVER' : 'ECOSYSTEM', events });
      }
      if (this.random() < spec.versions) {
        // Up to 400 enumerated versions, most lists short.
        const u = this.random();
        const count = Math.max(1, Math.floor(Math.exp(u * u * Math.log(400))));
        versions = [];
        for (let i = 0; i < count; i++) versions.push(this.version(spec.family, major, Math.floor(i / 10), i % 10, 1));
      }
      const entry: OsvAffected = { package: { ecosystem, name } };
      if (spec.family === 'tags' && versions) entry.versions = versions;
      else {
        entry.ranges = entryRanges;
        if (versions) entry.versions = versions;
      }
      affected.push(entry);
      if (this.random() < 0.05) {
        const v =
          versions && this.random() < 0.5 ? this.pick(versions) : this.version(spec.family, major, this.int(minor + 2), this.int(10), 1);
        const queryEco = spec.releases ? ecosystem : spec.ecosystem;
        this.sample({ query: { package: { ecosystem: queryEco, name }, version: v }, kind: packageIndex < 20 ? 'popular' : 'range' });
        // The same package at a version above every fix of this record.
        if (packageIndex >= 20)
          this.sample({
            query: { package: { ecosystem: queryEco, name }, version: this.version(spec.family, major + 30, 0, 0, 1) },
            kind: 'miss',
          });
      }
    }
    record.affected = affected;
    if (this.random() < 0.01)
      this.sample({ query: { package: { ecosystem: spec.ecosystem, name: `${name}-unknown` }, version: '1.0.0' }, kind: 'unknown' });
    if (spec.ecosystem === 'PyPI' && this.random() < 0.02)
      this.sample({ query: { package: { purl: `pkg:pypi/${name}@${major}.1` } }, kind: 'purl' });
    return record;
  }

  /** All records, one at a time. */
  *records(): Generator<OsvRecord> {
    for (let n = 0; n < this.options.records; n++) yield this.record(n);
  }
}
