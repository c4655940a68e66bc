/**
 * Ids as tools accept them (issue 17 item 5): a project is a numeric id, a `namespace/project` path, or a web URL
 * of the forge. GitLab puts `/-/` between the project path and the rest of a web URL, so any URL under a project
 * names that project; the URL of an issue, merge request, file, commit, pipeline or job names that resource as well,
 * and tools that take the resource's number (or SHA, or file path and ref) read it from the URL given as
 * `project_id` when the field is left out ({@link requiredTarget}, {@link fileTarget}).
 *
 * A URL must be on the configured forge (`FORGE_URL`'s host, and its path prefix for a forge served under one):
 * the URL of another forge would otherwise name whatever sits at the same path here.
 */
import { z } from 'zod';
import { ToolInputError } from './tool.contract.ts';

/**
 * Advertised as a string, as GitLab's own MCP server does (an id is a string of digits too); a number is still
 * accepted. One type instead of an `anyOf` of two on every tool of the 32 KB list.
 */
export const projectRef = z
  .preprocess((value) => (typeof value === 'number' ? String(value) : value), z.string().min(1).max(2000))
  .describe('Id, path or URL');

/** What a web URL names inside its project. */
export type WebTarget =
  | { kind: 'issue' | 'merge_request' | 'pipeline' | 'job'; id: number }
  | { kind: 'commit'; sha: string }
  /** `<ref>/<path>` of a `blob` or `raw` URL: where the ref ends is the tool's to find (a branch may hold `/`). */
  | { kind: 'file'; segments: string[] };

export interface ProjectReference {
  /** The `:id` path segment (a number, or the URL-encoded path). */
  id: string;
  /** What the web URL names below the project, when it was one `target` knows. */
  target?: WebTarget;
}

/** The word after `/-/` for each numbered resource (`work_items` is the newer page of an issue). */
const NUMBERED: Record<string, 'issue' | 'merge_request' | 'pipeline' | 'job'> = {
  issues: 'issue',
  work_items: 'issue',
  merge_requests: 'merge_request',
  pipelines: 'pipeline',
  jobs: 'job',
};

/** `/a/b%20c/` as `['a', 'b c']`. */
function decodedSegments(path: string): string[] {
  try {
    return path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    throw new ToolInputError('project_id is a URL with a malformed escape');
  }
}

function targetOf(rest: string[]): WebTarget | undefined {
  const [word, first, ...more] = rest;
  if (word === undefined || first === undefined) return undefined;
  const numbered = NUMBERED[word];
  if (numbered) return /^\d{1,15}$/.test(first) ? { kind: numbered, id: Number(first) } : undefined;
  if (word === 'commit') return { kind: 'commit', sha: first };
  if ((word === 'blob' || word === 'raw') && more.length > 0) return { kind: 'file', segments: [first, ...more] };
  return undefined;
}

/** The parts of `forgeUrl` a web URL of that forge starts with. */
function forgeBase(forgeUrl: string): { host: string; prefix: string[] } {
  const url = new URL(forgeUrl);
  return { host: url.host.toLowerCase(), prefix: decodedSegments(url.pathname) };
}

/**
 * A project reference read: its `:id` segment, and what its web URL names inside the project. `forgeUrl` is
 * `FORGE_URL`: a URL elsewhere is refused, and its path prefix (`https://example.com/gitlab`) is not part of the
 * project path.
 */
export function parseProjectRef(ref: string | number, forgeUrl: string): ProjectReference {
  if (typeof ref === 'number') return { id: String(ref) };
  const value = ref.trim();
  if (!/^https?:\/\//i.test(value)) {
    if (/^\d+$/.test(value)) return { id: value };
    if (!/^[\w.-]+(\/[\w.-]+)+$/.test(value))
      throw new ToolInputError('project must be an id, a "namespace/project" path or a web URL of the forge');
    return { id: encodeURIComponent(value) };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ToolInputError('project_id is not a valid URL');
  }
  const base = forgeBase(forgeUrl);
  const segments = decodedSegments(url.pathname);
  const underPrefix = base.prefix.every((s, i) => segments[i] === s);
  // The scheme may differ (a pasted http:// link of an https forge is still this forge); the host and port may not.
  if (url.host.toLowerCase() !== base.host || !underPrefix)
    throw new ToolInputError('project_id is a URL of another site: only web URLs of this server’s forge (FORGE_URL) are accepted');
  const inForge = segments.slice(base.prefix.length);
  const dash = inForge.indexOf('-');
  const projectPath = dash === -1 ? inForge : inForge.slice(0, dash);
  const path = projectPath.join('/');
  if (!/^[\w.-]+(\/[\w.-]+)+$/.test(path))
    throw new ToolInputError('project_id is a URL that names no project (expected <forge>/<namespace>/<project>[/-/…])');
  const target = dash === -1 ? undefined : targetOf(inForge.slice(dash + 1));
  return { id: encodeURIComponent(path), ...(target ? { target } : {}) };
}

/** The `:id` path segment for a project reference (see {@link parseProjectRef}). */
export function projectPathId(ref: string | number, forgeUrl: string): string {
  return parseProjectRef(ref, forgeUrl).id;
}

