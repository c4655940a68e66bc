/**
 * Resources and completions (issue 18 item 3): repository files at a ref and job logs as MCP resource templates
 * (the URIs tool results link to, forge.uris.ts), and completion of project paths and refs for those templates
 * and for the prompts (prompts.ts). Each read and completion uses the caller's own forge token, as tools do:
 * `ctx.http.authInfo` on HTTP, `getToken` on stdio.
 */
import { ResourceNotFoundError, ResourceTemplate, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { ForgeApiError, type ForgeApi, type ForgePage } from './forge.client.ts';
import { projectPathId } from './forge.ids.ts';
import { FILE_URI_TEMPLATE, JOB_LOG_URI_TEMPLATE } from './forge.uris.ts';
import { cleanLog } from './job.log.ts';
import { mimeTypeOf } from './repository.tools.ts';
import { sanitizeText } from './tool.text.ts';

export interface ForgeResourceDeps {
  api: ForgeApi;
  forgeUrl: string;
  getToken?: () => Promise<string>;
}

/** The caller's forge token, or a thrown error the client sees as a failed request. */
async function tokenOf(ctx: ServerContext, deps: ForgeResourceDeps): Promise<string> {
  const token = ctx.http?.authInfo?.token ?? (deps.getToken ? await deps.getToken().catch(() => undefined) : undefined);
  if (!token) throw new Error('Not signed in to the forge.');
  return token;
}

/** Values one completion offers at most: one forge page of each list it asks. */
const COMPLETION_PAGE = 20;

const first = (value: string | string[] | undefined): string => (Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));

/** A forge 404 as MCP's resource-not-found error; other forge errors keep their public message. */
function resourceError(uri: string, error: unknown): Error {
  if (error instanceof ForgeApiError) return error.type === 'not_found' ? new ResourceNotFoundError(uri) : new Error(error.publicMessage);
  return error instanceof Error ? error : new Error(String(error));
}

/** Completion values, and whether the forge has more than it listed (a longer prefix narrows them). */
interface Completed {
  values: string[];
  hasMore: boolean;
}

const NONE: Completed = { values: [], hasMore: false };

/** Whether a forge list has items after this page: offset (`x-next-page`) or keyset (`Link` rel=next). */
const hasNextPage = (page: ForgePage<unknown>): boolean => page.nextPage !== undefined || page.nextKeyset !== undefined;

/** Project paths the user is a member of, matching what was typed so far (one forge page of 20). */
async function completeProjects(deps: ForgeResourceDeps, token: string, typed: string): Promise<Completed> {
  const page = await deps.api.page<{ path_with_namespace?: unknown }>('/projects', token, {
    membership: true,
    simple: true,
    search: typed.includes('/') ? typed.split('/').pop() : typed || undefined,
    per_page: COMPLETION_PAGE,
  });
  const values = page.items
    .map((p) => (typeof p.path_with_namespace === 'string' ? p.path_with_namespace : ''))
    .filter((p) => p !== '' && p.toLowerCase().includes(typed.toLowerCase()));
  return { values, hasMore: hasNextPage(page) };
}

/** Branches, then tags, of a project starting with what was typed (at most 20 together). */
async function completeRefs(deps: ForgeResourceDeps, token: string, project: string, typed: string): Promise<Completed> {
  if (!project) return NONE;
  const id = projectPathId(decodeURIComponent(project), deps.forgeUrl);
  const [branches, tags] = await Promise.all([
    deps.api.page<{ name?: unknown }>(`/projects/${id}/repository/branches`, token, {
      search: typed ? `^${typed}` : undefined,
      per_page: COMPLETION_PAGE,
    }),
    deps.api.page<{ name?: unknown }>(`/projects/${id}/repository/tags`, token, { search: typed || undefined, per_page: COMPLETION_PAGE }),
  ]);
  const names = [...branches.items, ...tags.items]
    .map((r) => (typeof r.name === 'string' ? r.name : ''))
    .filter((n) => n.startsWith(typed) && n !== '');
  const unique = [...new Set(names)];
  return {
    values: unique.slice(0, COMPLETION_PAGE),
    hasMore: unique.length > COMPLETION_PAGE || hasNextPage(branches) || hasNextPage(tags),
  };
}

