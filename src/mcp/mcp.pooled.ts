/**
 * The hot path of `/mcp`: a plain 2025-era `tools/list` or `tools/call` (one JSON-RPC request, no `_meta` envelope,
 * no progress asked for, a JSON answer) is served by a long-lived server per tool surface instead of a server and
 * a transport built for the one request (mcp.transport.ts). Profiled on `get_project`, building and tearing down
 * the SDK server, its transport and the web `Request`/`Response` pair was most of the server's own time per call.
 *
 * Nothing about a client is kept: the pooled servers never see `initialize` (that and everything else still takes
 * the per-request path), so they hold only the tools, exactly like a fresh server; the caller's token travels with
 * each message (`authInfo`). Any replica still answers any request. Each message gets an id of this process for
 * its way through the shared server (two clients may both send id 1), and the answer goes back with the client's.
 *
 * A `tools/list` answer depends only on the surface and the revision the client names, so its serialized result
 * is kept per (surface, revision) and written around the request's id without running the server at all.
 */
import {
  classifyInboundRequest,
  isJsonContentType,
  SUPPORTED_PROTOCOL_VERSIONS,
  type AuthInfo,
  type JSONRPCMessage,
  type McpServer,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../core/logger.ts';
import { renderedJsonOf } from './tools/tool.text.ts';

/** An answer of the pooled path: the serialized JSON-RPC response, and the result it carries (none for a kept list). */
export interface PooledAnswer {
  /** The response as UTF-8, ready to send. */
  body: Buffer;
  result?: unknown;
}

export interface PooledServing<S> {
  /**
   * Serves the request when it is one the pooled path answers exactly as the per-request path would, else
   * returns undefined (the caller serves it the usual way). `surfaceKey` names `surface` (equal keys, equal tools).
   */
  serve(headers: IncomingHttpHeaders, body: unknown, authInfo: AuthInfo, surfaceKey: string, surface: S): Promise<PooledAnswer> | undefined;
  close(): Promise<void>;
}

type Params = Record<string, unknown> & { _meta?: Record<string, unknown> };

/** One message in flight through a shared server, with the client's id it answers to. */
interface Pending {
  clientId: RequestId;
  resolve(message: JSONRPCMessage): void;
}

type Deliver = (message: JSONRPCMessage, extra: MessageExtraInfo) => void;

/**
 * The SDK server's request entry (`Protocol._onrequest`, private in the pinned 2.4.0), or undefined when a release
 * no longer has it. The server's `onmessage` sorts each message with up to three zod parses (result response? error
 * response? request?) and then calls this entry for a request; every message of the pooled path is a request
 * already (`pooledMethod`: the SDK's own classification, or a stricter check of the same schema), and only its id
 * changes on the way (to a positive integer), so the sorting always ends here. The two failed parses build zod
 * issue lists, which made them a measurable share of a pooled call. mcp.pooled.test.ts fails if the entry goes.
 */
export function requestEntry(server: McpServer): Deliver | undefined {
  const protocol = server.server as unknown as { _onrequest?: unknown };
  const entry = protocol._onrequest;
  return typeof entry === 'function' ? (entry as Deliver).bind(protocol) : undefined;
}

/**
 * A transport many requests share: `dispatch` hands a request to the server under an id of its own and resolves
 * with the server's response to it. Notifications the server sends are dropped: a JSON answer carries none, and
 * requests that asked for progress never come this way.
 */
class MultiplexTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  /** The server's request entry past its message sorting ({@link requestEntry}); unset: `onmessage`. */
  deliver: Deliver | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('id' in message) || typeof message.id !== 'number' || !('result' in message || 'error' in message)) return;
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    waiting.resolve({ ...message, id: waiting.clientId });
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  dispatch(message: { id: RequestId } & Record<string, unknown>, authInfo: AuthInfo): Promise<JSONRPCMessage> {
    this.nextId = this.nextId >= Number.MAX_SAFE_INTEGER ? 1 : this.nextId + 1;
    const id = this.nextId;
    return new Promise((resolve) => {
      this.pending.set(id, { clientId: message.id, resolve });
      (this.deliver ?? this.onmessage)?.({ ...message, id } as JSONRPCMessage, { authInfo });
    });
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The first revision of the `_meta`-envelope era (the SDK routes versions from it on to its modern handler). */
const FIRST_MODERN_REVISION = '2026-07-28';
/** The 2025-era revisions the SDK serves: a request naming one of these in its header, without an envelope, is legacy. */
const LEGACY_REVISIONS = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < FIRST_MODERN_REVISION));
/** The keys of a JSON-RPC request (the SDK's request schema is strict: any other key makes it something else). */
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether the SDK's `classifyInboundRequest` is sure to answer "legacy, no claim" for this body, decided without
 * it. The SDK's answer tries the body against its response schemas first, and each failed zod parse builds its
 * issue list: the three parses were measured at a few µs each, on every call. This covers the shape every 2025-era
 * client sends (a strict JSON-RPC request, no `_meta`, a 2025 revision or none in the header); for anything else,
 * `false`, and the SDK decides as before. mcp.pooled.test.ts holds the two to the same answers.
 */
