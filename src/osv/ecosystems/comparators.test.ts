// Per-comparator behaviour (osv-facts.md §6), one describe per comparator, through the public registry.
import { describe, expect, it } from 'vitest';
import { comparatorFor, compareVersions } from './index.ts';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Asserts that the versions are in strictly ascending order, checking every pair in both directions. */
function expectAscending(ecosystem: string, ...versions: string[]): void {
  for (let i = 0; i < versions.length; i++) {
    for (let j = i + 1; j < versions.length; j++) {
      const a = versions[i] as string;
      const b = versions[j] as string;
      expect(sign(compareVersions(ecosystem, a, b)), `${ecosystem}: ${a} < ${b}`).toBe(-1);
      expect(sign(compareVersions(ecosystem, b, a)), `${ecosystem}: ${b} > ${a}`).toBe(1);
    }
  }
}

/** Asserts that every version compares equal to every other. */
function expectEqual(ecosystem: string, ...versions: string[]): void {
  for (const a of versions) {
    for (const b of versions) expect(compareVersions(ecosystem, a, b), `${ecosystem}: ${a} = ${b}`).toBe(0);
  }
}

function refuses(ecosystem: string, version: string): boolean {
  const order = comparatorFor(ecosystem);
  if (order === undefined) throw new Error(`no comparator for ${ecosystem}`);
  return order.parse(version) === undefined;
}

describe('the 0 sentinel (every comparator)', () => {
  const lowest: Record<string, string> = {
    npm: '0.0.0-alpha',
    PyPI: '0.dev0',
    Maven: '0-alpha',
    NuGet: '0.0.0-0',
    RubyGems: '0.a',
    Packagist: '0-dev',
    Pub: '0.0.0-0',
    CRAN: '0.0',
    Hackage: '0.0.0.1',
    Debian: '0:0~0-0',
    Alpine: '0_alpha',
    'Red Hat': '0~0',
    'Echo:npm': '0.0.0-0',
    'Root:Alpine': '0_alpha',
  };
  for (const [ecosystem, low] of Object.entries(lowest)) {
    it(`${ecosystem}: "0" sorts below ${low}`, () => {
      expectAscending(ecosystem, '0', low);
      expectEqual(ecosystem, '0');
    });
  }

  it('Maven: versions equal to 0 join the sentinel (fixtures: 0 = 0.0 = 0-final-ga)', () => {
    expectEqual('Maven', '0', '0.0', '0.0.0', '0-final-ga', '0.0.0-0.0.0');
    expectAscending('Maven', '0.0', '0-alpha', '0.1');
  });
});

describe('lenient semver (npm, crates.io, Go, Hex, Julia, SwiftURL, Bitnami, VSCode, GHC, Bioconductor)', () => {
  it('orders prereleases per SemVer §11', () => {
    expectAscending(
      'npm',
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
    );
    expectAscending('crates.io', '0.0.0-foo', '0.0.0', '0.9.9', '0.10.0');
  });

  it('accepts a leading v and ignores build metadata', () => {
    expectEqual('Go', 'v1.2.3', '1.2.3', '1.2.3+build', 'v1.2.3+other');
    expectEqual('npm', '1.2.3-beta+a', '1.2.3-beta+b');
  });

  it('orders Go pseudo-versions as prereleases', () => {
    expectAscending('Go', 'v0.0.0-20200101000000-abcdefabcdef', 'v0.0.0-20210101000000-abcdefabcdef', 'v0.0.1');
  });

  it('compares numbers of any size and pads missing components', () => {
    expectAscending('npm', '999999999999999999999999999991', '999999999999999999999999999999');
    expectEqual('Hex', '1', '1.0', '1.0.0');
  });

  it('treats components past the third as build text, as upstream', () => {
    expectAscending('Bitnami', '1.2.3.4', '1.2.3');
  });

  it('is used by every SemVer-like ecosystem and accepts any string', () => {
    for (const eco of ['Julia', 'SwiftURL', 'Bitnami', 'VSCode', 'GHC', 'Bioconductor', 'Hex', 'crates.io']) {
      expectAscending(eco, '1.0.0-rc.1', '1.0.0', '1.10.0');
      expect(refuses(eco, 'not a version!'), eco).toBe(false);
    }
  });
});