type NumberedKind = 'issue' | 'merge_request' | 'pipeline' | 'job';

const LABEL: Record<NumberedKind | 'commit', string> = {
  issue: 'an issue',
  merge_request: 'a merge request',
  pipeline: 'a pipeline',
  job: 'a job',
  commit: 'a commit',
};

/** The number `project`'s URL names, when it names a resource of `kind`. */
function urlNumber(target: WebTarget | undefined, kind: NumberedKind): number | undefined {
  return target && target.kind === kind ? target.id : undefined;
}

/**
 * The project and the number of the issue, merge request, pipeline or job a tool works on: `given` (the tool's
 * field, named `field`), or the number in the web URL given as `project`. Both given must agree.
 */
export function requiredTarget(
  project: string | number,
  forgeUrl: string,
  kind: NumberedKind,
  field: string,
  given: number | undefined,
): { project: string; value: number } {
  const ref = parseProjectRef(project, forgeUrl);
  const fromUrl = urlNumber(ref.target, kind);
  if (given !== undefined && fromUrl !== undefined && given !== fromUrl)
    throw new ToolInputError(`${field} disagrees with the number in the URL given as project_id`);
  const value = given ?? fromUrl;
  if (value === undefined) throw new ToolInputError(`${field} is required (or the web URL of ${LABEL[kind]} as project_id)`);
  return { project: ref.id, value };
}

/**
 * As {@link requiredTarget} for tools where leaving the number out means "create" (save_issue,
 * save_merge_request): a resource's URL with the number left out is refused rather than read as either, since an
 * update the caller did not mean (a new title on an existing issue) is worse than a question.
 */
export function optionalTarget(
  project: string | number,
  forgeUrl: string,
  kind: NumberedKind,
  field: string,
  given: number | undefined,
): { project: string; value: number | undefined } {
  const ref = parseProjectRef(project, forgeUrl);
  const fromUrl = urlNumber(ref.target, kind);
  if (given === undefined && fromUrl !== undefined)
    throw new ToolInputError(
      `project_id is the web URL of ${LABEL[kind]}: give ${field} as well to update it, or the project's path to create one`,
    );
  if (given !== undefined && fromUrl !== undefined && given !== fromUrl)
    throw new ToolInputError(`${field} disagrees with the number in the URL given as project_id`);
  return { project: ref.id, value: given };
}

/** The project and the commit (SHA, branch or tag) a tool reads: `given`, or the SHA of a commit URL. */
export function commitTarget(project: string | number, forgeUrl: string, given: string | undefined): { project: string; sha: string } {
  const ref = parseProjectRef(project, forgeUrl);
  const fromUrl = ref.target?.kind === 'commit' ? ref.target.sha : undefined;
  // A short SHA and the full one name the same commit.
  if (given !== undefined && fromUrl !== undefined && !fromUrl.startsWith(given) && !given.startsWith(fromUrl))
    throw new ToolInputError('sha disagrees with the commit URL given as project_id');
  const sha = given ?? fromUrl;
  if (sha === undefined) throw new ToolInputError('sha is required (or the web URL of a commit as project_id)');
  return { project: ref.id, sha };
}

/**
 * The project, file path and ref of a file: the fields, or a file's URL (`…/-/blob/<ref>/<path>`). A ref may hold
 * slashes (`feature/login`), which the URL does not mark: a `ref` or `file_path` given beside the URL says where the
 * ref ends; otherwise the ref is the first segment, as for a default branch or a SHA.
 */
export function fileTarget(
  project: string | number,
  forgeUrl: string,
  given: { file_path?: string | undefined; ref?: string | undefined },
): { project: string; file_path: string; ref: string | undefined } {
  const parsed = parseProjectRef(project, forgeUrl);
  if (parsed.target?.kind !== 'file') {
    if (given.file_path === undefined) throw new ToolInputError('file_path is required (or the web URL of a file as project_id)');
    return { project: parsed.id, file_path: given.file_path, ref: given.ref };
  }
  const segments = parsed.target.segments;
  const split = (refLength: number) => ({ ref: segments.slice(0, refLength).join('/'), path: segments.slice(refLength).join('/') });
  let found: { ref: string; path: string } | undefined;
  for (let n = 1; n < segments.length && !found; n += 1) {
    const candidate = split(n);
    if ((given.ref === undefined || candidate.ref === given.ref) && (given.file_path === undefined || candidate.path === given.file_path))
      found = candidate;
  }
  if (!found) throw new ToolInputError('file_path or ref disagrees with the file URL given as project_id');
  return { project: parsed.id, file_path: found.path, ref: found.ref };
}

/** A project's `:id` segment as a person reads it (`group/project`, or the number), for sentences the server writes. */
export function projectLabel(projectId: string): string {
  return decodeURIComponent(projectId);
}

/** A project reference as the tool's caller gave it, as a person reads it: the label of a confirmation's summary. */
export function projectRefLabel(ref: string | number, forgeUrl: string): string {
  return projectLabel(projectPathId(ref, forgeUrl));
}