function plainLegacyRequest(message: Record<string, unknown>, version: string | undefined): boolean {
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return false;
  const { id, params } = message;
  // The SDK's request id: a string or an integer (zod's `int()`, which is a safe integer).
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  for (const key in message) if (!REQUEST_KEYS.has(key)) return false;
  // `_meta` may carry the modern envelope's claim or a progress token: the SDK looks at those.
  if (params !== undefined && (!isObject(params) || '_meta' in params)) return false;
  return version === undefined || LEGACY_REVISIONS.has(version);
}

/** The pooled path's preconditions: everything the per-request transport would check or act on differently. */
export function pooledMethod(headers: IncomingHttpHeaders, body: unknown): 'tools/list' | 'tools/call' | undefined {
  if (!isObject(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: unknown };
  if (method !== 'tools/list' && method !== 'tools/call') return undefined;
  const accept = header(headers, 'accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(header(headers, 'content-type') ?? '')) return undefined;
  const version = header(headers, 'mcp-protocol-version');
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  if (params !== undefined && !isObject(params)) return undefined;
  if ((params as Params | undefined)?._meta?.progressToken !== undefined) return undefined;
  if (plainLegacyRequest(body, version)) return method;
  // The SDK's own classification (the same call the entry routes on): a well-formed request without the modern
  // envelope, and no header that would make the SDK refuse it.
  const mcpMethod = header(headers, 'mcp-method');
  const mcpName = header(headers, 'mcp-name');
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    ...(version !== undefined ? { protocolVersionHeader: version } : {}),
    ...(mcpMethod !== undefined ? { mcpMethodHeader: mcpMethod } : {}),
    ...(mcpName !== undefined ? { mcpNameHeader: mcpName } : {}),
    body,
  });
  return outcome.kind === 'legacy' && outcome.reason === 'no-claim' ? method : undefined;
}

/** Whether a `tools/list` asks for nothing but the list (no cursor, no other parameter). */
function plainList(params: Params | undefined): boolean {
  return params === undefined || Object.keys(params).every((key) => key === '_meta');
}

/**
 * The JSON-RPC response as text, in the pieces it is made of. A tool result's `structuredContent` was already
 * stringified by the tool layer for its text rendering (tool.text.ts `renderedJsonOf`); that text is spliced in
 * rather than made again, which halves the serialising of a large answer (a 100-file diff window: ~95 KB of value,
 * stringified once instead of twice). Joined, equal as JSON to `JSON.stringify(message)`.
 */
