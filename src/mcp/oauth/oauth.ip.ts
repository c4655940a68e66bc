/**
 * IP address arithmetic shared by the per-address limits (oauth.rate-limit.ts) and the SSRF guard of metadata
 * document fetches (oauth.client-metadata.ts): IPv6 text to bytes, and the IPv4 address embedded in the IPv6 forms
 * that carry one.
 */
import { isIP } from 'node:net';

/** The 16 bytes of an IPv6 address (any textual form, with or without a trailing dotted IPv4 part or zone). */
export function ipv6Bytes(address: string): Uint8Array | undefined {
  const text = address.replace(/%.*$/, '');
  if (isIP(text) !== 6) return undefined;
  let head = text;
  let tail: number[] = [];
  // A trailing dotted IPv4 part (`::ffff:10.0.0.1`, `64:ff9b::10.0.0.1`) stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    tail = [(a << 8) | b, (c << 8) | d];
    head = text.slice(0, dotted.index);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left = '', right] = head.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const leftGroups = parse(left);
  const rightGroups = [...(right === undefined ? [] : parse(right)), ...tail];
  const groups =
    right === undefined
      ? [...leftGroups, ...tail]
      : [...leftGroups, ...new Array<number>(8 - leftGroups.length - rightGroups.length).fill(0), ...rightGroups];
  if (groups.length !== 8) return undefined;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 255;
  });
  return bytes;
}

/** Whether the first `bits` bits of `bytes` equal those of `prefix` (both 16 bytes). */
export function inPrefix(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i += 1) {
    const mask = 0x80 >> (i % 8);
    if (((bytes[i >> 3] ?? 0) & mask) !== ((prefix[i >> 3] ?? 0) & mask)) return false;
  }
  return true;
}

/** The dotted IPv4 address in the last four bytes. */
export function lastIpv4(bytes: Uint8Array): string {
  return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
}

const MAPPED = ipv6Bytes('::ffff:0:0') as Uint8Array;

/** The IPv4 address of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d` in any notation), else undefined. */
export function mappedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  return bytes && inPrefix(bytes, MAPPED, 96) ? lastIpv4(bytes) : undefined;
}

/**
 * The key a client address is counted under by per-address limits: an IPv4 address as it is (also when written as
 * IPv4-mapped IPv6), an IPv6 address by its /64 — one subscriber usually holds a whole /64, so counting single
 * addresses would let one client take 2^64 budgets.
 */
export function addressKey(address: string): string {
  if (isIP(address) === 4) return address;
  const mapped = mappedIpv4(address);
  if (mapped) return mapped;
  const bytes = ipv6Bytes(address);
  if (!bytes) return address;
  const groups: string[] = [];
  for (let i = 0; i < 8; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return `${groups.join(':')}::/64`;
}
