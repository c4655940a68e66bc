import type { z } from 'zod';
import { AppError } from '../errors.ts';

/**
 * Parses a request part with a zod schema; a failure is `parameter_invalid` naming the first offending field,
 * so every route reports bad input the same way.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${where}.${issue.path.map(String).join('.')}` : where;
  throw new AppError('parameter_invalid', `${path}: ${issue?.message ?? 'invalid value'}`);
}
