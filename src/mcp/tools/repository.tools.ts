/**
 * The `repository` toolset (issue 18 item 1): files by line window, the tree, history, one commit with its stats
 * or patch, comparing refs, blame, committing several file actions at once, branches and tags. Names and
 * parameters follow GitLab's own MCP server where it has the tool (`get_repository_file`, `list_repository_tree`,
 * `list_commits`, `get_commit`, `add_commit`, `list_branches`, `list_tags`).
 *
 * Large answers are windowed, never cut silently: a file comes in line windows (`total_lines`, `next_offset`), a
 * patch per file up to `max_file_bytes` (cut at a line, `truncated` set), diff lists page by cursor; a binary file
 * comes as metadata with a resource link (forge.uris.ts) instead of bytes.
 */
import { z } from 'zod';
import { checkActions, resolveActions } from './commit.actions.ts';
import type { QueryValue } from './forge.client.ts';
import { READ, text, type Json } from './forge.entities.ts';
import { commitTarget, fileTarget, projectLabel, projectPathId, projectRef, projectRefLabel } from './forge.ids.ts';
import { decodePageNumber, DEFAULT_PER_PAGE, encodeCursor, forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { fileUri } from './forge.uris.ts';
import { confirmationInput } from './tool.confirm.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';
import { quoted } from './tool.text.ts';

const refInput = z.string().min(1).max(255).optional().describe('Default branch if omitted');
const filePath = z.string().min(1).max(1024).describe('File path');

/** The longest line window one call returns, and the most content bytes (GitLab's MCP caps lines at 2000). */
const MAX_LINES = 2000;
const MAX_WINDOW_BYTES = 200_000;

function repo(ctx: ToolContext, project: string | number): string {
  return `/projects/${projectPathId(project, ctx.forgeUrl)}/repository`;
}

/** The project's default branch, for refs left out. */
async function defaultRef(ctx: ToolContext, project: string | number, ref: string | undefined): Promise<string> {
  if (ref !== undefined) return ref;
  const p = await ctx.api.get<{ default_branch?: unknown }>(`/projects/${projectPathId(project, ctx.forgeUrl)}`, ctx.token);
  return typeof p.default_branch === 'string' ? p.default_branch : 'HEAD';
}

/** Whether bytes are shown as text: no NUL byte in the first 8000 and valid UTF-8 (git's test, plus encoding). */
function isBinary(content: Buffer): boolean {
  if (content.subarray(0, 8000).includes(0)) return true;
  return !Buffer.from(content.toString('utf8'), 'utf8').equals(content);
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  wasm: 'application/wasm',
};

export function mimeTypeOf(path: string, binary: boolean): string {
  const ext = path.split('.').pop()?.toLowerCase() ?? '';
  return MIME_BY_EXTENSION[ext] ?? (binary ? 'application/octet-stream' : 'text/plain');
}

/** A patch cut to `maxBytes` at a line boundary. */
function capDiff(diff: string, maxBytes: number): { diff: string; truncated: boolean } {
  if (Buffer.byteLength(diff) <= maxBytes) return { diff, truncated: false };
  let cut = Buffer.from(diff).subarray(0, maxBytes).toString('utf8');
  const lastNewline = cut.lastIndexOf('\n');
  if (lastNewline > 0) cut = cut.slice(0, lastNewline + 1);
  return { diff: cut, truncated: true };
}

const diffSchema = z.object({
  old_path: z.string(),
  new_path: z.string(),
  new_file: z.boolean(),
  renamed_file: z.boolean(),
  deleted_file: z.boolean(),
  diff: text('Unified diff hunks').optional(),
  diff_bytes: z.number().int().describe('Size of the whole patch of this file'),
  truncated: z.boolean().optional().describe('The patch was cut at max_file_bytes'),
});
type DiffOut = z.infer<typeof diffSchema>;

function diffOut(d: Json, withPatch: boolean, maxBytes: number): DiffOut {
  const patch = typeof d.diff === 'string' ? d.diff : '';
  const capped = capDiff(patch, maxBytes);
  return {
    old_path: String(d.old_path),
    new_path: String(d.new_path),
    new_file: d.new_file === true,
    renamed_file: d.renamed_file === true,
    deleted_file: d.deleted_file === true,
    diff_bytes: Buffer.byteLength(patch),
    ...(withPatch ? { diff: capped.diff, ...(capped.truncated ? { truncated: true } : {}) } : {}),
  };
}

const diffWindowInput = {
  max_file_bytes: z.number().int().min(1000).max(200_000).optional().describe('Per file patch (default 20000)'),
};

const commitSchema = z.object({
  id: z.string(),
  short_id: z.string(),
  title: text('First line of the message'),
  author_name: text('Author'),
  authored_date: z.string(),
  web_url: z.string(),
  parent_ids: z.array(z.string()).optional(),
  message: text('Whole message').optional(),
  stats: z.object({ additions: z.number().int(), deletions: z.number().int(), total: z.number().int() }).optional(),
});

function commitOut(c: unknown, full: boolean) {
  const v = c as Json;
  return {
    id: String(v.id),
    short_id: String(v.short_id),
    title: String(v.title),
    author_name: String(v.author_name),
    authored_date: String(v.authored_date),
    web_url: String(v.web_url),
    ...(full ? { parent_ids: v.parent_ids as string[], message: String(v.message) } : {}),
    ...(v.stats ? { stats: v.stats as { additions: number; deletions: number; total: number } } : {}),
  };
}

const branchSchema = z.object({
  name: z.string(),
  default: z.boolean(),
  protected: z.boolean(),
  merged: z.boolean().optional(),
  commit: z.object({ id: z.string(), title: text('Head commit title'), committed_date: z.string().optional() }),
  web_url: z.string().optional(),
});

function branchOut(b: unknown) {
  const v = b as Json;
  const c = (v.commit ?? {}) as Json;
  return {
    name: String(v.name),
    default: v.default === true,
    protected: v.protected === true,
    merged: v.merged === true,
    commit: {
      id: String(c.id),
      title: String(c.title),
      ...(typeof c.committed_date === 'string' ? { committed_date: c.committed_date } : {}),
    },
    ...(typeof v.web_url === 'string' ? { web_url: v.web_url } : {}),
  };
}

/** Blame ranges of lines `start`–`end` (1-based, inclusive): the commit that last changed each range. */
async function blameOf(ctx: ToolContext, project: string | number, path: string, ref: string, start: number, end: number) {
  const ranges = await ctx.api.get<Json[]>(`${repo(ctx, project)}/files/${encodeURIComponent(path)}/blame`, ctx.token, {
    ref,
    'range[start]': start,
    'range[end]': end,
  });
  let line = start;
  return ranges.map((r) => {
    const c = (r.commit ?? {}) as Json;
    const first = line;
    line += ((r.lines as unknown[] | undefined) ?? []).length;
    return {
      start_line: first,
      end_line: line - 1,
      commit: {
        id: String(c.id),
        title: (typeof c.message === 'string' ? c.message : '').split('\n')[0] ?? '',
        author_name: String(c.author_name),
        authored_date: String(c.authored_date),
      },
    };
  });
}

/** The forge's compare of `from` to `args.sha`, its changed files paged here (GitLab answers them all at once). */
async function compare(
  ctx: ToolContext,
  args: {
    project_id: string;
    sha: string;
    straight?: boolean | undefined;
    include_diff?: boolean | undefined;
    max_file_bytes?: number | undefined;
    cursor?: string | undefined;
    per_page?: number | undefined;
  },
  from: string,
) {
  const answer = await ctx.api.get<Json>(`${repo(ctx, args.project_id)}/compare`, ctx.token, {
    from,
    to: args.sha,
    straight: args.straight,
  });
  const commits = (answer.commits as unknown[] | undefined) ?? [];
  const diffs = (answer.diffs as Json[] | undefined) ?? [];
  const page = decodePageNumber(args.cursor);
  const perPage = args.per_page ?? DEFAULT_PER_PAGE;
  const more = page * perPage < diffs.length;
  return {
    commits: page === 1 ? commits.map((c) => commitOut(c, false)) : [],
    total_commits: commits.length,
    diffs: diffs
      .slice((page - 1) * perPage, page * perPage)
      .map((d) => diffOut(d, args.include_diff ?? true, args.max_file_bytes ?? 20_000)),
    total_files: diffs.length,
    same_ref: answer.compare_same_ref === true,
    ...(typeof answer.web_url === 'string' ? { compare_url: answer.web_url } : {}),
    next_cursor: more ? encodeCursor(page + 1) : null,
    has_more: more,
  };
}

/** Tools that read and write files, history and diffs. */
function fileAndHistoryTools() {
  return [
    defineTool({
      name: 'get_repository_file',
      toolset: 'repository',
      title: 'Read a file',
      description: 'A text file at a ref, a line window at a time; binary files as metadata and a link.',
      input: z.object({
        project_id: projectRef,
        file_path: filePath.optional().describe('File path, or its URL as project_id'),
        ref: refInput,
        offset: z.number().int().min(0).optional().describe('A next_offset'),
        limit: z.number().int().min(1).max(MAX_LINES).optional().describe(`Lines, 1–${MAX_LINES} (default 500)`),
        blame: z.boolean().optional().describe('Add the last commit per line'),
      }),
      output: z.object({
        file_path: z.string(),
        ref: z.string(),
        size: z.number().int().describe('Bytes'),
        blob_id: z.string(),
        last_commit_id: z.string(),
        binary: z.boolean(),
        mime_type: z.string(),
        resource_uri: z.string().describe('The whole file as an MCP resource'),
        content: text('The lines of this window, newline-terminated').optional(),
        start_line: z.number().int().optional().describe('1-based number of the first line returned'),
        returned_lines: z.number().int().optional(),
        total_lines: z.number().int().optional(),
        truncated: z.boolean().describe('More lines follow this window'),
        next_offset: z.number().int().nullable().describe('Pass as offset for the next window; null at the end'),
        blame: z
          .array(
            z.object({
              start_line: z.number().int(),
              end_line: z.number().int(),
              commit: z.object({ id: z.string(), title: text('Commit title'), author_name: text('Author'), authored_date: z.string() }),
            }),
          )
          .optional(),
      }),
      annotations: READ,
      async run(args, ctx) {
        // A file's web URL as project_id names the project, the ref and the path.
        const target = fileTarget(args.project_id, ctx.forgeUrl, args);
        const project = target.project;
        const projectRefValue = projectLabel(project);
        const filePathValue = target.file_path;
        const ref = await defaultRef(ctx, projectRefValue, target.ref);
        const file = await ctx.api.get<Json>(`${repo(ctx, projectRefValue)}/files/${encodeURIComponent(filePathValue)}`, ctx.token, {
          ref,
        });
        const bytes = Buffer.from(typeof file.content === 'string' ? file.content : '', 'base64');
        const binary = isBinary(bytes);
        const meta = {
          file_path: String(file.file_path),
          ref,
          size: Number(file.size),
          blob_id: String(file.blob_id),
          last_commit_id: String(file.last_commit_id),
          binary,
          mime_type: mimeTypeOf(filePathValue, binary),
          resource_uri: fileUri(project, ref, String(file.file_path)),
        };
        if (binary || bytes.length > MAX_WINDOW_BYTES)
          ctx.link({ uri: meta.resource_uri, name: meta.file_path, mimeType: meta.mime_type, description: `${meta.size} bytes at ${ref}` });
        if (binary) return { ...meta, truncated: false, next_offset: null };
        const lines = bytes.toString('utf8').split('\n');
        if (lines[lines.length - 1] === '') lines.pop();
        const offset = Math.min(args.offset ?? 0, lines.length);
        const window: string[] = [];
        let used = 0;
        for (let i = offset; i < lines.length && window.length < (args.limit ?? 500); i += 1) {
          const line = `${lines[i] ?? ''}\n`;
          // A window stops before the byte cap, but always carries at least one line.
          if (window.length > 0 && used + Buffer.byteLength(line) > MAX_WINDOW_BYTES) break;
          window.push(line);
          used += Buffer.byteLength(line);
        }
        const end = offset + window.length;
        const blame =
          args.blame && window.length > 0 ? await blameOf(ctx, projectRefValue, filePathValue, ref, offset + 1, end) : undefined;
        return {
          ...meta,
          content: window.join(''),
          start_line: offset + 1,
          returned_lines: window.length,
          total_lines: lines.length,
          truncated: end < lines.length,
          next_offset: end < lines.length ? end : null,
          ...(blame ? { blame } : {}),
        };
      },
    }),
    defineTool({
      name: 'list_repository_tree',
      toolset: 'repository',
      title: 'List a tree',
      description: 'Files and directories at a path and ref, optionally recursive.',
      input: z.object({
        project_id: projectRef,
        path: z.string().max(1024).optional().describe('Default: root'),
        ref: refInput,
        recursive: z.boolean().optional().describe('All levels'),
        ...pagingInput,
      }),
      output: pageOutput(z.object({ name: z.string(), type: z.enum(['tree', 'blob', 'commit']), path: z.string(), mode: z.string() })),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          path: args.path,
          ref: args.ref,
          recursive: args.recursive,
          ...forgePaging(args),
        };
        const page = await ctx.api.page<Json>(`${repo(ctx, args.project_id)}/tree`, ctx.token, query);
        return pageResult(page, (e) => ({
          name: String(e.name),
          type: e.type as 'tree' | 'blob' | 'commit',
          path: String(e.path),
          mode: String(e.mode),
        }));
      },
    }),
    defineTool({
      name: 'list_commits',
      toolset: 'repository',
      title: 'List commits',
      description: 'History of a ref, newest first, by path or dates.',
      input: z.object({
        project_id: projectRef,
        ref_name: refInput,
        path: z.string().max(1024).optional().describe('Touching path'),
        since: z.string().max(40).optional().describe('ISO 8601'),
        until: z.string().max(40).optional().describe('ISO 8601'),
        with_stats: z.boolean().optional().describe('Add line counts'),
        ...pagingInput,
      }),
      output: pageOutput(commitSchema),
      annotations: READ,
      async run(args, ctx) {
        const query: Record<string, QueryValue> = {
          ref_name: args.ref_name,
          path: args.path,
          since: args.since,
          until: args.until,
          with_stats: args.with_stats,
          ...forgePaging(args),
        };
        const page = await ctx.api.page(`${repo(ctx, args.project_id)}/commits`, ctx.token, query);
        return pageResult(page, (c) => commitOut(c, false));
      },
    }),
    defineTool({
      // Comparing refs is reading a commit against a base (`from`): one entry of the 32 KB default list instead of
      // a compare_refs tool beside this one.
      name: 'get_commit',
      toolset: 'repository',
      title: 'Get or compare commits',
      description: 'One commit with stats and, with from, the commits and file changes from that ref to it.',
      input: z.object({
        project_id: projectRef,
        sha: z.string().min(1).max(255).optional().describe('SHA, branch or tag; or a commit URL as project_id'),
        from: z.string().min(1).max(255).optional().describe('Compare from this ref (merge base unless straight)'),
        straight: z.boolean().optional().describe('from: no merge base'),
        include_diff: z.boolean().optional().describe('Add patches (default: only with from)'),
        ...diffWindowInput,
        ...pagingInput,
      }),
      output: commitSchema.extend({
        status: z.string().nullable().optional().describe('Status of its latest pipeline'),
        commits: z.array(commitSchema).optional().describe('from: commits in sha, not in from, oldest first (first page only)'),
        total_commits: z.number().int().optional(),
        diffs: z.array(diffSchema).optional(),
        total_files: z.number().int().optional(),
        same_ref: z.boolean().optional(),
        compare_url: z.string().optional(),
        next_cursor: z.string().nullable().optional().describe('More changed files: pass as cursor'),
        has_more: z.boolean().optional(),
      }),
      annotations: READ,
      async run(args, ctx) {
        // A commit's web URL as project_id names the project and the SHA.
        const target = commitTarget(args.project_id, ctx.forgeUrl, args.sha);
        const resolved = { ...args, project_id: projectLabel(target.project), sha: target.sha };
        const base = `${repo(ctx, resolved.project_id)}/commits/${encodeURIComponent(resolved.sha)}`;
        if (args.from === undefined && args.straight !== undefined) throw new ToolInputError('straight applies with from');
        const [commit, compared] = await Promise.all([
          ctx.api.get<Json>(base, ctx.token),
          args.from !== undefined ? compare(ctx, resolved, args.from) : undefined,
        ]);
        const head = { ...commitOut(commit, true), status: (commit.status as string | null | undefined) ?? null };
        if (compared) return { ...head, ...compared };
        if (!args.include_diff) return head;
        const page = await ctx.api.page<Json>(`${base}/diff`, ctx.token, {
          ...forgePaging(args),
        });
        return {
          ...head,
          diffs: page.items.map((d) => diffOut(d, true, args.max_file_bytes ?? 20_000)),
          next_cursor: page.nextPage === undefined ? null : encodeCursor(page.nextPage),
          has_more: page.nextPage !== undefined,
        };
      },
    }),
    defineTool({
      name: 'add_commit',
      toolset: 'repository',
      title: 'Commit file changes',
      description: 'Commits file creates, updates (whole or old to new text), moves and deletes to a branch.',
      input: z.object({
        project_id: projectRef,
        branch: z.string().min(1).max(255).describe('Target branch'),
        start_branch: z.string().max(255).optional().describe('Base of a new branch'),
        commit_message: z.string().min(1).max(10_000).describe('Message'),
        actions: z
          .array(
            z.object({
              action: z.enum(['create', 'update', 'move', 'delete', 'chmod']).describe('Action'),
              file_path: filePath,
              previous_path: z.string().max(1024).optional().describe('move: from'),
              content: z.string().max(1_000_000).optional().describe('Whole content'),
              encoding: z.enum(['text', 'base64']).optional().describe('Default text'),
              old: z.string().max(100_000).optional().describe('Exact text, found once'),
              new: z.string().max(100_000).optional().describe('Replaces old'),
              last_commit_id: z.string().max(64).optional().describe('Guard: unchanged since'),
              execute_filemode: z.boolean().optional().describe('chmod: executable'),
            }),
          )
          .min(1)
          .max(100)
          .describe('In order'),
        ...confirmationInput,
      }),
      output: commitSchema.extend({ branch: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      confirms: true,
      async run(args, ctx) {
        checkActions(args.actions);
        const deleted = args.actions.filter((a) => a.action === 'delete').map((a) => a.file_path);
        // Deleting files asks first (issue 18 item 2); other actions are ordinary, reviewable commits.
        if (deleted.length > 0)
          await ctx.confirm(
            `Commit to ${quoted(args.branch)} of ${projectRefLabel(args.project_id, ctx.forgeUrl)} deleting ${deleted.length} file(s): ${deleted
              .slice(0, 10)
              .map((path) => quoted(path))
              .join(', ')}${deleted.length > 10 ? ', …' : ''}.`,
          );
        const actions = await resolveActions(args.actions, (path) => readForEdit(ctx, args, path));
        const created = await ctx.api.post(`${repo(ctx, args.project_id)}/commits`, ctx.token, {
          branch: args.branch,
          commit_message: args.commit_message,
          ...(args.start_branch !== undefined ? { start_branch: args.start_branch } : {}),
          actions,
        });
        return { ...commitOut(created, true), branch: args.branch };
      },
    }),
  ];
}

type CommitArgs = { project_id: string | number; branch: string; start_branch?: string | undefined };

/** A file as an edit by old/new reads it: at the branch, or at start_branch when the branch is new. */
async function readForEdit(ctx: ToolContext, args: CommitArgs, path: string): Promise<Json> {
  const url = `${repo(ctx, args.project_id)}/files/${encodeURIComponent(path)}`;
  try {
    return await ctx.api.get<Json>(url, ctx.token, { ref: args.branch });
  } catch (error) {
    if (args.start_branch === undefined) throw error;
    return ctx.api.get<Json>(url, ctx.token, { ref: args.start_branch });
  }
}

/** Access levels by name, as people say them. */
const LEVELS = { no_one: 0, developer: 30, maintainer: 40 } as const;

function branchTools() {
  return [
    defineTool({
      name: 'list_branches',
      toolset: 'repository',
      title: 'List branches',
      description: 'Branches with head commit, default, protected and merged flags.',
      input: z.object({
        project_id: projectRef,
        search: z.string().max(255).optional().describe('Name contains; ^start, end$'),
        ...pagingInput,
      }),
      output: pageOutput(branchSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { search: args.search, ...forgePaging(args) };
        return pageResult(await ctx.api.page(`${repo(ctx, args.project_id)}/branches`, ctx.token, query), branchOut);
      },
    }),
    defineTool({
      // One tool for a branch's writes (GitLab's `add_branch` creates; protecting and deleting are the same
      // resource's methods): delete_branch was a whole second entry of the 32 KB default list.
      name: 'save_branch',
      toolset: 'repository',
      title: 'Save a branch',
      description: 'Creates a branch from ref, protects or unprotects it, or deletes it (asks the user first).',
      input: z.object({
        project_id: projectRef,
        branch: z.string().min(1).max(255).describe('Branch name'),
        ref: z.string().max(255).optional().describe('Start of a new branch'),
        protected: z.boolean().optional().describe('Protect or unprotect'),
        // One level for pushing and merging (two fields were 130 bytes more of the default list, for a rare need).
        access_level: z.enum(['no_one', 'developer', 'maintainer']).optional().describe('Who may push and merge (default maintainer)'),
        delete: z.boolean().optional().describe('Delete it (not the default branch)'),
        ...confirmationInput,
      }),
      output: branchSchema.extend({ created: z.boolean().optional(), deleted: z.boolean().optional() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      confirms: true,
      async run(args, ctx) {
        const base = repo(ctx, args.project_id);
        const project = `/projects/${projectPathId(args.project_id, ctx.forgeUrl)}`;
        const name = encodeURIComponent(args.branch);
        if (args.delete === true) {
          if (args.ref !== undefined || args.protected !== undefined || args.access_level)
            throw new ToolInputError('delete takes only project_id and branch');
          const branch = branchOut(await ctx.api.get(`${base}/branches/${name}`, ctx.token));
          await ctx.confirm(
            `Delete branch ${quoted(args.branch)}${branch.protected ? ' (protected)' : ''} of ${projectRefLabel(args.project_id, ctx.forgeUrl)}, at ${branch.commit.id.slice(0, 8)} ${quoted(branch.commit.title)}.`,
          );
          await ctx.api.send('DELETE', `${base}/branches/${name}`, ctx.token);
          return { ...branch, deleted: true };
        }
        let created = false;
        let branch: Json | undefined;
        try {
          branch = await ctx.api.get<Json>(`${base}/branches/${name}`, ctx.token);
        } catch (error) {
          if ((error as { type?: unknown }).type !== 'not_found') throw error;
          if (args.ref === undefined) throw new ToolInputError(`branch ${args.branch} does not exist; give ref to create it`);
          branch = await ctx.api.post<Json>(`${base}/branches`, ctx.token, { branch: args.branch, ref: args.ref });
          created = true;
        }
        if (args.protected === true && branch.protected !== true) {
          await ctx.api.post(`${project}/protected_branches`, ctx.token, {
            name: args.branch,
            push_access_level: LEVELS[args.access_level ?? 'maintainer'],
            merge_access_level: LEVELS[args.access_level ?? 'maintainer'],
          });
        } else if (args.protected === false && branch.protected === true) {
          await ctx.api.send('DELETE', `${project}/protected_branches/${name}`, ctx.token);
        } else if (args.protected === undefined && args.access_level) {
          throw new ToolInputError('access_level applies when protecting: set protected=true');
        }
        if (args.protected !== undefined) branch = await ctx.api.get<Json>(`${base}/branches/${name}`, ctx.token);
        return { ...branchOut(branch), created };
      },
    }),
  ];
}

export function repositoryTools() {
  return [...fileAndHistoryTools(), ...branchTools()];
}

export const repositoryToolset: ToolsetDefinition = {
  name: 'repository',
  description: 'Repository: files, tree, history, diffs, blame, commits and branches',
  default: true,
  tools: repositoryTools,
};
