// Registry and ecosystem-name helpers (osv-facts.md §2, §4.1, §6).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../../test/support/shared.ts';
import { KNOWN_ECOSYSTEMS, comparatorFor, compareVersions, ecosystemBase, isKnownEcosystem, normalizePackageName } from './index.ts';

const NO_COMPARATOR = [
  'OSS-Fuzz',
  'Linux',
  'Android',
  'GitHub Actions',
  'Kubernetes',
  'ConanCenter',
  'FreeBSD',
  'Photon OS',
  'GIT',
  'Docker Hardened Images',
  'TuxCare',
  'unknown',
  '',
  'pypi', // names are case-sensitive
];

describe('comparatorFor', () => {
  it('returns undefined for ecosystems without a comparator', () => {
    for (const eco of NO_COMPARATOR) expect(comparatorFor(eco), eco).toBeUndefined();
    expect(comparatorFor('Android:com.google.android')).toBeUndefined();
  });

  it('has a comparator for every other known ecosystem', () => {
    const without = KNOWN_ECOSYSTEMS.filter((e) => comparatorFor(e) === undefined);
    expect(without).toEqual([
      'Android',
      'ConanCenter',
      'Docker Hardened Images',
      'FreeBSD',
      'GitHub Actions',
      'Kubernetes',
      'Linux',
      'OSS-Fuzz',
      'Photon OS',
      'TuxCare',
    ]);
  });

  it('resolves by the base, whatever the release suffix', () => {
    expect(comparatorFor('Debian:11')).toBe(comparatorFor('Debian'));
    expect(comparatorFor('Ubuntu:Pro:22.04:LTS')).toBe(comparatorFor('Debian'));
    expect(comparatorFor('Alpine:v3.19')).toBe(comparatorFor('Wolfi'));
    expect(comparatorFor('Red Hat:enterprise_linux:9::appstream')).toBe(comparatorFor('AlmaLinux:8'));
    expect(comparatorFor('Root:Alpine:3.18')).toBe(comparatorFor('Root:Alpine'));
    expect(comparatorFor('Root:Ubuntu:22.04')).not.toBe(comparatorFor('Root:Alpine'));
  });

  it('gives apk ecosystems no coarse key and the others one', () => {
    expect('coarse' in (comparatorFor('Alpine') ?? {})).toBe(false);
    for (const eco of ['npm', 'PyPI', 'Maven', 'NuGet', 'RubyGems', 'Packagist', 'Pub', 'CRAN', 'Hackage', 'Debian', 'Red Hat']) {
      expect('coarse' in (comparatorFor(eco) ?? {}), eco).toBe(true);
    }
  });
});

describe('compareVersions', () => {
  it('compares', () => {
    expect(compareVersions('PyPI', '1.0', '1.0.0')).toBe(0);
    expect(compareVersions('npm', '1.0.0', '2.0.0')).toBeLessThan(0);
    expect(compareVersions('Debian:12', '1:1.0', '2.0')).toBeGreaterThan(0);
  });

  it('throws a clear error without a comparator or on an invalid version', () => {
    expect(() => compareVersions('Linux', '6.1', '6.2')).toThrow('no version comparator for ecosystem "Linux"');
    expect(() => compareVersions('Hackage', '1.0', '1.0-x')).toThrow('invalid Hackage version "1.0-x"');
    expect(() => compareVersions('CRAN', '!', '1.0')).toThrow('invalid CRAN version "!"');
  });
});

describe('ecosystem names', () => {
  it('lists the 48 schema ecosystems of test/fixtures/osv/ecosystems.txt', () => {
    const shared = readFileSync(fixturePath('osv', 'ecosystems.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(KNOWN_ECOSYSTEMS).toHaveLength(48);
    expect([...KNOWN_ECOSYSTEMS].sort()).toEqual([...shared].sort());
    expect(Object.isFrozen(KNOWN_ECOSYSTEMS)).toBe(true);
  });

  it('takes the base before the first colon', () => {
    expect(ecosystemBase('Ubuntu:Pro:22.04:LTS')).toBe('Ubuntu');
    expect(ecosystemBase('Docker Hardened Images:Debian')).toBe('Docker Hardened Images');
    expect(ecosystemBase('npm')).toBe('npm');
    expect(ecosystemBase(':x')).toBe('');
  });

  it('knows a base in the list, any suffix, or exactly GIT', () => {
    expect(isKnownEcosystem('Debian:3.0')).toBe(true);
    expect(isKnownEcosystem('FreeBSD')).toBe(true);
    expect(isKnownEcosystem('GIT')).toBe(true);
    expect(isKnownEcosystem('GIT:x')).toBe(false);
    expect(isKnownEcosystem('pypi')).toBe(false);
    expect(isKnownEcosystem('Yeet')).toBe(false);
    expect(isKnownEcosystem('')).toBe(false);
  });

  it('normalises PyPI and Echo:PyPI names per PEP 503 only', () => {
    expect(normalizePackageName('PyPI', 'Foo.Bar__baz--Qux')).toBe('foo-bar-baz-qux');
    expect(normalizePackageName('Echo:PyPI', 'Jinja2_Time')).toBe('jinja2-time');
    expect(normalizePackageName('Echo:PyPi', 'A.B')).toBe('a-b');
    expect(normalizePackageName('Echo', 'Python_Pip')).toBe('Python_Pip');
    expect(normalizePackageName('NuGet', 'psbuiId')).toBe('psbuiId');
    expect(normalizePackageName('npm', '@Babel/Core')).toBe('@Babel/Core');
    expect(normalizePackageName('Root:PyPI', 'Foo_Bar')).toBe('Foo_Bar');
  });
});
