import type { z } from 'zod';
import { AppError } from './errors.ts';

/**
 * The one way request input is checked against a zod schema, for every transport (REST routes, RPC handlers on
 * gRPC and their HTTP mappings, the OAuth endpoints), with one message policy: messages never repeat what the
 * client sent. A client may paste an API key into the wrong field, a field name or a model reference; an error
 * message that echoes it would put the key into responses, proxy logs and screenshots (spec: "No API returns
 * credential material"). So messages name only our own schema (field names, limits, allowed values) and repeat a
 * client-supplied name only when it is a short snake_case field name, the grammar every field of our APIs follows.
 */

/** A name safe to repeat: the grammar of our field names, short. */
const FIELD_NAME = /^[a-z_]{1,64}$/;

/** `name` when it may be repeated in a message, otherwise undefined. */
export function echoableFieldName(name: string): string | undefined {
  return FIELD_NAME.test(name) ? name : undefined;
}

/** Path segments such as `tags.0.name`; a segment that is not a safe field name becomes `<field>`. */
function safeSegments(path: readonly PropertyKey[]): string[] {
  return path.map((segment) =>
    typeof segment === 'number' ? String(segment) : typeof segment === 'string' ? (echoableFieldName(segment) ?? '<field>') : '<field>',
  );
}

/** "unknown field", naming the fields only when every one of them is a safe field name. */
export function unknownFieldsMessage(keys: readonly string[]): string {
  const names = keys.map(echoableFieldName);
  if (names.length > 0 && names.every((n) => n !== undefined))
    return `unknown field${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')}`;
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

/** The outcome of {@link checkInput}: the parsed value, or the message a 400 answer may carry. */
export type InputCheck<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Checks a request part (`path`, `query`, `body`, `command`) with a zod schema without throwing, for protocols that
 * answer bad input in their own shape (OAuth). The message names the first offending field, prefixed with `where`,
 * without repeating client input.
 */
export function checkInput<S extends z.ZodType>(schema: S, value: unknown, where: string): InputCheck<z.infer<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  if (!issue) return { ok: false, message: `${where}: invalid value` };
  return { ok: false, message: `${[where, ...safeSegments(issue.path)].join('.')}: ${issueMessage(issue)}` };
}

/**
 * Parses a request part (`path`, `query`, `body`, `command`) with a zod schema; a failure is 400
 * `parameter_invalid` naming the first offending field (`command.expected_lock_version: …`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.infer<S> {
  const checked = checkInput(schema, value, where);
  if (!checked.ok) throw new AppError('parameter_invalid', checked.message);
  return checked.value;
}

/**
 * Parses an RPC request message: a failure is `parameter_invalid` naming the first offending field by its proto
 * field path (`encryption.key_id: …`, `request: …` for the message as a whole), the same on gRPC and the HTTP
 * mapping: the request is a message, not an HTTP body, so no `body.` prefix.
 */
export function parseRequestMessage<S extends z.ZodType>(schema: S, request: unknown): z.infer<S> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue && issue.path.length > 0 ? safeSegments(issue.path).join('.') : 'request';
  throw new AppError('parameter_invalid', `${path}: ${issue ? issueMessage(issue) : 'invalid value'}`);
}
