import { BlockList, isIP } from 'node:net';

/**
 * Which network addresses an upstream call may reach (issue 15 item 3). Three classes:
 * - `forbidden`: never reached, whatever the deployment allows — unspecified, link-local (where every cloud's
 *   instance metadata lives), cloud metadata addresses outside link-local, multicast, broadcast and reserved;
 * - `private`: loopback and private ranges, reached only when the deployment allows private upstreams
 *   (`PLATFORM_UPSTREAM_ALLOW_PRIVATE`, so a model server on the same machine works in the embedded setup);
 * - `public`: everything else.
 * The forbidden list is checked first because some forbidden addresses sit inside private ranges (Alibaba's
 * 100.100.100.200 in 100.64/10, AWS's fd00:ec2::254 in fc00::/7).
 */
export type AddressClass = 'public' | 'private' | 'forbidden';

interface Range {
  network: string;
  prefix: number;
}

const FORBIDDEN_V4: readonly Range[] = [
  { network: '0.0.0.0', prefix: 8 }, // "this network": 0.0.0.0 connects to the local host on Linux
  { network: '169.254.0.0', prefix: 16 }, // link-local: AWS, GCP, Azure, Oracle and others serve metadata at .169.254
  { network: '100.100.100.200', prefix: 32 }, // Alibaba Cloud metadata
  { network: '168.63.129.16', prefix: 32 }, // Azure WireServer, the host's platform endpoint
  { network: '192.0.0.0', prefix: 24 }, // IETF protocol assignments (Oracle Cloud Classic served metadata at .192)
  { network: '224.0.0.0', prefix: 4 }, // multicast
  { network: '240.0.0.0', prefix: 4 }, // reserved, with 255.255.255.255 broadcast
];

const PRIVATE_V4: readonly Range[] = [
  { network: '127.0.0.0', prefix: 8 },
  { network: '10.0.0.0', prefix: 8 },
  { network: '172.16.0.0', prefix: 12 },
  { network: '192.168.0.0', prefix: 16 },
  { network: '100.64.0.0', prefix: 10 }, // carrier-grade NAT, also cluster-internal on some clouds
];

const FORBIDDEN_V6: readonly Range[] = [
  { network: '::', prefix: 128 },
  { network: 'fe80::', prefix: 10 },
  { network: 'ff00::', prefix: 8 },
  { network: 'fd00:ec2::254', prefix: 128 }, // AWS instance metadata over IPv6
];

const PRIVATE_V6: readonly Range[] = [
  { network: '::1', prefix: 128 },
  { network: 'fc00::', prefix: 7 },
];

/**
 * IPv6 prefixes that carry an IPv4 address in their last 32 bits and reach it: IPv4-mapped addresses (a dual-stack
 * socket connects to the IPv4 host) and the NAT64 well-known prefix (the translator connects to it). Each IPv4 range
 * is listed again under each prefix, so `::ffff:169.254.169.254` is as forbidden as `169.254.169.254`.
 */
const IPV4_EMBEDDING_PREFIXES = ['::ffff:', '64:ff9b::'] as const;

function blockListOf(v4: readonly Range[], v6: readonly Range[]): BlockList {
  const list = new BlockList();
  for (const { network, prefix } of v4) {
    list.addSubnet(network, prefix, 'ipv4');
    for (const embedding of IPV4_EMBEDDING_PREFIXES) list.addSubnet(`${embedding}${network}`, 96 + prefix, 'ipv6');
  }
  for (const { network, prefix } of v6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

const FORBIDDEN = blockListOf(FORBIDDEN_V4, FORBIDDEN_V6);
const PRIVATE = blockListOf(PRIVATE_V4, PRIVATE_V6);

/**
 * IPv6 ranges no upstream uses, refused after the private check because `::1` lies inside the first: IPv4-compatible
 * (deprecated), IPv4-translated, local-use NAT64 (its translator may lead anywhere) and site-local (deprecated).
 */
const UNUSED_V6 = blockListOf(
  [],
  [
    { network: '::', prefix: 96 },
    { network: '::ffff:0:0:0', prefix: 96 },
    { network: '64:ff9b:1::', prefix: 48 },
    { network: 'fec0::', prefix: 10 },
  ],
);

/**
 * Names of metadata services, refused before any resolution: inside a cloud they resolve to a link-local address
 * (refused anyway), but a resolver that answers them differently must not open a way around that.
 */
const FORBIDDEN_NAMES = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Classifies an IP address (IPv4, IPv6, optionally with a `%zone`). Anything that is not an IP address is forbidden. */
export function classifyAddress(address: string): AddressClass {
  // A zone id (`fe80::1%eth0`, which a resolver may return) names the interface, not the address.
  const zoneAt = address.indexOf('%');
  const bare = zoneAt === -1 ? address : address.slice(0, zoneAt);
  const family = isIP(bare);
  if (family === 0) return 'forbidden';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (FORBIDDEN.check(bare, type)) return 'forbidden';
  if (PRIVATE.check(bare, type)) return 'private';
  if (type === 'ipv6' && UNUSED_V6.check(bare, 'ipv6')) return 'forbidden';
  return 'public';
}

/** Whether an upstream call may connect to `address`; private and loopback addresses only when `allowPrivate`. */
export function isAddressAllowed(address: string, allowPrivate: boolean): boolean {
  const addressClass = classifyAddress(address);
  return addressClass === 'public' || (addressClass === 'private' && allowPrivate);
}

/** Whether a host name is refused by name alone (case and a trailing dot do not matter). */
export function isForbiddenHostName(hostname: string): boolean {
  return FORBIDDEN_NAMES.has(hostname.toLowerCase().replace(/\.+$/, ''));
}
