import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, errorEnvelope, INTERNAL_MESSAGE, isAppError } from '../errors.ts';
import { assertStorableText } from '../storable-text.ts';
import type { TrustProxy } from '../config.core.ts';
import type { Logger } from '../logger.ts';
import { lazyRequestLogger } from './request-logger.ts';

export interface HttpAppOptions {
  log: Logger;
  /** Honour `X-Forwarded-For` (and friends) from the listed proxy addresses (see TRUST_PROXY). */
  trustProxy?: TrustProxy;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** TLS key and certificate (PEM); plain HTTP when absent. */
  https?: { key: Buffer; cert: Buffer };
  /**
   * Refuse, with 400 `parameter_invalid`, requests whose body, path parameters, query string, bearer or session
   * cookie hold text neither database can store (default true). One check at the boundary instead of one per
   * route, so PostgreSQL and SQLite answer the same instead of PostgreSQL failing with a 500 deep in SQL.
   */
  refuseUnstorableText?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route checks its decoded input for unstorable text itself (the gRPC HTTP mappings do, at the RPC boundary
     * both transports share), so the app-wide check skips it rather than checking twice with other field names.
     */
    checksStorableTextItself?: boolean;
  }
}

/** Paths only, never query strings: OAuth codes and states travel in queries and must not reach the log. */
function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** Maps framework errors (parsing, limits, rate limits) to our codes; everything else is internal. */
export function frameworkErrorToAppError(error: FastifyError): AppError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'request body is too large');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('parameter_invalid', 'request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'unsupported content type');
    case 'FST_ERR_VALIDATION':
      return new AppError('parameter_invalid', error.message);
    default:
      break;
  }
  if (error.statusCode === 429) return new AppError('rate_limited', 'too many requests');
  if (error instanceof SyntaxError || error.statusCode === 400) return new AppError('parameter_invalid', 'malformed request');
  if (error.statusCode === 413) return new AppError('payload_too_large', 'request body is too large');
  if (error.statusCode === 415) return new AppError('unsupported_media_type', 'unsupported content type');
  if (error.statusCode === 404) return new AppError('not_found', 'not found');
  if (error.statusCode === 408) return new AppError('parameter_invalid', 'request timed out');
  // Any other client error of the framework or a plugin is the client's, not an internal failure.
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return new AppError('parameter_invalid', 'malformed request');
  return undefined;
}

/** Sends an AppError in the envelope; the one place REST errors are written. */
function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
  return reply.status(error.httpStatus).send(errorEnvelope(error.code, error.message));
}

/**
 * A client error that every error handler reads the same way: ours by its code (`isAppError`), plain Fastify ones
 * (the MCP listener's OAuth scope answers in RFC 6749 form) by its `statusCode`.
 */
function clientError(code: 'parameter_invalid' | 'unsupported_media_type', message: string): AppError {
  const error = new AppError(code, message);
  return Object.assign(error, { statusCode: error.httpStatus });
}

/**
 * Whether a `Content-Type` header names no charset or UTF-8 (any case, quoted or not), the only encoding a JSON
 * or form body may use here (RFC 8259 8.1); `latin1` and friends would decode to text the client did not mean.
 */
export function hasUtf8Charset(contentType: string): boolean {
  for (const part of contentType.split(';').slice(1)) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value.toLowerCase() !== 'utf-8') return false;
  }
  return true;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether a request carries a body (a `Content-Length` above zero or a chunked transfer). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return request.headers['transfer-encoding'] !== undefined;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A Fastify app with the platform's HTTP conventions: a request id per request (echoed as `x-request-id`),
 * redacted logs, the `{"error":{"code","message"}}` envelope for every error including 404, 405, malformed JSON
 * and over-size bodies, and the session cookie parser.
 */
