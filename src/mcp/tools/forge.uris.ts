/**
 * URIs of the forge content this server serves as MCP resources (resources.ts) and links to from tool results:
 * a repository file at a ref, and a job's log. The project is its numeric id or URL-encoded path, the ref is
 * URL-encoded (branches may hold `/`), the file path keeps its slashes.
 */

export const FILE_URI_TEMPLATE = 'forge://projects/{project}/files/{ref}/{+path}';
export const JOB_LOG_URI_TEMPLATE = 'forge://projects/{project}/jobs/{job_id}/log';

/** `project` as `projectPathId` gives it (a number or an already URL-encoded path). */
export function fileUri(project: string, ref: string, path: string): string {
  return `forge://projects/${project}/files/${encodeURIComponent(ref)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

export function jobLogUri(project: string, jobId: number): string {
  return `forge://projects/${project}/jobs/${jobId}/log`;
}