describe('PEP 440 (PyPI)', () => {
  it('treats 3.1 and 3.1.0 as equal', () => {
    expectEqual('PyPI', '3.1', '3.1.0', '3.1.0.0', 'v3.1');
  });

  it('orders dev < pre < release < post, and epochs first', () => {
    expectAscending('PyPI', '1.0.dev0', '1.0a1', '1.0b2', '1.0rc1', '1.0', '1.0.post1', '1.1.dev1', '1.1', '1!0.1');
    expectAscending('PyPI', '1.2a3.dev4', '1.2a3', '1.2b3.dev4', '1.2.post3.dev4', '1.2.post3');
  });

  it('normalises spellings and case', () => {
    expectEqual('PyPI', '1.0.0-alpha1', '1.0.0a1', '1.0.0.ALPHA.1');
    expectEqual('PyPI', '1.0-1', '1.0.post1', '1.0-r1', '1.0rev1');
    expectEqual('PyPI', '1.0c1', '1.0rc1', '1.0pre1', '1.0preview1');
  });

  it('orders local versions after their public version', () => {
    expectAscending('PyPI', '1.0.0', '1.0.0+local', '1.0.0+local.0', '1.0.0+local.0.1', '1.0.1');
    expectAscending('PyPI', '1.0.0+local.a', '1.0.0+local.1');
  });

  it('reads non-PEP 440 strings as legacy versions below every PEP 440 version', () => {
    expectAscending('PyPI', '0.1-bulbasaur', '0.1-charmander', '0.9-ivysaur', '0.0.1');
    expect(refuses('PyPI', 'not-pep-440')).toBe(false);
  });
});

describe('Maven ComparableVersion', () => {
  it('treats null tokens as absent', () => {
    expectEqual('Maven', '1', '1.0', '1.0.0', '1.ga', '1.final', '1-0', '1.', '1-', '1RELEASE', '1GA');
  });

  it('orders qualifiers alpha < beta < milestone < rc < snapshot < release < sp < other', () => {
    expectAscending('Maven', '1-alpha', '1-beta', '1-milestone', '1-rc', '1-SNAPSHOT', '1', '1-sp', '1-xyz', '1-1');
  });

  it('knows the short forms and is case-insensitive', () => {
    expectEqual('Maven', '1a1', '1-alpha-1', '1ALPHA1');
    expectEqual('Maven', '1b2', '1-beta-2');
    expectEqual('Maven', '1m3', '1-milestone-3', '1MILESTONE3');
    expectEqual('Maven', '1cr', '1rc', '1-RC');
  });

  it('puts -SNAPSHOT below the release and numbers after qualifiers', () => {
    expectAscending('Maven', '1.0-alpha-1-SNAPSHOT', '1.0-alpha-1', '1.0-beta-1', '1.0-SNAPSHOT', '1.0', '1.0-1', '1.0.1');
    expectAscending('Maven', '2.0.1', '2.0.1-klm', '2.0.1-xyz', '2.0.1-123');
  });
});

describe('NuGet', () => {
  it('compares prerelease labels case-insensitively', () => {
    expectEqual('NuGet', '1.0.0-BETA', '1.0.0-beta', '1.0.0-Beta');
    expectAscending('NuGet', '1.0.0-BETA', '1.0.0-beta.X.y.5.77.0', '1.0.0-beta.x.y.5.79.0', '1.0.0-beta2', '1.0.0');
  });

  it('ignores +build metadata', () => {
    expectEqual('NuGet', '1.0.0', '1.0.0+beta', '1.0.0+AA');
    expectAscending('NuGet', '1.0.0-beta+AA', '1.0.0+aa');
  });

  it('has four numeric parts: 1.0 == 1.0.0.0 < 1.0.0.1', () => {
    expectEqual('NuGet', '1.0', '1.0.0.0', '1.0.00.0', '01.0');
    expectAscending('NuGet', '1.0', '1.0.0.1-alpha', '1.0.0.1', '1.0.1');
  });
});