/**
 * `completion/complete` for the file template's `project` and `ref` and the prompts' `project`. The SDK's own
 * completion callbacks get no request context, so no token; this handler has it.
 */
function registerCompletions(server: McpServer, deps: ForgeResourceDeps): void {
  server.server.registerCapabilities({ completions: {} });
  server.server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { argument, context } = request.params;
    const token = await tokenOf(ctx, deps);
    let completed = NONE;
    try {
      if (argument.name === 'project') completed = await completeProjects(deps, token, argument.value);
      else if (argument.name === 'ref') completed = await completeRefs(deps, token, context?.arguments?.project ?? '', argument.value);
    } catch (error) {
      // A completion is a convenience: a forge failure offers nothing rather than failing the client's input box.
      if (!(error instanceof ForgeApiError)) throw error;
    }
    const { values, hasMore } = completed;
    // `total` counts what there is; with more at the forge that number is unknown, so it is left out.
    return { completion: { values, ...(hasMore ? {} : { total: values.length }), hasMore } };
  });
}

/** Registers the resource templates and the completions on `server`. */
export function registerForgeResources(server: McpServer, deps: ForgeResourceDeps): void {
  server.registerResource(
    'repository-file',
    new ResourceTemplate(FILE_URI_TEMPLATE, { list: undefined }),
    {
      title: 'Repository file at a ref',
      description: 'A file of a project at a branch, tag or commit (forge content: untrusted). project: id or URL-encoded path.',
    },
    async (uri, variables, ctx) => {
      const token = await tokenOf(ctx, deps);
      const project = projectPathId(decodeURIComponent(first(variables.project)), deps.forgeUrl);
      const ref = decodeURIComponent(first(variables.ref));
      const path = first(variables.path).split('/').map(decodeURIComponent).join('/');
      let file: { content?: unknown };
      try {
        file = await deps.api.get(`/projects/${project}/repository/files/${encodeURIComponent(path)}`, token, { ref });
      } catch (error) {
        throw resourceError(uri.href, error);
      }
      const bytes = Buffer.from(typeof file.content === 'string' ? file.content : '', 'base64');
      const text = bytes.toString('utf8');
      const binary = bytes.subarray(0, 8000).includes(0) || !Buffer.from(text, 'utf8').equals(bytes);
      const mimeType = mimeTypeOf(path, binary);
      return {
        // Text is forge content as tool results carry it: without the characters a reader cannot see but a model reads.
        contents: [
          binary ? { uri: uri.href, mimeType, blob: bytes.toString('base64') } : { uri: uri.href, mimeType, text: sanitizeText(text) },
        ],
      };
    },
  );
  server.registerResource(
    'job-log',
    new ResourceTemplate(JOB_LOG_URI_TEMPLATE, { list: undefined }),
    {
      title: 'CI job log',
      description: 'The whole log of a CI job, ANSI colours and section markers removed (forge content: untrusted).',
      mimeType: 'text/plain',
    },
    async (uri, variables, ctx) => {
      const token = await tokenOf(ctx, deps);
      const project = projectPathId(decodeURIComponent(first(variables.project)), deps.forgeUrl);
      const jobId = Number(first(variables.job_id));
      if (!Number.isInteger(jobId) || jobId <= 0) throw new ResourceNotFoundError(uri.href);
      try {
        const raw = await deps.api.text(`/projects/${project}/jobs/${jobId}/trace`, token);
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: sanitizeText(cleanLog(raw)) }] };
      } catch (error) {
        throw resourceError(uri.href, error);
      }
    },
  );
  registerCompletions(server, deps);
}
