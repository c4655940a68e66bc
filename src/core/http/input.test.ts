import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../errors.ts';
import { parseRequestPart, unknownFieldsMessage } from './input.ts';

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
    expect(messageOf(() => parseRequestPart(strict, { enabled: true, [secret]: 1 }, 'command'))).toBe('parameter_invalid: command: unknown field');
    expect(messageOf(() => parseRequestPart(strict, { enabled: true, [secret]: 1, other: 2 }, 'command'))).toBe('parameter_invalid: command: unknown fields');
    expect(messageOf(() => parseRequestPart(strict, { enabled: true, tags: { [secret]: 1 } }, 'command'))).toBe('parameter_invalid: command.tags.<field>: invalid field name');
    expect(messageOf(() => parseRequestPart(strict, { enabled: secret }, 'command'))).not.toContain('LEAK');
    expect(messageOf(() => parseRequestPart(z.string().max(8), secret, 'command.model'))).not.toContain('LEAK');
    expect(messageOf(() => parseRequestPart(z.enum(['a', 'b']), secret, 'query.workload'))).not.toContain('LEAK');
  });

  it('[ADM-ERR-1] names unknown fields that follow the field grammar', () => {
    expect(unknownFieldsMessage(['expected_version'])).toBe('unknown field "expected_version"');
    expect(unknownFieldsMessage(['a', 'b_c'])).toBe('unknown fields "a", "b_c"');
    expect(unknownFieldsMessage(['Enabled'])).toBe('unknown field');
    expect(unknownFieldsMessage(['x'.repeat(65)])).toBe('unknown field');
  });
});
