import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope } from '../core/errors.ts';
import { loadConsoleAssets, type ConsoleAsset } from './console.assets.ts';
import { CONSOLE_HEADERS } from './console.headers.ts';

/** Where the console lives on the REST listener. */
export const CONSOLE_PATH = '/console/';

/** Whether `header` (an `If-None-Match` value) names `etag`, or is `*`. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const tag = part.trim().replace(/^W\//, '');
    return tag === etag || tag === '*';
  });
}

/** The encoding to send: brotli, then gzip, when the client accepts it and it is not refused with `q=0`. */
function encodingFor(request: FastifyRequest, asset: ConsoleAsset): 'br' | 'gzip' | undefined {
  const accept = request.headers['accept-encoding'];
  if (typeof accept !== 'string') return undefined;
  const accepted = new Set(
    accept
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
      .map((part) => part.split(';')[0]),
  );
  if (asset.br && accepted.has('br')) return 'br';
  if (asset.gzip && accepted.has('gzip')) return 'gzip';
  return undefined;
}

/** Whether `url` is the console's: `/console` or under `/console/`, whatever the query. */
function isConsoleUrl(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return path === '/console' || path.startsWith(CONSOLE_PATH);
}

function send(request: FastifyRequest, reply: FastifyReply, asset: ConsoleAsset): FastifyReply {
  void reply.header('etag', asset.etag);
  void reply.header('vary', 'accept-encoding');
  if (matches(request.headers['if-none-match'], asset.etag)) return reply.status(304).send();
  void reply.header('content-type', asset.contentType);
  const encoding = encodingFor(request, asset);
  if (encoding) void reply.header('content-encoding', encoding);
  return reply.send(encoding ? asset[encoding] : asset.body);
}

/**
 * The admin console (issue 19) at `/console/`: static files only, read once at start. The page calls the public
 * session and admin routes with the signed-in Human's bearer; nothing here reads data or grants access, so these
 * routes need no authentication. Every answer on a console path carries the console's strict headers
 * (console.headers.ts), set in one hook: the files, the redirect, the 304s and 404s, and the answers the server
 * gives there itself (405 for another method, a malformed request).
 */
export function registerConsoleRoutes(app: FastifyInstance): void {
  const assets = loadConsoleAssets();
  const index = assets.get('index.html');
  if (!index) throw new Error('the console has no index.html');
  app.addHook('onSend', async (request, reply) => {
    if (isConsoleUrl(request.url)) void reply.headers(CONSOLE_HEADERS);
  });
  app.get('/console', async (_request, reply) => reply.redirect(CONSOLE_PATH, 301));
  app.get(CONSOLE_PATH, async (request, reply) => send(request, reply, index));
  app.get(`${CONSOLE_PATH}*`, async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    const asset = assets.get(path);
    if (!asset) {
      return reply.status(404).send(errorEnvelope('not_found', 'no such console file'));
    }
    return send(request, reply, asset);
  });
}
