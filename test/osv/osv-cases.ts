// Queries over the shared corpus (records/ and both bulk files) with the ids expected for each, worked out by
// reading the records (their affected entries, ranges and versions), not by running this implementation. Each case
// says why. Used by the service tests (osv.corpus.test.ts) and on both transports (osv.rpcs.test.ts).
import type { QueryJson } from '../../src/osv/osv.query.ts';

export interface Case {
  why: string;
  query: QueryJson;
  want: string[];
}

export const pkg = (ecosystem: string, name: string, version?: string): QueryJson => ({
  package: { ecosystem, name },
  ...(version === undefined ? {} : { version }),
});
const purl = (p: string, version?: string): QueryJson => ({ package: { purl: p }, ...(version === undefined ? {} : { version }) });

export const CASES: Case[] = [
  // crates.io (SEMVER)
  {
    why: 'GHSA-qc84 [0, 0.8.7) and RUSTSEC-2022-0041 [0.0.0-0, 0.8.7)',
    query: pkg('crates.io', 'crossbeam-utils', '0.8.6'),
    want: ['GHSA-qc84-gqf4-9926', 'RUSTSEC-2022-0041'],
  },
  { why: 'both are fixed in 0.8.7', query: pkg('crates.io', 'crossbeam-utils', '0.8.7'), want: [] },
  { why: 'purl with version', query: purl('pkg:cargo/crossbeam-utils@0.8.6'), want: ['GHSA-qc84-gqf4-9926', 'RUSTSEC-2022-0041'] },
  { why: 'purl plus version field', query: purl('pkg:cargo/crossbeam-utils', '0.8.6'), want: ['GHSA-qc84-gqf4-9926', 'RUSTSEC-2022-0041'] },
  {
    why: 'GHSA-wcg3 range [0.1, last_affected 0.2] includes 0.2.0; RUSTSEC-2020-0071 has fixed 0.2.0',
    query: pkg('crates.io', 'time', '0.2.0'),
    want: ['GHSA-wcg3-cvx6-7396'],
  },
  {
    why: 'last_affected 0.2 excludes 0.2.1; RUSTSEC fixed 0.2.1; GHSA second range starts at 0.2.7',
    query: pkg('crates.io', 'time', '0.2.1'),
    want: [],
  },
  {
    why: 'GHSA second range [0.2.7, 0.2.23); RUSTSEC [0.2.7-0, 0.2.23) (multi-range records)',
    query: pkg('crates.io', 'time', '0.2.10'),
    want: ['GHSA-wcg3-cvx6-7396', 'RUSTSEC-2020-0071'],
  },
  {
    why: 'GHSA [0.1, 0.2]; RUSTSEC [0.0.0-0, 0.2.0)',
    query: pkg('crates.io', 'time', '0.1.5'),
    want: ['GHSA-wcg3-cvx6-7396', 'RUSTSEC-2020-0071'],
  },
  // npm (SEMVER)
  {
    why: 'GHSA-6fc8 has three affected entries, one is [7.0.0, 7.4.6); GHSA-5v72 covers <3.3.1 only',
    query: pkg('npm', 'ws', '7.1.1'),
    want: ['GHSA-6fc8-4gx4-v693'],
  },
  { why: 'GHSA-5v72 second entry [2.0.0, 3.3.1)', query: pkg('npm', 'ws', '3.0.0'), want: ['GHSA-5v72-xg48-5rpm'] },
  { why: 'fixed 6.2.2 is not affected', query: pkg('npm', 'ws', '6.2.2'), want: [] },
  {
    why: 'lodash: 29mw and 35jh fixed in 4.17.21, jf85 in 4.17.12, p6mc [3.7.0, 4.17.19), x5rq fixed in 4.17.11',
    query: pkg('npm', 'lodash', '4.17.11'),
    want: ['GHSA-29mw-wpgm-hmr9', 'GHSA-35jh-r3h4-6jhm', 'GHSA-jf85-cpcp-j695', 'GHSA-p6mc-m468-83gw'],
  },
  { why: 'only the two fixed in 4.17.21', query: pkg('npm', 'lodash', '4.17.20'), want: ['GHSA-29mw-wpgm-hmr9', 'GHSA-35jh-r3h4-6jhm'] },
  {
    why: 'no version: every record listing lodash',
    query: pkg('npm', 'lodash'),
    want: ['GHSA-29mw-wpgm-hmr9', 'GHSA-35jh-r3h4-6jhm', 'GHSA-jf85-cpcp-j695', 'GHSA-p6mc-m468-83gw', 'GHSA-x5rq-j2xg-h7qm'],
  },
  {
    why: 'GHSA-p8p7 last_affected 2.88.2 is inclusive; GHSA-7xfp ranges end at 2.68.0',
    query: pkg('npm', 'request', '2.88.2'),
    want: ['GHSA-p8p7-x288-28g6'],
  },
  { why: 'after last_affected', query: pkg('npm', 'request', '2.88.3'), want: [] },
  {
    why: 'two affected entries of GHSA-7xfp match, returned once',
    query: pkg('npm', 'request', '2.60.0'),
    want: ['GHSA-7xfp-9c55-5vqj', 'GHSA-p8p7-x288-28g6'],
  },
  { why: 'lodash.set: GHSA-p6mc [3.7.0, last_affected 4.3.2]', query: purl('pkg:npm/lodash.set@4.3.2'), want: ['GHSA-p6mc-m468-83gw'] },
  // PyPI (PEP 440, PEP 503 names, bulk records)
  {
    why: 'jinja2 3.1.4: the six records/ advisories; bulk PYSECs are fixed by 2.11.3',
    query: pkg('PyPI', 'jinja2', '3.1.4'),
    want: ['GHSA-cpwx-vrp4-4pq7', 'GHSA-gmj6-6f8f-6699', 'GHSA-q2x7-8rv6-6q7h', 'PYSEC-2026-1471', 'PYSEC-2026-1472', 'PYSEC-2026-1475'],
  },
  {
    why: 'PEP 503: Jinja2 is jinja2; 2.10 is before 2.10.1 (PYSEC-2019-217) and 2.11.3 (PYSEC-2021-66), not in [3.0.0, …)',
    query: pkg('PyPI', 'Jinja2', '2.10'),
    want: ['GHSA-cpwx-vrp4-4pq7', 'GHSA-q2x7-8rv6-6q7h', 'PYSEC-2019-217', 'PYSEC-2021-66', 'PYSEC-2026-1471', 'PYSEC-2026-1475'],
  },
  {
    why: 'purl form of the same',
    query: purl('pkg:pypi/jinja2@3.1.4'),
    want: ['GHSA-cpwx-vrp4-4pq7', 'GHSA-gmj6-6f8f-6699', 'GHSA-q2x7-8rv6-6q7h', 'PYSEC-2026-1471', 'PYSEC-2026-1472', 'PYSEC-2026-1475'],
  },
  {
    why: 'py: PYSEC-2022-42969 last_affected 1.11.0; PYSEC-2020-92 fixed 1.10.0',
    query: pkg('PyPI', 'py', '1.11.0'),
    want: ['PYSEC-2022-42969'],
  },
  { why: 'both', query: pkg('PyPI', 'py', '1.9.0'), want: ['PYSEC-2020-92', 'PYSEC-2022-42969'] },
  { why: 'not listed and after last_affected', query: pkg('PyPI', 'py', '1.11.1'), want: [] },
  { why: 'versions-only record MAL-2024-10238', query: pkg('PyPI', '123bla', '0.0.1'), want: ['MAL-2024-10238'] },
  {
    why: 'versions list compares with PEP 440 equality: 0.0.1.0 == 0.0.1',
    query: pkg('PyPI', '123bla', '0.0.1.0'),
    want: ['MAL-2024-10238'],
  },
  { why: 'not listed', query: pkg('PyPI', '123bla', '0.0.2'), want: [] },
  // Go
  {
    why: 'GO-2020-0001 <1.6.0, GO-2021-0052 <1.7.7; GO-2023-1737 starts at a 1.3.1 pseudo-version',
    query: pkg('Go', 'github.com/gin-gonic/gin', '1.1.4'),
    want: ['GO-2020-0001', 'GO-2021-0052'],
  },
  {
    why: 'GO-2021-0052 and GO-2023-1737 [1.3.1-0.2019…, 1.9.1); a leading v is accepted',
    query: pkg('Go', 'github.com/gin-gonic/gin', 'v1.7.0'),
    want: ['GO-2021-0052', 'GO-2023-1737'],
  },
  {
    why: 'teleport: GO-2024-2442/2445/2447/2449 are withdrawn; GO-2025-3763 introduced 0',
    query: pkg('Go', 'github.com/gravitational/teleport', '1.0.0'),
    want: ['GO-2025-3763'],
  },
  // Maven
  {
    why: 'bcprov-jdk15on 1.70: fixed 1.78 (8xfc, m44j, v435), last_affected 1.70 (hr8g), open range (wjxj); 6xx3/72m5/73xv are fixed earlier',
    query: pkg('Maven', 'org.bouncycastle:bcprov-jdk15on', '1.70'),
    want: ['GHSA-8xfc-gm6g-vgpv', 'GHSA-hr8g-6v94-x4m9', 'GHSA-m44j-cfrm-g8qc', 'GHSA-v435-xc8x-wvr9', 'GHSA-wjxj-5m7g-mg7q'],
  },
  {
    why: '1.65.01: adds 6xx3 (<1.66) and 73xv [1.65, 1.67); 72m5 is fixed in 1.61',
    query: pkg('Maven', 'org.bouncycastle:bcprov-jdk15on', '1.65.01'),
    want: [
      'GHSA-6xx3-rg99-gc3p',
      'GHSA-73xv-w5gp-frxh',
      'GHSA-8xfc-gm6g-vgpv',
      'GHSA-hr8g-6v94-x4m9',
      'GHSA-m44j-cfrm-g8qc',
      'GHSA-v435-xc8x-wvr9',
      'GHSA-wjxj-5m7g-mg7q',
    ],
  },
  {
    why: 'guava 10.0: GHSA-5mg8 <32.0.0-android; GHSA-mvr2 starts at 11.0',
    query: pkg('Maven', 'com.google.guava:guava', '10.0'),
    want: ['GHSA-5mg8-w23w-74h3'],
  },
  { why: 'guava 23.0: both', query: pkg('Maven', 'com.google.guava:guava', '23.0'), want: ['GHSA-5mg8-w23w-74h3', 'GHSA-mvr2-9pj6-7w5j'] },
  {
    why: 'guava-jdk5 last_affected 17.0 (inclusive, also listed)',
    query: purl('pkg:maven/com.google.guava/guava-jdk5@17.0'),
    want: ['GHSA-mvr2-9pj6-7w5j'],
  },
  { why: 'versions-only entry of GHSA-c4r9', query: pkg('Maven', 'be.cylab:snakeyaml', '1.25.1'), want: ['GHSA-c4r9-r8fh-9vj2'] },
  // NuGet (case-sensitive names)
  { why: 'Newtonsoft.Json <13.0.1', query: pkg('NuGet', 'Newtonsoft.Json', '12.0.3'), want: ['GHSA-5crp-9r3c-p9vr'] },
  { why: 'NuGet names are exact', query: pkg('NuGet', 'newtonsoft.json', '12.0.3'), want: [] },
  {
    why: 'jQuery 1.7.1.1: every jQuery record except 579v (<1.6.3)',
    query: pkg('NuGet', 'jQuery', '1.7.1.1'),
    want: [
      'GHSA-257q-pv89-v3xv',
      'GHSA-2pqj-h3vj-pqgw',
      'GHSA-6c3j-c64m-qhgq',
      'GHSA-jpcq-cgw6-v4j6',
      'GHSA-q4m3-2j7h-f7xw',
      'GHSA-rmxg-73gg-4p98',
    ],
  },
  {
    why: 'lower-case jquery is another NuGet package (GHSA-gxr4 [1.2.0, 3.5.0))',
    query: pkg('NuGet', 'jquery', '1.7.1.1'),
    want: ['GHSA-gxr4-xjj5-5px2'],
  },
  {
    why: 'no ecosystem: npm jquery rows (257q, 2pqj, 6c3j, gxr4, jpcq, q4m3, rmxg) and NuGet jquery (gxr4 again, once)',
    query: { package: { name: 'jquery' }, version: '1.7.1' },
    want: [
      'GHSA-257q-pv89-v3xv',
      'GHSA-2pqj-h3vj-pqgw',
      'GHSA-6c3j-c64m-qhgq',
      'GHSA-gxr4-xjj5-5px2',
      'GHSA-jpcq-cgw6-v4j6',
      'GHSA-q4m3-2j7h-f7xw',
      'GHSA-rmxg-73gg-4p98',
    ],
  },
  // RubyGems
  {
    why: 'nokogiri 1.18.4: all 15 except mrxw (fixed 1.18.4) and vvfq (1.18.3)',
    query: pkg('RubyGems', 'nokogiri', '1.18.4'),
    want: [
      'GHSA-353f-x4gh-cqq8',
      'GHSA-5prr-v3j2-97mh',
      'GHSA-5v8h-3h3q-446p',
      'GHSA-5w6v-399v-w3cc',
      'GHSA-8678-w3jw-xfc2',
      'GHSA-9cv2-cfxc-v4v2',
      'GHSA-c4rq-3m3g-8wgx',
      'GHSA-p67v-3w7g-wjg7',
      'GHSA-phwj-rprq-35pp',
      'GHSA-v2fc-qm4h-8hqv',
      'GHSA-wfpw-mmfh-qq69',
      'GHSA-wjv4-x9w8-wm3h',
      'GHSA-wx95-c6cv-8532',
    ],
  },
  { why: 'versions-only record', query: pkg('RubyGems', 'paranoid2', '1.1.6'), want: ['GHSA-4g4c-8gqh-m4vm'] },
  { why: 'not listed', query: pkg('RubyGems', 'paranoid2', '1.1.5'), want: [] },
  { why: 'GHSA-35c4 (activesupport) is withdrawn: never matched', query: pkg('RubyGems', 'activesupport', '4.2.1'), want: [] },
  // Packagist, CRAN, SwiftURL, GHC
  { why: 'guzzle second range [7.0.0, 7.4.3)', query: pkg('Packagist', 'guzzlehttp/guzzle', '7.4.2'), want: ['GHSA-cwmx-hcrq-mhc3'] },
  { why: 'fixed', query: pkg('Packagist', 'guzzlehttp/guzzle', '7.4.3'), want: [] },
  {
    why: 'listed version v3.13.0.1 of google/protobuf (also < 3.15.0)',
    query: purl('pkg:composer/google/protobuf@v3.13.0.1'),
    want: ['GHSA-77rm-9x9h-xj3g'],
  },
  { why: 'RSEC-2023-2 [1.4.1, 1.4.2)', query: pkg('CRAN', 'readxl', '1.4.1'), want: ['RSEC-2023-2'] },
  { why: 'fixed', query: pkg('CRAN', 'readxl', '1.4.2'), want: [] },
  { why: '<1.28.0', query: pkg('SwiftURL', 'github.com/apple/swift-nio-http2', '1.27.0'), want: ['GHSA-qppj-fm5r-hxr3'] },
  {
    why: 'HSEC-2023-0006 is stored twice with the same modified; the first file by name (the GHC example) is kept',
    query: pkg('GHC', 'RTS', '9.2.2'),
    want: ['HSEC-2023-0006'],
  },
  { why: '… so the Hackage copy is not indexed', query: pkg('Hackage', 'x509-validation', '1.4.5'), want: [] },
  // Linux and OSS-Fuzz: no comparator
  {
    why: 'Linux has no comparator: versions are compared as strings and CVE-2025-21772 lists none',
    query: pkg('Linux', 'Kernel', '5.4.100'),
    want: [],
  },
  { why: 'without a version every record of the package', query: pkg('Linux', 'Kernel'), want: ['CVE-2025-21772'] },
  { why: 'OSS-Fuzz string match on the listed FILE5_29', query: pkg('OSS-Fuzz', 'file', 'FILE5_29'), want: ['OSV-2017-134'] },
  { why: 'fuzzy tag match: FILE5_29 and 5.29 both normalise to 5-29', query: pkg('OSS-Fuzz', 'file', '5.29'), want: ['OSV-2017-134'] },
  { why: 'not listed', query: pkg('OSS-Fuzz', 'file', 'FILE5_31'), want: [] },
  // Linux distributions
  {
    why: 'AlmaLinux:8 linux-firmware: four ALSAs fixed in later builds (osv.dev integration test)',
    query: pkg('AlmaLinux:8', 'linux-firmware', '20230404-117.git2e92a49f.el8_8.alma.1'),
    want: ['ALSA-2023:7109', 'ALSA-2024:3178', 'ALSA-2024:4262', 'ALSA-2024:7481'],
  },
  { why: 'a version above every fix', query: pkg('AlmaLinux:8', 'linux-firmware', '99999999-117.git2e92a49f.el8_8.alma.1'), want: [] },
  {
    why: 'the base ecosystem reaches AlmaLinux:8 rows',
    query: pkg('AlmaLinux', 'linux-firmware', '20230404-117.git2e92a49f.el8_8.alma.1'),
    want: ['ALSA-2023:7109', 'ALSA-2024:3178', 'ALSA-2024:4262', 'ALSA-2024:7481'],
  },
  {
    why: 'no AlmaLinux:9 rows for linux-firmware',
    query: pkg('AlmaLinux:9', 'linux-firmware', '20230404-117.git2e92a49f.el8_8.alma.1'),
    want: [],
  },
  {
    why: 'Red Hat numpy < 0:1.19.4-3.module+el8.5.0+12204+54860423',
    query: pkg('Red Hat:rhel_aus:8.6::appstream', 'numpy', '0:1.14.3-1.el8'),
    want: ['RHSA-2024:6220'],
  },
  {
    why: 'rpm: no epoch equals epoch 0, so this is the fixed version',
    query: pkg('Red Hat', 'numpy', '1.19.4-3.module+el8.5.0+12204+54860423'),
    want: [],
  },
  {
    why: 'purl rpm/redhat maps to Red Hat (the base reaches every stream)',
    query: purl('pkg:rpm/redhat/git-lfs@2.13.3-2.el8'),
    want: ['RHSA-2024:4546'],
  },
  { why: 'Debian:7 nginx before 1.2.1-2.2+wheezy3', query: pkg('Debian:7', 'nginx', '1.2.1-2.2+wheezy2'), want: ['DSA-3029-1'] },
  { why: 'fixed', query: pkg('Debian:7', 'nginx', '1.2.1-2.2+wheezy3'), want: [] },
  { why: 'other release', query: pkg('Debian:8', 'nginx', '1.2.1-2.2+wheezy2'), want: [] },
  { why: 'bare Debian reaches every release', query: pkg('Debian', 'nginx', '1.2.1-2.2+wheezy2'), want: ['DSA-3029-1'] },
  {
    why: 'purl distro=wheezy is Debian:7',
    query: purl('pkg:deb/debian/nginx@1.2.1-2.2%2Bwheezy2?arch=source&distro=wheezy'),
    want: ['DSA-3029-1'],
  },
  { why: 'CVE-2024-3847: introduced 0 in Debian:10 and 11', query: pkg('Debian:11', 'chromium', '120.0'), want: ['CVE-2024-3847'] },
  { why: 'no Debian:12 entry', query: pkg('Debian:12', 'chromium', '120.0'), want: [] },
  { why: 'Alpine:v3.8 openssl < 1.0.2q-r0', query: pkg('Alpine:v3.8', 'openssl', '1.0.2p-r0'), want: ['CVE-2018-5407'] },
  { why: 'fixed', query: pkg('Alpine:v3.8', 'openssl', '1.0.2q-r0'), want: [] },
  { why: 'bare Alpine uses enumerated versions only, and the record lists none', query: pkg('Alpine', 'openssl', '1.0.2p-r0'), want: [] },
  { why: 'purls carry no Alpine release: same as bare Alpine', query: purl('pkg:apk/alpine/openssl@1.0.2p-r0'), want: [] },
  { why: 'Alpine:v3.15 mariadb < 10.6.8-r0', query: pkg('Alpine:v3.15', 'mariadb', '10.6.7-r0'), want: ['CVE-2022-27449'] },
  {
    why: 'Ubuntu:Pro:14.04:LTS rows are also filed as Ubuntu:14.04 (introduced 0)',
    query: pkg('Ubuntu:14.04', 'coin3', '3.1.4~abc9f50-3'),
    want: ['CVE-2009-3720'],
  },
  { why: 'introduced 0 affects every version of the release', query: pkg('Ubuntu:22.04', 'coin3', '0.1'), want: ['CVE-2009-3720'] },
  { why: 'bare Ubuntu: a listed version (22.04 lists 4.0.0+ds-2)', query: pkg('Ubuntu', 'coin3', '4.0.0+ds-2'), want: ['CVE-2009-3720'] },
  { why: 'bare Ubuntu: not listed anywhere, events are not used', query: pkg('Ubuntu', 'coin3', '4.0.0+ds-3'), want: [] },
  { why: 'deb/ubuntu purl is bare Ubuntu', query: purl('pkg:deb/ubuntu/coin3@4.0.0%2Bds-2'), want: ['CVE-2009-3720'] },
  // GIT
  {
    why: 'curl records whose GIT entry lists the tag 7.85.0',
    query: pkg('GIT', 'https://github.com/curl/curl.git', '7.85.0'),
    want: [
      'CURL-CVE-2022-32221',
      'CURL-CVE-2022-35260',
      'CURL-CVE-2022-42915',
      'CURL-CVE-2022-42916',
      'CURL-CVE-2022-43551',
      'CURL-CVE-2022-43552',
      'CURL-CVE-2023-23914',
      'CURL-CVE-2023-23915',
      'CURL-CVE-2023-23916',
      'CURL-CVE-2023-27533',
      'CURL-CVE-2023-27534',
      'CURL-CVE-2023-27535',
      'CURL-CVE-2023-27536',
      'CURL-CVE-2023-27538',
      'CURL-CVE-2023-28319',
      'CURL-CVE-2023-28320',
      'CURL-CVE-2023-28321',
      'CURL-CVE-2023-28322',
      'CURL-CVE-2023-38039',
      'CURL-CVE-2023-38545',
      'CURL-CVE-2023-38546',
      'CURL-CVE-2023-46218',
      'CURL-CVE-2023-46219',
    ],
  },
  { why: 'no curl record lists 7.6.1', query: pkg('GIT', 'github.com/curl/curl', '7.6.1'), want: [] },
  // Commits (introduced and last_affected hashes of GIT ranges)
  {
    why: 'introduced commit of four records',
    query: { commit: '546572da0457f37c698c02d0a08d90fdfcbeedec' },
    want: ['CURL-CVE-2022-32221', 'CURL-CVE-2023-28322', 'CVE-2026-3784', 'CVE-2026-8932'],
  },
  {
    why: 'introduced (0853, 2466, 5025) or last_affected (0853, 7264); upper-case hex is the same commit',
    query: { commit: '7161CB17C01DCFF1DC5BF89A18437D9D729F1ECD' },
    want: ['CVE-2024-0853', 'CVE-2024-2466', 'CVE-2024-7264', 'CVE-2025-5025'],
  },
  { why: 'a fixed commit is where the vulnerability is gone', query: { commit: '19ccebafb7663c422c714e0c67fa4775abf91c43' }, want: [] },
];