describe('RubyGems (Gem::Version)', () => {
  it('sorts string segments below numbers', () => {
    expectAscending('RubyGems', '1.0.a', '1.0.a10', '1.0.b1', '1.0', '1.0.1');
    expectAscending('RubyGems', '1.2.4.beta', '1.2.4.gamma', '1.2.4');
  });

  it('drops trailing zeros and reads - as .pre.', () => {
    expectEqual('RubyGems', '1', '1.0', '1.0.0');
    expectEqual('RubyGems', '1.0.a2', '1.0.a.2');
    expectEqual('RubyGems', '1.0-1', '1.0.pre.1');
    expectAscending('RubyGems', '1.0-1', '1.0');
  });
});

describe('Packagist (PHP version_compare)', () => {
  it('orders dev < alpha < beta < RC < release < number < patch', () => {
    // as in PHP, a p/pl component ranks above a number at its position
    expectAscending('Packagist', '1.0-dev', '1.0a1', '1.0alpha2', '1.0b1', '1.0RC1', '1.0', '1.0.1', '1.0pl1', '1.1');
    expectEqual('Packagist', '1.0RC1', '1.0rc1', '1.0-RC1');
  });

  it('drops a leading v and normalises separators', () => {
    expectEqual('Packagist', 'v1.0.0', 'V1.0.0', '1.0.0');
    expectEqual('Packagist', '1.25.0-beta2.1', '1.25.0-b.2.1', '1.25.0beta2.1', '1.25.0_b+2.1');
  });

  it('counts an extra .0 (1.0.0 > 1.0), unlike most ecosystems', () => {
    expectAscending('Packagist', 'dev-foo', '1.0', '1.0.0', '1.26.0');
  });
});

describe('Pub', () => {
  it('orders on +build after the prerelease', () => {
    expectAscending('Pub', '1.0.0-pre', '1.0.0-pre+build', '1.0.0', '1.0.0+1', '1.0.0+2', '1.0.0+a', '1.0.1');
  });
});

describe('CRAN (package_version)', () => {
  it('treats - and . alike and lets more components win', () => {
    expectEqual('CRAN', '1.0-1', '1.0.1');
    expectAscending('CRAN', '0.1-2', '0.1.4', '0.1.18', '0.1.18.0', '0.2-2', '1.0');
  });

  it('refuses anything but numbers', () => {
    for (const v of ['!', '?', '1.a.2', 'z.c.3', '1..2', '1.0-']) expect(refuses('CRAN', v), v).toBe(true);
    expect(() => compareVersions('CRAN', '1.a.2', '1.0')).toThrow(/invalid CRAN version "1\.a\.2"/);
  });
});

describe('Hackage (PVP)', () => {
  it('compares as lists of numbers', () => {
    expectAscending('Hackage', '0.1.0', '0.1.0.0', '0.1.26.0', '0.11.3.0', '1.0', '1.0.0.0');
  });

  it('refuses tags', () => {
    expect(refuses('Hackage', '1.2.3.4.5-notallowed')).toBe(true);
    expect(refuses('Hackage', '1.0b')).toBe(true);
  });
});

