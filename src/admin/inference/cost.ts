import type { Pricing } from '../catalog/catalog.schemas.ts';
import type { WireUsage } from '../wires/wire.types.ts';
import type { InferenceCost } from './inference.types.ts';

/** A non-negative decimal as an integer and its count of fraction digits: `"1.25"` is `{ digits: 125n, scale: 2 }`. */
interface Fixed {
  digits: bigint;
  scale: number;
}

function parseDecimal(text: string): Fixed {
  const [whole = '0', fraction = ''] = text.split('.');
  return { digits: BigInt(whole + fraction), scale: fraction.length };
}

/** `digits / 10^scale` as decimal text, without trailing fraction zeros. */
function formatFixed({ digits, scale }: Fixed): string {
  const text = digits.toString().padStart(scale + 1, '0');
  const whole = text.slice(0, text.length - scale);
  const fraction = text.slice(text.length - scale).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/**
 * The estimated cost of one call from the composed model's `pricing` (per million tokens), in exact decimal arithmetic.
 * `input_tokens` includes the cached ones (the neutral `WireUsage` convention): those are priced at
 * `cache_read_per_million_tokens` when the model has that price, else at the input price. Absent (null) when the
 * Account has no cost unit, the model has no pricing or prices in another unit, the provider reported no usage, or a
 * price the call needs is missing: an unknown price is never read as zero.
 */
export function estimateCost(pricing: Pricing | null, accountUnit: string | null, usage: WireUsage | null): InferenceCost | null {
  if (accountUnit === null || pricing === null || usage === null || pricing.unit !== accountUnit) return null;
  const cached = pricing.cache_read_per_million_tokens !== undefined ? Math.min(usage.cached_input_tokens ?? 0, usage.input_tokens) : 0;
  const lines: [string | undefined, number][] = [
    [pricing.input_per_million_tokens, usage.input_tokens - cached],
    [pricing.cache_read_per_million_tokens, cached],
    [pricing.output_per_million_tokens, usage.output_tokens],
  ];
  const terms: Fixed[] = [];
  for (const [price, tokens] of lines) {
    if (tokens === 0) continue;
    if (price === undefined) return null;
    const fixed = parseDecimal(price);
    // Per million tokens: dividing by 10^6 is six more fraction digits.
    terms.push({ digits: fixed.digits * BigInt(tokens), scale: fixed.scale + 6 });
  }
  const scale = Math.max(6, ...terms.map((t) => t.scale));
  const digits = terms.reduce((sum, t) => sum + t.digits * 10n ** BigInt(scale - t.scale), 0n);
  return { amount: formatFixed({ digits, scale }), unit: accountUnit };
}
