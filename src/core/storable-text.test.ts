import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { assertStorableText, findUnstorableText, holdsUnstorableText, isUnstorableText } from './storable-text.ts';

describe('storable text', () => {
  it('refuses NUL and unpaired surrogates, accepts paired ones', () => {
    expect(isUnstorableText('a\u0000b')).toBe(true);
    expect(isUnstorableText('\uD800')).toBe(true);
    expect(isUnstorableText('x\uDC00')).toBe(true);
    expect(isUnstorableText('\uD83D\uDE00 ok')).toBe(false);
    expect(isUnstorableText('plain ünïcødé')).toBe(false);
  });

  it('names the first offending field of a nested value, keys included', () => {
    expect(findUnstorableText({ a: [{ b: 'ok' }, { c: 'bad\u0000' }] }, 'body')).toBe('body.a.1.c');
    expect(findUnstorableText({ ['k\u0000']: 1 }, 'body')).toBe('body.k?');
    expect(findUnstorableText({ a: 1, b: [true, null] }, 'body')).toBeUndefined();
    expect(findUnstorableText(new Uint8Array([0]), 'body')).toBeUndefined();
  });

  it('tells whether a nested value holds such text, as findUnstorableText finds it', () => {
    const values: unknown[] = [
      { a: [{ b: 'ok' }, { c: 'bad\u0000' }] },
      { ['k\u0000']: 1 },
      { a: 1, b: [true, null, 2n], c: new Uint8Array([0]) },
      ['\uD83D\uDE00', ['x\uDC00']],
      'plain',
    ];
    for (const value of values) expect(holdsUnstorableText(value)).toBe(findUnstorableText(value, 'body') !== undefined);
    expect(values.map((v) => holdsUnstorableText(v))).toEqual([true, true, false, true, false]);
  });

  it('throws parameter_invalid without echoing the value', () => {
    let caught: unknown;
    try {
      assertStorableText({ email: 'secret\u0000value' }, 'body');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).code).toBe('parameter_invalid');
    expect((caught as AppError).message).toContain('body.email');
    expect((caught as AppError).message).not.toContain('secret');
  });
});
