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

export const detail = z.enum(['slim', 'full']).optional().describe('full: all fields');

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
  assignees: z.array(z.string()).optional().describe('Assignee usernames'),
  milestone: z.string().optional().describe('Milestone title'),
  confidential: z.boolean().optional().describe('Only members can see it'),
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
  labels: z.array(z.string()).optional().describe('Label names'),
  draft: z.boolean().optional().describe('Marked as draft'),
  detailed_merge_status: z.string().optional().describe('mergeable, checking, conflict, not_open, draft_status, …'),
  sha: z.string().optional().describe('Head commit SHA (pass it to accept_merge_request)'),
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

const usernames = (list: unknown): string[] =>
  Array.isArray(list) ? list.map(usernameOf).filter((u): u is string => u !== undefined) : [];

export const issueOut = (full: boolean) => (i: unknown) => {
  const source = (i ?? {}) as Json;
  const assignees = usernames(source.assignees);
  const milestone = (source.milestone as { title?: unknown } | null | undefined)?.title;
  const confidential = source.confidential;
  return {
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
    ...(assignees.length > 0 ? { assignees } : {}),
    ...(typeof milestone === 'string' ? { milestone } : {}),
    ...(typeof confidential === 'boolean' && (confidential || full) ? { confidential } : {}),
  } as z.infer<typeof issueSchema>;
};

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
      'labels',
      'web_url',
      ...(full ? ['description', 'created_at', 'updated_at', 'draft', 'detailed_merge_status', 'sha'] : []),
    ]),
    ...withAuthor(m),
  }) as z.infer<typeof mergeRequestSchema>;

export const positionSchema = z.object({
  old_path: z.string().describe('Path before the change'),
  new_path: z.string().describe('Path after the change'),
  old_line: z.number().int().nullable().optional().describe('Line in the old file (removed or unchanged lines)'),
  new_line: z.number().int().nullable().optional().describe('Line in the new file (added or unchanged lines)'),
});

export const noteSchema = z.object({
  id: z.number().int().describe('Note id'),
  author: z.string().optional().describe('Author username'),
  body: text('Note text (Markdown)'),
  created_at: z.string().optional().describe('Created (ISO 8601)'),
  system: z.boolean().optional().describe('Written by the forge (a change record), not a person'),
  resolved: z.boolean().optional().describe('Resolved (resolvable threads)'),
  position: positionSchema.optional().describe('The diff line of a diff note'),
});

export const discussionSchema = z.object({
  id: z.string().describe('Discussion id (reply or resolve with it)'),
  individual_note: z.boolean().describe('A single note rather than a thread'),
  notes: z.array(noteSchema).describe('The notes, oldest first'),
});

export const noteOut = (n: unknown) => {
  const source = (n ?? {}) as Json;
  const position = source.position as Json | undefined;
  return {
    ...pick(n, ['id', 'body', 'created_at', 'system', ...(source.resolvable === true ? ['resolved'] : [])]),
    ...withAuthor(n),
    ...(position ? { position: pick(position, ['old_path', 'new_path', 'old_line', 'new_line']) } : {}),
  } as z.infer<typeof noteSchema>;
};

export const discussionOut = (d: unknown) => {
  const source = (d ?? {}) as Json;
  return {
    id: String(source.id),
    individual_note: source.individual_note === true,
    notes: Array.isArray(source.notes) ? source.notes.map(noteOut) : [],
  };
};

/** An `include` list: which related data a get tool fetches besides the resource (each fetched concurrently). */
export function includeInput<const T extends readonly [string, ...string[]]>(values: T) {
  return z.array(z.enum(values)).max(values.length).optional().describe('Related data to add');
}

/** A get tool's `include_cursor`: the `next_cursor` of one included list, to read its next page. */
export const includeCursor = z.string().max(1000).optional().describe('An include next_cursor; with that include only');

/** A page of related data, paged like a list tool (forge.paging.ts) through the get tool's `include_cursor`. */
export function firstPage<T extends z.ZodType>(item: T, what: string) {
  return z
    .object({
      items: z.array(item).describe(what),
      next_cursor: z.string().nullable().describe('As include_cursor for the next page; null at the end'),
      has_more: z.boolean().describe('More exist than shown here'),
    })
    .optional()
    .describe(`${what} (a page)`);
}

/** Another issue or merge request named from the one read (links, related merge requests): enough to fetch it. */
export const refSchema = z.object({
  iid: z.number().int().describe('Number within its project'),
  project_id: z.number().int().optional().describe('Project id'),
  title: text('Title'),
  state: z.string().describe('State'),
  web_url: z.string().optional().describe('Page'),
  link_type: z.string().optional().describe('relates_to, blocks or is_blocked_by (links)'),
});

export const refOut = (value: unknown) =>
  pick(value, ['iid', 'project_id', 'title', 'state', 'web_url', 'link_type']) as z.infer<typeof refSchema>;
