import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { checkInput, parseInput, parseRequestMessage, unknownFieldsMessage } from './validation.ts';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a parameter error');
}

describe('request parsing messages', () => {
  const secret = 'sk-LEAK-0123456789abcdefABCDEF';

  it('[ADM-ERR-1] regression: never repeat unknown keys, record keys or values that are not short snake_case names', () => {
    const strict = z.strictObject({ enabled: z.boolean(), tags: z.record(z.string().regex(/^[a-z]+$/), z.number()).optional() });
    expect(messageOf(() => parseInput(strict, { enabled: true, [secret]: 1 }, 'command'))).toBe(
      'parameter_invalid: command: unknown field',
    );
    expect(messageOf(() => parseInput(strict, { enabled: true, [secret]: 1, other: 2 }, 'command'))).toBe(
      'parameter_invalid: command: unknown fields',
    );
    expect(messageOf(() => parseInput(strict, { enabled: true, tags: { [secret]: 1 } }, 'command'))).toBe(
      'parameter_invalid: command.tags.<field>: invalid field name',
    );
    expect(messageOf(() => parseInput(strict, { enabled: secret }, 'command'))).not.toContain('LEAK');
    expect(messageOf(() => parseInput(z.string().max(8), secret, 'command.model'))).not.toContain('LEAK');
    expect(messageOf(() => parseInput(z.enum(['a', 'b']), secret, 'query.workload'))).not.toContain('LEAK');
  });

  it('[ADM-ERR-1] names unknown fields that follow the field grammar', () => {
    expect(unknownFieldsMessage(['expected_version'])).toBe('unknown field "expected_version"');
    expect(unknownFieldsMessage(['a', 'b_c'])).toBe('unknown fields "a", "b_c"');
    expect(unknownFieldsMessage(['Enabled'])).toBe('unknown field');
    expect(unknownFieldsMessage(['x'.repeat(65)])).toBe('unknown field');
  });

  it('[ADM-ERR-1] names RPC request fields by their message path, with the same policy', () => {
    const message = z.strictObject({
      encryption: z.strictObject({ key_id: z.string().max(4) }).optional(),
      labels: z.record(z.string().regex(/^[a-z]+$/), z.string()).optional(),
    });
    expect(messageOf(() => parseRequestMessage(message, { encryption: { key_id: secret } }))).toBe(
      'parameter_invalid: encryption.key_id: Too big: expected string to have <=4 characters',
    );
    expect(messageOf(() => parseRequestMessage(message, { [secret]: 1 }))).toBe('parameter_invalid: request: unknown field');
    expect(messageOf(() => parseRequestMessage(message, { labels: { [secret]: 'x' } }))).toBe(
      'parameter_invalid: labels.<field>: invalid field name',
    );
    expect(messageOf(() => parseRequestMessage(message, 'not a message'))).not.toContain('not a message');
  });

  it('[ADM-ERR-1] checks without throwing for protocols with their own error shape, with the same message', () => {
    const form = z.strictObject({ grant_type: z.string() });
    expect(checkInput(form, { grant_type: 'x' }, 'body')).toEqual({ ok: true, value: { grant_type: 'x' } });
    expect(checkInput(form, { grant_type: 'x', [secret]: 1 }, 'body')).toEqual({ ok: false, message: 'body: unknown field' });
    expect(messageOf(() => parseInput(form, { grant_type: 'x', [secret]: 1 }, 'body'))).toBe('parameter_invalid: body: unknown field');
  });
});
