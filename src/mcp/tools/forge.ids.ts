/**
 * Project references as tools accept them (issue 17 item 5, for projects so far): a numeric id, a
 * `namespace/project` path, or the project's web URL (anything under it, such as an issue or file URL, names the
 * same project: GitLab puts `/-/` between the project path and the rest).
 */
import { z } from 'zod';
import { ToolInputError } from './tool.contract.ts';

/**
 * Advertised as a string, as GitLab's own MCP server does (an id is a string of digits too); a number is still
 * accepted. One type instead of an `anyOf` of two on every tool of the 32 KB list.
 */
export const projectRef = z
  .preprocess((value) => (typeof value === 'number' ? String(value) : value), z.string().min(1).max(500))
  .describe('Id, path or URL');

/**
 * The `:id` path segment for a project reference (URL-encoded path or number). `forgeUrl`'s own path (a forge
 * served under a prefix, `https://example.com/gitlab`) is not part of a project path in a web URL.
 */
export function projectPathId(ref: string | number, forgeUrl?: string): string {
  if (typeof ref === 'number') return String(ref);
  let value = ref.trim();
  if (/^https?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ToolInputError(`project is not a valid URL: ${value.slice(0, 100)}`);
    }
    // The project path ends where GitLab's `/-/` starts (issues, merge requests, blobs, pipelines, jobs).
    let path = url.pathname;
    const prefix = forgeUrl ? new URL(forgeUrl).pathname.replace(/\/+$/, '') : '';
    if (prefix && path.startsWith(`${prefix}/`)) path = path.slice(prefix.length);
    value = decodeURIComponent(path.split('/-/')[0] ?? '').replace(/^\/+|\/+$/g, '');
  }
  if (/^\d+$/.test(value)) return value;
  if (!/^[\w.-]+(\/[\w.-]+)+$/.test(value))
    throw new ToolInputError('project must be an id, a "namespace/project" path or a project web URL');
  return encodeURIComponent(value);
}
