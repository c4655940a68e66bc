import { File } from 'node:buffer';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, buildConnector, FormData } from 'undici';
import type { MultipartBody, UpstreamRequest } from '../wires/wire.types.ts';
import { isAddressAllowed, isForbiddenHostName } from './address-policy.ts';

/**
 * The one HTTP client every call to a model provider goes through (issue 15 item 3): discovery, the model test and,
 * later, inference. It enforces outbound safety where the connection is made, not on the URL text:
 * - only absolute `http:`/`https:` URLs without user credentials;
 * - every socket is opened by this client's connector: an IP-literal host is checked there, a host name is checked
 *   inside the socket's DNS lookup hook on every address the name resolves to, and the socket then connects to one
 *   of exactly those addresses, so a name cannot resolve to a checked address first and a forbidden one later;
 * - redirects are never followed (a 3xx is an ordinary response for the caller to classify), nothing is retried;
 * - one deadline covers connect, headers and the whole body; the body is read up to a byte cap.
 * Nothing is logged here, and no failure message holds a header value (the API key travels in one), the URL's path
 * or query, or any of the response body.
 */

export type UpstreamFailureKind = 'url_refused' | 'address_refused' | 'timed_out' | 'connection_failed' | 'body_too_large';

/** Why an upstream call produced no response. The message names the host at most, so it is safe to log. */
export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
  readonly kind: UpstreamFailureKind;

  constructor(kind: UpstreamFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

export interface SendOptions {
  /** Deadline for the whole exchange: connecting, the response headers and the complete body. */
  timeoutMs: number;
  /** The largest response body accepted, in bytes, as received (the client asks for no content coding). */
  maxBodyBytes: number;
  /**
   * Ends the request early. Its abort fails the call with `timed_out` when the signal's reason is a `TimeoutError`
   * (as `AbortSignal.timeout` gives), else with `connection_failed`: the caller gave up, the upstream did not answer.
   */
  signal?: AbortSignal;
}

export interface UpstreamResponse {
  status: number;
  /** Lower-case names; a repeated header's values are joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface StreamOptions {
  /** Deadline for the whole exchange, as in `send`: connecting, the headers and the streamed body to its end. */
  timeoutMs: number;
  /** The largest error body read for a non-2xx answer (a 2xx body is streamed, not capped). */
  maxErrorBodyBytes: number;
  /** Ends the request early, with the same failure kinds as `send`; also ends a body being streamed. */
  signal?: AbortSignal;
}

export interface UpstreamStream {
  status: number;
  /** Lower-case names; a repeated header's values are joined with `, `. */
  headers: Record<string, string>;
  /**
   * A 2xx answer's body as it arrives; any other status's body already read (capped) as one chunk. Iteration fails
   * only with `UpstreamFailure`; stopping early (`break`, `return`) aborts the request and closes its connection.
   */
  body: AsyncIterable<Uint8Array>;
}

export interface UpstreamClient {
  /** Sends one request; resolves with any HTTP status (3xx, 4xx and 5xx included), rejects only with `UpstreamFailure`. */
  send(request: UpstreamRequest, options: SendOptions): Promise<UpstreamResponse>;
  /**
   * Sends one request whose answer is read as it arrives (Server-Sent Events): resolves once the headers are in, with
   * the same safety rules as `send`; the deadline and the signal keep running until the body ends or is abandoned.
   */
  stream(request: UpstreamRequest, options: StreamOptions): Promise<UpstreamStream>;
  /** Closes the pooled connections once in-flight requests end. */
  close(): Promise<void>;
}

export interface UpstreamClientOptions {
  /** Whether loopback and private ranges may be reached (`upstreamAllowPrivate` in admin.config.ts). */
  allowPrivate: boolean;
  /** Resolves host names; `dns.lookup` by default. Tests hand in one that answers without a network. */
  lookup?: LookupFunction;
}

/**
 * Creates a client with one keep-alive connection pool (an undici `Agent`), so a request to a known origin reuses a
 * connection instead of paying for a handshake (the model test measures latency through this client).
 */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const agent = new Agent({ connect: guardedConnector(options.allowPrivate, options.lookup ?? dnsLookup) });

  function open(request: UpstreamRequest, options: { timeoutMs: number; signal?: AbortSignal | undefined }) {
    const url = upstreamUrl(request.url);
    // One controller carries both ends — the deadline and the caller's signal — and remembers which came first.
    const controller = new AbortController();
    const context: FailureContext = { abortedBy: null, callerSignal: options.signal, host: url.hostname, timeoutMs: options.timeoutMs };
    const timer = setTimeout(() => {
      context.abortedBy ??= 'deadline';
      controller.abort();
    }, options.timeoutMs);
    const onCallerAbort = (): void => {
      context.abortedBy ??= 'caller';
      controller.abort();
    };
    if (options.signal?.aborted === true) onCallerAbort();
    else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const response = agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: outboundHeaders(request),
      body: outboundBody(request.body),
      signal: controller.signal,
    });
    const release = (): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
    };
    return { response, context, release };
  }

  return {
    async send(request, sendOptions) {
      const { response: pending, context, release } = open(request, sendOptions);
      try {
        const response = await pending;
        const body = await readCapped(response.body, response.headers['content-length'], sendOptions.maxBodyBytes, context.host);
        return { status: response.statusCode, headers: flatHeaders(response.headers), body };
      } catch (error) {
        throw asFailure(error, context);
      } finally {
        release();
      }
    },
    async stream(request, streamOptions) {
      const { response: pending, context, release } = open(request, streamOptions);
      let response;
      try {
        response = await pending;
      } catch (error) {
        release();
        throw asFailure(error, context);
      }
      const status = response.statusCode;
      const headers = flatHeaders(response.headers);
      if (status < 200 || status >= 300) {
        try {
          const body = await readCapped(response.body, response.headers['content-length'], streamOptions.maxErrorBodyBytes, context.host);
          return {
            status,
            headers,
            body: (async function* () {
              yield body;
            })(),
          };
        } catch (error) {
          throw asFailure(error, context);
        } finally {
          release();
        }
      }
      return { status, headers, body: streamedBody(response.body, context, release) };
    },
    close() {
      return agent.close();
    },
  };
}

function upstreamUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The text itself is not shown: a malformed URL may still hold a credential.
    throw new UpstreamFailure('url_refused', 'the upstream URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UpstreamFailure('url_refused', `the upstream URL must use http or https, not ${url.protocol}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UpstreamFailure('url_refused', 'the upstream URL must not carry user credentials');
  }
  return url;
}

/**
 * The connector every pooled socket is opened with. `net.connect` skips the lookup hook for an IP-literal host, so
 * literals are checked here; names are refused by name here and by address in the lookup hook.
 */
function guardedConnector(allowPrivate: boolean, resolve: LookupFunction): buildConnector.connector {
  const connectSocket = buildConnector({ lookup: guardedLookup(allowPrivate, resolve) });
  return (target, callback) => {
    const refusal = hostRefusal(target.hostname, allowPrivate);
    if (refusal === null) {
      connectSocket(target, callback);
      return;
    }
    // Asynchronously, as a real connection attempt fails: undici's client expects the callback after it returns.
    process.nextTick(() => callback(refusal, null));
  };
}

function hostRefusal(hostname: string, allowPrivate: boolean): UpstreamFailure | null {
  if (isForbiddenHostName(hostname)) return new UpstreamFailure('address_refused', `the host ${hostname} is a metadata service`);
  if (isIP(hostname) !== 0 && !isAddressAllowed(hostname, allowPrivate)) return addressRefused(hostname, hostname, allowPrivate);
  return null;
}

function addressRefused(hostname: string, address: string, allowPrivate: boolean): UpstreamFailure {
  const which = hostname === address ? `the address ${address}` : `the host ${hostname} resolves to ${address}, which`;
  const allowed = allowPrivate ? 'public, private or loopback' : 'public';
  return new UpstreamFailure('address_refused', `${which} is not a ${allowed} address an upstream may use`);
}