describe('dpkg (Debian, Ubuntu, opam)', () => {
  it('orders by epoch first', () => {
    expectAscending('Debian', '1.0-1', '9.9', '1:0.1', '2:0.0.1');
    expectEqual('Debian', '1.0', '0:1.0', '00:1.0', '1.0-0');
  });

  it('sorts ~ before everything, then the end, then letters, then other characters', () => {
    expectAscending('Debian', '1.0~rc1~git1', '1.0~rc1', '1.0', '1.0a', '1.0+deb11u1', '1.0.1');
    expectAscending('Ubuntu:22.04:LTS', '2.7.4+reloaded2-13', '2.7.4+reloaded2-13ubuntu1', '2.7.4+reloaded2-13+deb9u1');
  });

  it('splits the revision at the last hyphen', () => {
    expectAscending('opam', '1.2.3-1~deb7u1', '1.2.3-1', '1.2.3-1.1', '1.2.3-2');
  });

  it('refuses a non-numeric epoch (README: Debian invalid version)', () => {
    expect(refuses('Debian', '1.2.3-not-a-debian:version!@#$')).toBe(true);
    expect(() => compareVersions('Debian', '1.2.3', '1.2.3-not-a-debian:version!@#$')).toThrow(
      'invalid Debian version "1.2.3-not-a-debian:version!@#$"',
    );
    expect(refuses('Ubuntu', ':1.0')).toBe(true);
  });
});

describe('apk (Alpine, Alpaquita, BellSoft Hardened Containers, Chainguard, CleanStart, MinimOS, Wolfi)', () => {
  it('orders suffixes alpha < beta < pre < rc < none < cvs < svn < git < hg < p', () => {
    expectAscending(
      'Alpine',
      '1.2_alpha',
      '1.2_beta',
      '1.2_pre',
      '1.2_rc1',
      '1.2',
      '1.2_cvs1',
      '1.2_svn1',
      '1.2_git1',
      '1.2_hg1',
      '1.2_p1',
    );
  });

  it('orders letters, then -rN', () => {
    expectAscending('Wolfi', '1.2.2', '1.2.2-r1', '1.2.2-r10', '1.2.3', '1.2.3b', '1.2.3c-r1', '1.2.4');
    expectEqual('Chainguard', '1-r1', '1-r01');
  });

  it('reads components after the first with a leading 0 as fractions', () => {
    expectAscending('MinimOS', '1.01', '1.1', '1.10');
  });

  it('is used by every apk-based ecosystem', () => {
    for (const eco of ['Alpaquita', 'BellSoft Hardened Containers', 'CleanStart', 'Alpine:v3.19']) {
      expectAscending(eco, '1.0_rc1-r0', '1.0-r0', '1.0-r1');
    }
  });
});

describe('rpmvercmp (Red Hat, AlmaLinux, Rocky Linux, SUSE, openSUSE, openEuler, Mageia, Azure Linux)', () => {
  it('orders epoch, version, release', () => {
    expectAscending('Red Hat', '0:3.10.0-229.el7', '0:3.10.0-229.1.2.ael7b', '0:3.10.0-229.1.2.el7', '1:1.0-1');
    expectEqual('AlmaLinux', '1:39.31.5.1-119.el8_9.1', '01:39.31.5.1-119.el8_9.1');
  });

  it('handles ~ (before everything) and ^ (after the end only)', () => {
    expectAscending('Rocky Linux', '1.0~rc1', '1.0', '1.0^git1', '1.0.1');
  });

  it('ignores separators, and numbers beat letters', () => {
    expectEqual('SUSE', '2_0', '2.0', '2..0');
    expectAscending('openSUSE', '1.0a', '1.0.1');
    expectAscending('Mageia', 'xyz.4', '2');
  });

  it('only treats an all-digit prefix as an epoch', () => {
    expectAscending('openEuler', '1.m+e2:1', '4.m+e1:1');
    expectEqual('Azure Linux', '0.0.0', '0:0.0.0', ':0.0.0');
  });
});

