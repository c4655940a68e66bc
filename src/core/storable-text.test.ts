import { describe, expect, it } from 'vitest';
import { AppError } from './errors.ts';
import { assertStorableText, findUnstorableText, isUnstorableText } from './storable-text.ts';

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

  it('walks keys, nested arrays and surrogate pairs, and skips bytes and other non-text values', () => {
    expect(findUnstorableText({ a: 1, b: [true, null, 2n], c: new Uint8Array([0]) }, 'body')).toBeUndefined();
    expect(findUnstorableText(['\uD83D\uDE00', ['x\uDC00']], 'body')).toBe('body.1.0');
    expect(findUnstorableText({ a: { ['k\u0000']: 'ok' } }, 'body')).toBe('body.a.k?');
    expect(findUnstorableText('bad\u0000', 'body')).toBe('body');
    expect(findUnstorableText('plain', 'body')).toBeUndefined();
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
