/**
 * Positions of diff notes on a merge request. GitLab places a note by the line's number on each side of the diff:
 * an added line has only `new_line`, a removed line only `old_line`, an unchanged (context) line both, and any
 * other pair is refused with a 400 about `line_code` (mcp-facts.md 2.2, Discussion). Callers usually know one
 * number, so the other is read from the file's unified diff.
 */
import type { ToolContext } from './tool.contract.ts';
import { ToolInputError } from './tool.contract.ts';

export interface DiffRefs {
  base_sha: string;
  head_sha: string;
  start_sha: string;
}

/** Where a comment goes, as a tool's arguments give it. */
export interface LineComment {
  new_path?: string | undefined;
  old_path?: string | undefined;
  new_line?: number | undefined;
  old_line?: number | undefined;
}

interface DiffFile {
  old_path?: string;
  new_path?: string;
  diff?: string;
}

/** The merge request's changed files fetched at most this many pages of 100 (GitLab's own diff limits stop far below). */
const MAX_DIFF_PAGES = 50;

/** The line pair of `line` on `side` of a unified diff, or undefined when the diff does not show that line. */
export function diffLinePair(
  diff: string,
  side: 'old_line' | 'new_line',
  line: number,
): { old_line?: number; new_line?: number } | undefined {
  let oldLine = 0;
  let newLine = 0;
  for (const text of diff.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) {
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      continue;
    }
    // Other lines (`\ No newline at end of file`, headers) number nothing.
    const kind = text[0];
    if (kind === '+') {
      if (side === 'new_line' && newLine === line) return { new_line: line };
      newLine += 1;
    } else if (kind === '-') {
      if (side === 'old_line' && oldLine === line) return { old_line: line };
      oldLine += 1;
    } else if (kind === ' ') {
      if ((side === 'old_line' ? oldLine : newLine) === line) return { old_line: oldLine, new_line: newLine };
      oldLine += 1;
      newLine += 1;
    }
  }
  return undefined;
}

/**
 * A function that turns a comment's paths and lines into the `position` GitLab wants, for one tool call: the
 * SHAs from `refs` (the latest version), and the missing line number from the file's diff, fetched once per call.
 * `label` prefixes its refusals (`comments[2]`) so the caller can tell which comment was wrong.
 */
export function diffPositions(ctx: ToolContext, mrPath: string, refs: DiffRefs) {
  const files: DiffFile[] = [];
  let nextPage: number | undefined = 1;
  let pages = 0;
  const fileOf = async (match: (f: DiffFile) => boolean): Promise<DiffFile | undefined> => {
    let found = files.find(match);
    while (!found && nextPage !== undefined && pages < MAX_DIFF_PAGES) {
      const page = await ctx.api.page<DiffFile>(`${mrPath}/diffs`, ctx.token, { page: nextPage, per_page: 100 });
      pages += 1;
      files.push(...page.items);
      nextPage = page.nextPage;
      found = page.items.find(match);
    }
    return found;
  };

  return async (c: LineComment, label?: string) => {
    const refuse = (message: string) => new ToolInputError(label === undefined ? message : `${label}: ${message}`);
    const newPath = c.new_path ?? c.old_path;
    const oldPath = c.old_path ?? c.new_path;
    if (newPath === undefined || oldPath === undefined) throw refuse('a diff comment needs new_path (or old_path)');
    const common = { position_type: 'text', base_sha: refs.base_sha, start_sha: refs.start_sha, head_sha: refs.head_sha };
    if (c.new_line !== undefined && c.old_line !== undefined)
      return { ...common, new_path: newPath, old_path: oldPath, new_line: c.new_line, old_line: c.old_line };
    const side = c.new_line !== undefined ? 'new_line' : c.old_line !== undefined ? 'old_line' : undefined;
    const line = c.new_line ?? c.old_line;
    if (side === undefined || line === undefined)
      throw refuse('a diff comment needs new_line (a line of the new file) or old_line (a line of the old file)');
    const file = await fileOf(
      (f) => (c.new_path === undefined || f.new_path === c.new_path) && (c.old_path === undefined || f.old_path === c.old_path),
    );
    if (!file) throw refuse('that path is not a file the merge request changes');
    if (!file.diff)
      throw refuse(
        'the forge shows no diff for that file (too large or collapsed), so the other line number cannot be worked out: give both old_line and new_line',
      );
    const pair = diffLinePair(file.diff, side, line);
    if (!pair)
      throw refuse(`${side} is not in the file's diff: only added, removed and the unchanged lines shown around them can be commented on`);
    // The file's own paths: a renamed file needs both, whichever one the caller named.
    return { ...common, new_path: file.new_path ?? newPath, old_path: file.old_path ?? oldPath, ...pair };
  };
}
