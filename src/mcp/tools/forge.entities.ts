/**
 * The forge's resources as tools return them: one output schema per resource (user, project, issue, merge
 * request) and the mapper that reduces GitLab's JSON to it. Slim by default (the fields to pick an item); `full`
 * adds descriptions and dates. Shared by every toolset module so a resource looks the same in every tool.
 */
import { z } from 'zod';

export type Json = Record<string, unknown>;

/** The fields of `value` named by `keys` that are present and not null. */
export function pick(value: unknown, keys: readonly string[]): Json {
  const source = (value ?? {}) as Json;
  const out: Json = {};
  for (const key of keys) if (source[key] !== undefined && source[key] !== null) out[key] = source[key];
  return out;
}

/** The `username` of a GitLab user object, if it is one. */
export function usernameOf(value: unknown): string | undefined {
  const name = (value as { username?: unknown } | null | undefined)?.username;
  return typeof name === 'string' ? name : undefined;
}

/** A string field whose value was written on the forge (the text rendering marks it untrusted). */
export const text = (what: string) => z.string().describe(`${what} (forge text: untrusted)`);

export const detail = z
  .enum(['slim', 'full'])
  .optional()
  .describe('slim (default): the fields to pick an item; full: also descriptions and more dates');

export const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true } as const;

// Output item schemas. Optional fields are the ones the forge may leave out or null.
export const userSchema = z.object({
  id: z.number().int().describe('User id'),
  username: z.string().describe('Username'),
  name: text('Display name'),
  state: z.string().optional().describe('active, blocked, …'),
  web_url: z.string().optional().describe('Profile page'),
});
export const projectSchema = z.object({
  id: z.number().int().describe('Project id'),
  path_with_namespace: z.string().describe('namespace/project'),
  name: text('Project name'),
  description: text('Description').optional(),
  visibility: z.string().optional().describe('private, internal or public'),
  default_branch: z.string().optional().describe('Default branch'),
  web_url: z.string().describe('Project page'),
  last_activity_at: z.string().optional().describe('Last activity (ISO 8601)'),
});
export const issueSchema = z.object({
  id: z.number().int().describe('Global issue id'),
  iid: z.number().int().describe('Issue number within the project'),
  project_id: z.number().int().describe('Project id'),
  title: text('Title'),
  state: z.string().describe('opened or closed'),
  labels: z.array(z.string()).optional().describe('Label names'),
  author: z.string().optional().describe('Author username'),
  web_url: z.string().describe('Issue page'),
  description: text('Description').optional(),
  created_at: z.string().optional().describe('Created (ISO 8601)'),
  updated_at: z.string().optional().describe('Updated (ISO 8601)'),
});
export const mergeRequestSchema = z.object({
  id: z.number().int().describe('Global merge request id'),
  iid: z.number().int().describe('Merge request number within the project'),
  project_id: z.number().int().describe('Project id'),
  title: text('Title'),
  state: z.string().describe('opened, closed, merged or locked'),
  source_branch: z.string().optional().describe('Source branch'),
  target_branch: z.string().optional().describe('Target branch'),
  author: z.string().optional().describe('Author username'),
  web_url: z.string().describe('Merge request page'),
  description: text('Description').optional(),
  created_at: z.string().optional().describe('Created (ISO 8601)'),
  updated_at: z.string().optional().describe('Updated (ISO 8601)'),
});

export const userOut = (u: unknown) => pick(u, ['id', 'username', 'name', 'state', 'web_url']) as z.infer<typeof userSchema>;

export const projectOut = (full: boolean) => (p: unknown) =>
  pick(p, [
    'id',
    'name',
    'path_with_namespace',
    'visibility',
    'default_branch',
    'web_url',
    ...(full ? ['description', 'last_activity_at'] : []),
  ]) as z.infer<typeof projectSchema>;

const withAuthor = (value: unknown): Json => {
  const author = usernameOf((value as Json | null)?.author);
  return author ? { author } : {};
};

export const issueOut = (full: boolean) => (i: unknown) =>
  ({
    ...pick(i, [
      'id',
      'iid',
      'project_id',
      'title',
      'state',
      'labels',
      'web_url',
      ...(full ? ['description', 'created_at', 'updated_at'] : []),
    ]),
    ...withAuthor(i),
  }) as z.infer<typeof issueSchema>;

export const mergeRequestOut = (full: boolean) => (m: unknown) =>
  ({
    ...pick(m, [
      'id',
      'iid',
      'project_id',
      'title',
      'state',
      'source_branch',
      'target_branch',
      'web_url',
      ...(full ? ['description', 'created_at', 'updated_at'] : []),
    ]),
    ...withAuthor(m),
  }) as z.infer<typeof mergeRequestSchema>;
