import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { createTokenCounters, type TextCounter } from '../tokens/token-counter.ts';
import { composed } from '../wires/wire-answers.testkit.ts';
import type { ChatMessage } from '../wires/wire.types.ts';
import { checkFit, checkFitBounded, estimateChatInput } from './fitting.ts';

const counters = createTokenCounters({ tokenizerDir: undefined });
const resolution = counters.resolve({ kind: 'bpe', encoding: 'o200k_base' });
if (!resolution.available) throw new Error(resolution.reason);
const bpe = resolution.counter;

/** The o200k counter, counting how often the tokenizer itself runs. */
function spied(): { counter: TextCounter; calls: () => number } {
  let calls = 0;
  return {
    counter: {
      ...bpe,
      count: (text) => {
        calls++;
        return bpe.count(text);
      },
    },
    calls: () => calls,
  };
}

const model = composed('openai_chat', {
  model_id: 'm',
  capabilities: { workload: 'text_generation', limits: { combined_input_output_tokens: 1000, output_tokens: 500 } },
});
const say = (text: string): ChatMessage[] => [{ role: 'user', content: text }];

/** The refusal `run` throws, or undefined. */
function refusal(run: () => void): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof AppError) return `${error.code}: ${error.message}`;
    throw error;
  }
}

describe('fitting with the byte bound first', () => {
  it('skips the tokenizer when even the byte bound fits', () => {
    const { counter, calls } = spied();
    checkFitBounded(model, counter, (c) => estimateChatInput(c, say('Say ok.')), 100);
    expect(calls()).toBe(0);
  });

  it('counts exactly when the bound does not fit, and admits what the exact count fits', () => {
    const { counter, calls } = spied();
    // 600 bytes: the bound (607 with the allowance) and 400 output tokens exceed the window of 1000; the exact count,
    // about 130, fits.
    const text = 'word '.repeat(120);
    checkFitBounded(model, counter, (c) => estimateChatInput(c, say(text)), 400);
    expect(calls()).toBeGreaterThan(0);
  });

  it('refuses with the same message as the exact check, naming the exact figures', () => {
    const text = 'word '.repeat(1200);
    const exact = refusal(() => checkFit(model, estimateChatInput(bpe, say(text)), 100));
    expect(exact).toMatch(/^context_length_exceeded: the input is estimated at \d+ tokens/);
    expect(refusal(() => checkFitBounded(model, bpe, (c) => estimateChatInput(c, say(text)), 100))).toBe(exact);
    expect(refusal(() => checkFitBounded(model, bpe, (c) => estimateChatInput(c, say('hi')), 600))).toBe(
      refusal(() => checkFit(model, estimateChatInput(bpe, say('hi')), 600)),
    );
  });

  it('agrees with the exact check on every request around the window edge', () => {
    for (let words = 150; words <= 260; words += 5)
      for (const output of [undefined, 1, 200, 500, 501]) {
        const messages = say('word '.repeat(words) + '日本語 😀 '.repeat(words % 7));
        expect(refusal(() => checkFitBounded(model, bpe, (c) => estimateChatInput(c, messages), output))).toBe(
          refusal(() => checkFit(model, estimateChatInput(bpe, messages), output)),
        );
      }
  });
});
