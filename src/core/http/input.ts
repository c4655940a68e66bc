import type { z } from 'zod';
import { AppError } from '../errors.ts';

/**
 * Request parsing whose error messages never repeat what the client sent. A client may paste an API key into the
 * wrong field, a field name or a model reference; an error message that echoes it would put the key into responses,
 * proxy logs and screenshots (spec: "No API returns credential material"). So messages name only our own schema
 * (field names, limits, allowed values) and repeat a client-supplied name only when it is a short snake_case field
 * name, the grammar every field of these routes follows.
 */

/** A name safe to repeat: the grammar of this API's field names, short. */
const FIELD_NAME = /^[a-z_]{1,64}$/;

/** `name` when it may be repeated in a message, otherwise undefined. */
function echoableFieldName(name: string): string | undefined {
  return FIELD_NAME.test(name) ? name : undefined;
}

/** A path like `command.expected_lock_version`; a segment that is not a safe field name becomes `<field>`. */
function safePath(where: string, path: readonly PropertyKey[]): string {
  const segments = path.map((segment) => (typeof segment === 'number' ? String(segment) : typeof segment === 'string' ? (echoableFieldName(segment) ?? '<field>') : '<field>'));
  return [where, ...segments].join('.');
}

/** "unknown field", naming the fields only when every one of them is a safe field name. */
export function unknownFieldsMessage(keys: readonly string[]): string {
  const names = keys.map(echoableFieldName);
  if (names.length > 0 && names.every((n) => n !== undefined)) return `unknown field${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')}`;
  return keys.length > 1 ? 'unknown fields' : 'unknown field';
}

/**
 * The message of one zod issue. Zod's own messages describe the schema (expected type, limits, allowed values) and
 * our custom messages are fixed text, so only the issues that carry client keys need rewriting: unrecognized keys
 * and invalid record keys.
 */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return unknownFieldsMessage(issue.keys);
  if (issue.code === 'invalid_key') return 'invalid field name';
  return issue.message;
}

/**
 * Parses a request part (`path`, `query`, `command`) with a zod schema; a failure is 400 `parameter_invalid` naming
 * the first offending field without repeating client input.
 */
export function parseRequestPart<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new AppError('parameter_invalid', `${where}: invalid value`);
  throw new AppError('parameter_invalid', `${safePath(where, issue.path)}: ${issueMessage(issue)}`);
}
