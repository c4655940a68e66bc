import { describe, expect, it } from 'vitest';
import { estimateCost } from './cost.ts';
import { rateLimitWaitMs } from './execution.ts';

const usage = (input_tokens: number, output_tokens: number, cached_input_tokens: number | null = null) => ({
  input_tokens,
  output_tokens,
  cached_input_tokens,
});
const pricing = {
  unit: 'USD',
  input_per_million_tokens: '1.25',
  output_per_million_tokens: '10.00',
  cache_read_per_million_tokens: '0.125',
};

describe('estimateCost', () => {
  it('prices per million tokens exactly, cached input at the cache-read price', () => {
    expect(estimateCost(pricing, 'USD', usage(1_000_000, 0))).toEqual({ amount: '1.25', unit: 'USD' });
    expect(estimateCost(pricing, 'USD', usage(3, 7))).toEqual({ amount: '0.00007375', unit: 'USD' });
    expect(estimateCost(pricing, 'USD', usage(1000, 0, 800))).toEqual({ amount: '0.00035', unit: 'USD' });
    // 0.1 + 0.2 in binary floating point is not 0.3; here it is.
    expect(
      estimateCost({ unit: 'USD', input_per_million_tokens: '0.1', output_per_million_tokens: '0.2' }, 'USD', usage(1e6, 1e6))?.amount,
    ).toBe('0.3');
    expect(estimateCost(pricing, 'USD', usage(0, 0))?.amount).toBe('0');
  });

  it('is absent when the unit, the pricing, the usage or a needed price is unknown', () => {
    expect(estimateCost(pricing, null, usage(1, 1))).toBeNull();
    expect(estimateCost(pricing, 'EUR', usage(1, 1))).toBeNull();
    expect(estimateCost(null, 'USD', usage(1, 1))).toBeNull();
    expect(estimateCost(pricing, 'USD', null)).toBeNull();
    expect(estimateCost({ unit: 'USD', input_per_million_tokens: '0.02' }, 'USD', usage(5, 1))).toBeNull();
    expect(estimateCost({ unit: 'USD', input_per_million_tokens: '0.02' }, 'USD', usage(5, 0))).toEqual({
      amount: '0.0000001',
      unit: 'USD',
    });
  });
});

describe('rateLimitWaitMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const none = new Uint8Array();
  it('reads retry-after as seconds or an HTTP date', () => {
    expect(rateLimitWaitMs({ 'retry-after': '7' }, none, now)).toBe(7000);
    expect(rateLimitWaitMs({ 'retry-after': new Date(now + 90_000).toUTCString() }, none, now)).toBe(90_000);
  });
  it("reads Anthropic's reset timestamps (the latest) and Gemini's RetryInfo", () => {
    const headers = {
      'anthropic-ratelimit-requests-reset': new Date(now + 5_000).toISOString(),
      'anthropic-ratelimit-tokens-reset': new Date(now + 20_000).toISOString(),
    };
    expect(rateLimitWaitMs(headers, none, now)).toBe(20_000);
    const gemini = { error: { code: 429, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12.5s' }] } };
    expect(rateLimitWaitMs({}, Buffer.from(JSON.stringify(gemini)), now)).toBe(12_500);
  });
  it('waits 30 s when nothing says, and at most an hour', () => {
    expect(rateLimitWaitMs({}, Buffer.from('not json'), now)).toBe(30_000);
    expect(rateLimitWaitMs({ 'retry-after': '999999' }, none, now)).toBe(3_600_000);
  });
});