export function createHttpApp(options: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: options.log,
    trustProxy: options.trustProxy ?? false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A client's x-request-id is kept only when it looks like an id, so it cannot forge or flood log lines.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // A client that sends its request slowly cannot hold a connection for ever.
    requestTimeout: 120_000,
    // Errors raised before routing (bad URLs, unparseable bodies) still answer in the envelope.
    frameworkErrors: (error, _request, reply) => {
      void sendAppError(reply, frameworkErrorToAppError(error) ?? new AppError('parameter_invalid', 'malformed request'));
    },
    // Errors at the connection level (oversized headers, broken HTTP) never reach a handler: answer them here.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return;
      const tooLarge = (error as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW';
      const status = tooLarge ? 431 : 400;
      const body = JSON.stringify(errorEnvelope('parameter_invalid', tooLarge ? 'request headers are too large' : 'malformed request'));
      socket.end(
        `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nconnection: close\r\n` +
          `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
    // Our own onResponse line logs the path without its query string (OAuth codes travel in queries).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Each request's child logger is made on its first line written, not for every request (./request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    // Requests arriving while closing get our own 503 envelope (below) instead of Fastify's body.
    return503OnClosing: false,
    // Path parameters are checked by their handlers, which answer in their API's own terms (an OSV id over 100
    // bytes is `ID is too long`); Fastify's default of 100 characters would answer 414 before them.
    routerOptions: { maxParamLength: 1024 },
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;

  void app.register(fastifyCookie);

  // Bodies are JSON in UTF-8 (or, where a listener registers a parser for it, a form); Fastify's default text/plain
  // parser would hand a handler a string that then fails as a 400 instead of the documented 415, and its JSON
  // parser decodes invalid UTF-8 to U+FFFD, so a stored secret would differ from the one the client sent.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  const parseJsonText = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      done(clientError('parameter_invalid', 'request body is not valid UTF-8'), undefined);
      return;
    }
    void parseJsonText(request, text, done);
  });

  // Routes by path, to tell 405 (path exists, method does not) from 404.
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = new RegExp(
      '^' +
        route.url
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/\/\*$/, '/.*')
          .replace(/:[A-Za-z0-9_]+/g, '[^/]+') +
        '$',
    );
    for (const method of methods) routes.push({ method: method.toUpperCase(), pattern });
  });

  // While shutting down, answers to in-flight requests close their connection, so a keep-alive client does not
  // hold the shutdown open after its last response; new requests are refused with 503.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  // The per-request hooks below take Fastify's `done` callback rather than being async: they run on every request of
  // every listener, and an async hook costs a promise and a microtask turn each time for work that is synchronous.
  // (A callback hook answers early by sending the reply and not calling `done`.)
  const refuseUnstorableText = options.refuseUnstorableText !== false;
  /** Every text that may reach SQL, once; throws the 400 `parameter_invalid` with Fastify's status on it. */
  const refuseUnstorable = (parts: readonly (readonly [unknown, string])[]): void => {
    try {
      for (const [value, where] of parts) assertStorableText(value, where);
    } catch (error) {
      throw isAppError(error) ? Object.assign(error, { statusCode: error.httpStatus }) : error;
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    if (closing) {
      void sendAppError(reply, new AppError('unavailable', 'the server is shutting down'));
      return;
    }
    // What routing yields (path parameters, query) and the credentials, before any route's own onRequest
    // authenticates with them.
    if (refuseUnstorableText && !request.routeOptions.config.checksStorableTextItself) {
      try {
        refuseUnstorable([
          [request.params, 'params'],
          [request.query, 'query'],
          [request.headers.authorization, 'headers.authorization'],
          [request.cookies, 'cookies'],
        ]);
      } catch (error) {
        done(error as Error);
        return;
      }
    }
    done();
  });
  // Before any parser runs, so form bodies (a listener's own parser) are held to the same charset rule as JSON.
  app.addHook('preParsing', (request, _reply, payload, done) => {
    // An unknown path or method answers 404/405 whatever its body: there is nothing to parse it for.
    const type = request.headers['content-type'];
    if (!request.is404 && type !== undefined && hasBody(request) && !hasUtf8Charset(type)) {
      done(clientError('unsupported_media_type', 'unsupported charset: request bodies must be UTF-8'));
      return;
    }
    done(null, payload);
  });

  if (refuseUnstorableText) {
    // The body once it is parsed, before validation.
    app.addHook('preValidation', (request, _reply, done) => {
      if (!request.routeOptions.config.checksStorableTextItself) {
        try {
          refuseUnstorable([[request.body, 'body']]);
        } catch (error) {
          done(error as Error);
          return;
        }
      }
      done();
    });
  }

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, path: pathOnly(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request completed',
    );
    done();
  });

  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const path = pathOnly(request.url);
    const allowed = METHODS.filter((m) => routes.some((r) => r.method === m && r.pattern.test(path)));
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return sendAppError(reply, new AppError('method_not_allowed', `method ${request.method} is not allowed on this path`));
    }
    return sendAppError(reply, new AppError('not_found', 'no such route'));
  });

  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(error)) {
      if (error.httpStatus >= 500) request.log.error({ err: error, cause: error.cause }, 'request failed');
      return sendAppError(reply, error);
    }
    const mapped = frameworkErrorToAppError(error);
    if (mapped) {
      return sendAppError(reply, mapped);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendAppError(reply, new AppError('internal', INTERNAL_MESSAGE));
  });

  return app;
}

/** Liveness and readiness: `/healthz` answers while the process runs, `/readyz` only when dependencies are. */
export function registerHealthRoutes(app: FastifyInstance, ready: () => Promise<boolean>): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    if (await ready()) return { status: 'ready' };
    return sendAppError(reply, new AppError('unavailable', 'the database is not reachable'));
  });
}

/**
 * Closes an app gracefully: no new connections, in-flight requests finish; connections still open after
 * `timeoutMs` are cut so a stuck client cannot hold a shutdown forever.
 */
export async function closeGracefully(app: FastifyInstance, timeoutMs = 10_000): Promise<void> {
  const timer = setTimeout(() => {
    app.log.warn({ timeoutMs }, 'shutdown deadline passed: closing remaining connections');
    app.server.closeAllConnections();
  }, timeoutMs);
  timer.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}
