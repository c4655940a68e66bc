import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPageTokenCodec } from './page-token.ts';

/** ListDocuments page tokens: opaque, tamper-evident, bound to one Account, verifiable across key rotation. */
describe('page tokens', () => {
  const current = randomBytes(32);
  const codec = createPageTokenCodec([current]);
  const cursor = { created_at: 1_763_000_000_123, id: '7d0f6c1e-0000-4000-8000-000000000001' };

  it('round-trip for the Account they were made for', () => {
    expect(codec.verify('acc-1', codec.sign('acc-1', cursor))).toEqual(cursor);
  });

  it('are refused when altered, truncated, made for another Account or with an unknown key', () => {
    const token = codec.sign('acc-1', cursor);
    const [payload, mac] = token.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify([1, 'acc-1', 0, ''])).toString('base64url');
    const bad = [
      `${forgedPayload}.${mac}`,
      `${payload}.${(mac[0] === 'A' ? 'B' : 'A') + mac.slice(1)}`,
      payload,
      `${token}.x`,
      '',
      'x'.repeat(2000),
      createPageTokenCodec([randomBytes(32)]).sign('acc-1', cursor),
    ];
    for (const t of bad) expect(() => codec.verify('acc-1', t), t).toThrow(/page_token is not valid/);
    expect(() => codec.verify('acc-2', token)).toThrow(/page_token is not valid/);
  });

  it('made with the previous key still verify after rotation', () => {
    const previous = randomBytes(32);
    const old = createPageTokenCodec([previous]).sign('acc-1', cursor);
    expect(createPageTokenCodec([current, previous]).verify('acc-1', old)).toEqual(cursor);
  });
});