/**
 * Wraps a resolver so a socket only ever sees addresses that passed the policy. It always asks for every address
 * (a name with one forbidden address among several is refused whole), then answers in the form the socket asked
 * for: the list when `all` is set (Node's happy-eyeballs connect), else the first address.
 */
function guardedLookup(allowPrivate: boolean, resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, resolved) => {
      if (error) {
        callback(error, '');
        return;
      }
      const addresses: LookupAddress[] = typeof resolved === 'string' ? [{ address: resolved, family: isIP(resolved) }] : resolved;
      const first = addresses[0];
      if (first === undefined) {
        callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), '');
        return;
      }
      const forbidden = addresses.find(({ address }) => !isAddressAllowed(address, allowPrivate));
      if (forbidden !== undefined) {
        callback(addressRefused(hostname, forbidden.address, allowPrivate), '');
        return;
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/** The caller's headers, with the content coding fixed to identity so the byte cap counts what the caller gets. */
function outboundHeaders(request: UpstreamRequest): Record<string, string> {
  const multipart = typeof request.body === 'object' && request.body !== null;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'accept-encoding') continue;
    // The multipart encoder writes its own type (with the boundary) and length.
    if (multipart && (lower === 'content-type' || lower === 'content-length')) continue;
    headers[name] = value;
  }
  headers['accept-encoding'] = 'identity';
  return headers;
}

function outboundBody(body: UpstreamRequest['body']): string | FormData | null {
  if (body === null || typeof body === 'string') return body;
  return formDataOf(body);
}

function formDataOf(body: MultipartBody): FormData {
  const form = new FormData();
  for (const part of body.parts) {
    if ('value' in part) form.append(part.name, part.value);
    else form.append(part.name, new File([part.data], part.filename, { type: part.contentType }));
  }
  return form;
}

/**
 * A streamed body whose failures are `UpstreamFailure`s and whose deadline and caller signal end with it. Leaving the
 * loop early destroys the undici body, which aborts the request and closes its socket.
 */
async function* streamedBody(body: Readable, context: FailureContext, release: () => void): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) yield chunk;
  } catch (error) {
    throw asFailure(error, context);
  } finally {
    release();
    if (!body.destroyed) body.on('error', () => {}).destroy();
  }
}

async function readCapped(body: Readable, contentLength: string | string[] | undefined, maxBytes: number, host: string): Promise<Buffer> {
  const tooLarge = (): UpstreamFailure => {
    // Destroying an unfinished undici body aborts the request and closes its socket; the abort also surfaces as an
    // 'error' event nobody else listens to any more.
    body.on('error', () => {}).destroy();
    return new UpstreamFailure('body_too_large', `the response from ${host} is larger than ${maxBytes} bytes`);
  };
  if (typeof contentLength === 'string' && Number(contentLength) > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** undici's own timeouts (connect: 10 s by default; headers and body: longer than any deadline given here). */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

interface FailureContext {
  abortedBy: 'deadline' | 'caller' | null;
  callerSignal: AbortSignal | undefined;
  host: string;
  timeoutMs: number;
}

function asFailure(error: unknown, context: FailureContext): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const { host } = context;
  if (context.abortedBy === 'deadline') {
    return new UpstreamFailure('timed_out', `${host} did not answer completely within ${context.timeoutMs} ms`);
  }
  if (context.abortedBy === 'caller') {
    const reason: unknown = context.callerSignal?.reason;
    return isTimeoutReason(reason)
      ? new UpstreamFailure('timed_out', `the request to ${host} timed out (the caller's signal)`)
      : new UpstreamFailure('connection_failed', `the request to ${host} was cancelled by the caller`);
  }
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new UpstreamFailure('timed_out', `the request to ${host} timed out (${code})`, { cause: error });
  }
  // The cause is a socket, DNS, TLS or undici error: these name hosts, ports and header names, never header values.
  return new UpstreamFailure('connection_failed', `the request to ${host} failed (${code ?? 'no error code'})`, { cause: error });
}

function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && 'name' in reason && reason.name === 'TimeoutError';
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