function answerPieces(message: JSONRPCMessage): string[] {
  if (!('result' in message) || message.jsonrpc !== '2.0' || Object.keys(message).length !== 3) return [JSON.stringify(message)];
  const { structuredContent, ...rest } = message.result as Record<string, unknown>;
  const json = typeof structuredContent === 'object' && structuredContent !== null ? renderedJsonOf(structuredContent) : undefined;
  if (json === undefined) return [JSON.stringify(message)];
  const head = JSON.stringify(rest);
  return [
    `{"result":${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"structuredContent":`,
    json,
    `},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`,
  ];
}

/** The JSON-RPC response as text (see answerPieces). */
export function serializeAnswer(message: JSONRPCMessage): string {
  return answerPieces(message).join('');
}

/**
 * The pieces as one UTF-8 buffer, each written into it where it goes. `Buffer.from` of the joined text first made
 * the joined string flat, a copy of the whole answer, then encoded it: measured on a 100-file diff window (~200 KB
 * of answer) as much CPU as serialising it.
 */
function encodePieces(pieces: readonly string[]): Buffer {
  let size = 0;
  for (const piece of pieces) size += Buffer.byteLength(piece, 'utf8');
  // Every byte is written below: the lengths were measured in the same encoding.
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const piece of pieces) at += bytes.write(piece, at, 'utf8');
  return bytes;
}

export function createPooledServing<S>(deps: { factory: (surface: S) => McpServer; log: Logger; maxSurfaces?: number }): PooledServing<S> {
  const onerror = (error: Error) => deps.log.debug({ reason: error.message }, 'MCP request refused or failed');
  // An evicted server is dropped, not closed: requests still on their way through it finish (it holds no timer
  // or socket, only the tools).
  const servers = new LRUCache<string, { server: McpServer; transport: MultiplexTransport; ready: Promise<void> }>({
    max: deps.maxSurfaces ?? 64,
  });
  // A kept list as the bytes of its answer up to the id. Encoding the ~30 KB answer for each request (a long string
  // made by concatenation, flattened, then UTF-8 encoded) measured a quarter of a kept tools/list's CPU; copying
  // the encoded bytes is a memcpy.
  const lists = new LRUCache<string, Buffer>({ max: (deps.maxSurfaces ?? 64) * 4 });

  const serverFor = (key: string, surface: S) => {
    let entry = servers.get(key);
    if (!entry) {
      const server = deps.factory(surface);
      const transport = new MultiplexTransport();
      const ready = server.connect(transport).then(() => {
        transport.deliver = requestEntry(server);
      });
      transport.onerror = onerror;
      entry = { server, transport, ready };
      servers.set(key, entry);
    }
    return entry;
  };

  const answer = (message: JSONRPCMessage): PooledAnswer => ({
    body: encodePieces(answerPieces(message)),
    ...('result' in message ? { result: message.result } : {}),
  });

  return {
    serve(headers, body, authInfo, surfaceKey, surface) {
      const method = pooledMethod(headers, body);
      if (method === undefined) return undefined;
      const message = body as { id: RequestId; params?: Params } & Record<string, unknown>;
      const listKey =
        method === 'tools/list' && plainList(message.params) ? `${header(headers, 'mcp-protocol-version') ?? ''}|${surfaceKey}` : undefined;
      const cached = listKey !== undefined ? lists.get(listKey) : undefined;
      if (cached !== undefined)
        return Promise.resolve({ body: Buffer.concat([cached, Buffer.from(`${JSON.stringify(message.id)}}`, 'utf8')]) });
      const entry = serverFor(surfaceKey, surface);
      return entry.ready.then(async () => {
        const response = await entry.transport.dispatch(message, authInfo);
        if (listKey !== undefined && 'result' in response)
          lists.set(listKey, Buffer.from(`{"result":${JSON.stringify(response.result)},"jsonrpc":"2.0","id":`, 'utf8'));
        return answer(response);
      });
    },
    async close() {
      servers.clear();
      lists.clear();
    },
  };
}
