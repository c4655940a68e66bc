import { describe, expect, it } from 'vitest';
import { classifyAddress, isAddressAllowed, isForbiddenHostName, type AddressClass } from './address-policy.ts';

const CASES: [string, AddressClass][] = [
  // Link-local and cloud metadata, in every spelling a socket accepts.
  ['169.254.169.254', 'forbidden'],
  ['169.254.0.1', 'forbidden'],
  ['::ffff:169.254.169.254', 'forbidden'],
  ['::ffff:a9fe:a9fe', 'forbidden'],
  ['0:0:0:0:0:ffff:a9fe:a9fe', 'forbidden'],
  ['64:ff9b::169.254.169.254', 'forbidden'],
  ['fd00:ec2::254', 'forbidden'],
  ['FD00:EC2:0:0:0:0:0:254', 'forbidden'],
  ['100.100.100.200', 'forbidden'],
  ['::ffff:100.100.100.200', 'forbidden'],
  ['168.63.129.16', 'forbidden'],
  ['fe80::1', 'forbidden'],
  ['fe80::1%eth0', 'forbidden'],
  ['febf:ffff::1', 'forbidden'],
  // Unspecified, multicast, broadcast, reserved.
  ['0.0.0.0', 'forbidden'],
  ['0.1.2.3', 'forbidden'],
  ['::', 'forbidden'],
  ['::ffff:0.0.0.0', 'forbidden'],
  ['224.0.0.1', 'forbidden'],
  ['239.255.255.250', 'forbidden'],
  ['255.255.255.255', 'forbidden'],
  ['240.0.0.1', 'forbidden'],
  ['ff02::1', 'forbidden'],
  // IPv6 forms nothing legitimate uses.
  ['::169.254.169.254', 'forbidden'],
  ['::127.0.0.1', 'forbidden'],
  ['::ffff:0:a9fe:a9fe', 'forbidden'],
  ['64:ff9b:1::a9fe:a9fe', 'forbidden'],
  ['fec0::1', 'forbidden'],
  // Not an address at all: fail closed.
  ['', 'forbidden'],
  ['localhost', 'forbidden'],
  ['169.254.169.254.nip.io', 'forbidden'],
  // Loopback and private.
  ['127.0.0.1', 'private'],
  ['127.255.255.254', 'private'],
  ['::1', 'private'],
  ['0:0:0:0:0:0:0:1', 'private'],
  ['::ffff:127.0.0.1', 'private'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.10', 'private'],
  ['100.64.0.1', 'private'],
  ['100.127.255.255', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['::ffff:10.0.0.1', 'private'],
  ['64:ff9b::10.0.0.1', 'private'],
  // Public, including the neighbours of the ranges above.
  ['8.8.8.8', 'public'],
  ['172.32.0.1', 'public'],
  ['172.15.255.255', 'public'],
  ['100.128.0.1', 'public'],
  ['169.255.0.1', 'public'],
  ['11.0.0.1', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['fe00::1', 'public'],
];

describe('upstream address policy', () => {
  it.each(CASES)('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('allows private and loopback addresses only when the deployment allows them', () => {
    expect(isAddressAllowed('127.0.0.1', false)).toBe(false);
    expect(isAddressAllowed('127.0.0.1', true)).toBe(true);
    expect(isAddressAllowed('fd12::1', false)).toBe(false);
    expect(isAddressAllowed('fd12::1', true)).toBe(true);
    expect(isAddressAllowed('8.8.8.8', false)).toBe(true);
  });

  it('never allows a forbidden address, even with private addresses allowed', () => {
    for (const [address, addressClass] of CASES) {
      if (addressClass === 'forbidden') expect(isAddressAllowed(address, true), address).toBe(false);
    }
  });

  it('refuses metadata service names whatever their case or trailing dot', () => {
    for (const name of ['metadata.google.internal', 'METADATA.Google.Internal', 'metadata.google.internal.', 'metadata', 'instance-data']) {
      expect(isForbiddenHostName(name), name).toBe(true);
    }
    for (const name of ['api.openai.com', 'metadata.example.com', 'localhost', 'google.internal']) {
      expect(isForbiddenHostName(name), name).toBe(false);
    }
  });
});
