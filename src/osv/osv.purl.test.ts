// purl → OSV package (osv-facts.md §4.4), against osv.dev's purl test table (matching-cases/osvdev-purl-cases.json).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixturePath } from '../../test/support/shared.ts';
import { PurlError, purlToPackage, UNKNOWN_PURL_TYPE } from './osv.purl.ts';

interface PurlCases {
  parse_cases: {
    purl: string;
    want_ecosystem: string | null;
    want_name: string | null;
    want_version: string | null;
    error: false | string;
  }[];
  type_namespace_to_ecosystem: { purl_type: string; namespace: string | null; ecosystem: string }[];
}

const cases = JSON.parse(readFileSync(fixturePath('osv', 'matching-cases', 'osvdev-purl-cases.json'), 'utf8')) as PurlCases;

describe('purl mapping', () => {
  it('[OSV-PURL-MAP] maps every parse case of osv.dev', () => {
    for (const c of cases.parse_cases) {
      if (c.error === false) {
        expect(purlToPackage(c.purl), c.purl).toEqual({ ecosystem: c.want_ecosystem, name: c.want_name, version: c.want_version });
      } else if (c.error.startsWith('ErrUnknownPURL')) {
        expect(purlToPackage(c.purl), c.purl).toBe(UNKNOWN_PURL_TYPE);
      } else {
        expect(() => purlToPackage(c.purl), c.purl).toThrow(PurlError);
      }
    }
  });

  it('[OSV-PURL-MAP] maps every purl type and namespace of the table', () => {
    for (const row of cases.type_namespace_to_ecosystem) {
      const fixed = row.namespace !== null && !row.namespace.startsWith('(');
      const purl = `pkg:${row.purl_type}/${fixed ? `${row.namespace}/` : ''}pkg@1.0.0`;
      const got = purlToPackage(purl);
      expect(got, purl).not.toBe(UNKNOWN_PURL_TYPE);
      if (got === UNKNOWN_PURL_TYPE) continue;
      expect(got.ecosystem, purl).toBe(row.ecosystem.startsWith('Debian') ? 'Debian' : row.ecosystem);
      expect(got.version).toBe('1.0.0');
    }
  });

  it('joins namespaces the way each ecosystem names packages', () => {
    expect(purlToPackage('pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1')).toEqual({
      ecosystem: 'Maven',
      name: 'org.apache.logging.log4j:log4j-core',
      version: '2.14.1',
    });
    expect(purlToPackage('pkg:golang/github.com/gin-gonic/gin#binding')).toEqual({
      ecosystem: 'Go',
      name: 'github.com/gin-gonic/gin/binding',
      version: '',
    });
    expect(purlToPackage('pkg:npm/@babel/core@7.0.0')).toEqual({ ecosystem: 'npm', name: '@babel/core', version: '7.0.0' });
    expect(purlToPackage('pkg:npm/%40babel/core')).toEqual({ ecosystem: 'npm', name: '@babel/core', version: '' });
    expect(purlToPackage('pkg:composer/league/flysystem@1.0.8')).toEqual({
      ecosystem: 'Packagist',
      name: 'league/flysystem',
      version: '1.0.8',
    });
    expect(purlToPackage('pkg:deb/debian/curl@1?distro=debian-12')).toEqual({ ecosystem: 'Debian:12', name: 'curl', version: '1' });
    expect(purlToPackage('pkg:deb/debian/curl@1?distro=sid')).toEqual({ ecosystem: 'Debian', name: 'curl', version: '1' });
    expect(purlToPackage('pkg:apk/alpine/busybox@1.36.1-r2?distro=3.19')).toEqual({
      ecosystem: 'Alpine',
      name: 'busybox',
      version: '1.36.1-r2',
    });
    expect(purlToPackage('pkg:rpm/redhat/bash@1:5.1-6')).toEqual({ ecosystem: 'Red Hat', name: 'bash', version: '1:5.1-6' });
  });

  it('[OSV-PURL-UNKNOWN] treats unknown types and distributions as unknown, and malformed purls as errors', () => {
    expect(purlToPackage('pkg:yeet/github.com/tianon/gosu@(devel)?package-id=656546dcfdff37ca')).toBe(UNKNOWN_PURL_TYPE);
    expect(purlToPackage('pkg:deb/kali/curl@1')).toBe(UNKNOWN_PURL_TYPE);
    expect(purlToPackage('pkg:rpm/fedora/curl@1')).toBe(UNKNOWN_PURL_TYPE);
    for (const bad of ['invalid-purl', 'pkg:', 'pkg:npm', 'pkg:npm/', 'http://example.com/x', 'pkg:npm/%zz']) {
      expect(() => purlToPackage(bad), bad).toThrow(PurlError);
    }
  });
});