describe('Echo wrapper', () => {
  it('Echo:npm orders on the +echo.N build number after SemVer', () => {
    expectAscending('Echo:npm', '1.2.3-rc.1', '1.2.3-rc.1+echo.1', '1.2.3', '1.2.3+echo.1', '1.2.3+echo.2', '1.2.3+echo.10', '1.2.4');
    expectEqual('Echo:npm', '1.2.3+build.1', '1.2.3+build.2', '1.2.3');
  });

  it('Echo:PyPI and Echo:Maven use their inner ecosystem (suffix case-insensitive)', () => {
    expectEqual('Echo:PyPI', '3.1', '3.1.0');
    expectEqual('Echo:PyPi', '25.2+echo.1', '25.2.0+echo.1');
    expectAscending('Echo:Maven', '1.0-SNAPSHOT', '1.0');
  });

  it('bare Echo and other suffixes are dpkg', () => {
    expectAscending('Echo', '25.3~rc1', '25.3+dfsg-1', '25.3+dfsg-1+e2', '1:0.1');
    expect(refuses('Echo', 'x:1.0')).toBe(true);
    expect(comparatorFor('Echo:Something')).toBe(comparatorFor('Debian'));
  });
});

describe('Root wrapper', () => {
  it('orders by the inner version, then the root.io patch number', () => {
    expectAscending(
      'Root:Debian:12',
      '22.12.0-2.root.io.1',
      '22.12.0-2.root.io.5',
      '22.12.0-2+deb12u1.root.io.1',
      '22.12.0-2+deb12u1.root.io.5',
    );
    expectAscending('Root:PyPI', '1.0.0rc1', '1.0.0', '1.0.0+root.io.1', '1.0.0+root.io.5', '1.0.1');
    expectAscending('Root:npm', '1.9.9', '2.0.0', '2.0.0+root.io.2');
    expectAscending('Root:Maven', '1.0-SNAPSHOT', '1.0', '1.0.root.io.3');
  });

  it('reads Alpine-style -rN as the patch number', () => {
    expectAscending('Root:Alpine:3.18', '1.0.0-r1', '1.0.0-r2', '1.51.0-r20071', '1.51.0-r20072');
    expectAscending('Root:Ubuntu', '1.18.0-6+deb11u3-r20071', '1.18.0-6+deb11u3-r20072');
  });

  it('refuses what the inner parser refuses', () => {
    expect(refuses('Root:Debian', 'x:1.0')).toBe(true);
    expect(refuses('Root:Debian', '')).toBe(true);
    expect(refuses('Root:PyPI', '1.0+root.io.99999999999999999999')).toBe(true);
  });

  it('has a coarse key except over apk', () => {
    expect('coarse' in (comparatorFor('Root:Debian') ?? {})).toBe(true);
    expect('coarse' in (comparatorFor('Root:Alpine') ?? {})).toBe(false);
  });
});

describe('TuxCare and Docker Hardened Images wrappers', () => {
  it('delegate to the inner ecosystem', () => {
    expect(comparatorFor('TuxCare:npm')).toBe(comparatorFor('npm'));
    expect(comparatorFor('TuxCare:PyPI')).toBe(comparatorFor('PyPI'));
    expectEqual('TuxCare:PyPI', '3.1', '3.1.0');
    expect(comparatorFor('Docker Hardened Images:Debian')).toBe(comparatorFor('Debian'));
    expect(comparatorFor('Docker Hardened Images:Alpine:3.23')).toBe(comparatorFor('Alpine'));
    expectAscending('Docker Hardened Images:Debian:trixie', '7.88.1-10+deb12u1', '7.88.1-10+deb13u2');
    expectAscending('Docker Hardened Images:Alpine:3.23', '8.4.0-r0', '8.4.0-r1');
  });

  it('have no comparator bare or nested in themselves; TuxCare none over an inner ecosystem without one', () => {
    for (const eco of [
      'TuxCare',
      'TuxCare:TuxCare:npm',
      'TuxCare:Linux',
      'TuxCare:unknown',
      'Docker Hardened Images',
      'Docker Hardened Images:Docker Hardened Images:x',
    ]) {
      expect(comparatorFor(eco), eco).toBeUndefined();
    }
  });

  it('DHI falls back to lenient SemVer for a lineage without a comparator', () => {
    expect(comparatorFor('Docker Hardened Images:nginx')).toBe(comparatorFor('npm'));
    expectAscending('Docker Hardened Images:nginx', '1.27.0-rc.1', '1.27.0', '1.27.1');
  });
});
