/**
 * The outbound HTTP of the MCP server towards the forge (issue 17 item 5): one keep-alive connection pool
 * (undici) for the process, used by every tool and by the OAuth calls and token checks, which all take this
 * `fetch`. For self-hosted forges it trusts a custom CA (`FORGE_CA_CERT_PATH`, added to the public roots and to
 * `NODE_EXTRA_CA_CERTS`, whose certificates a `ca` option would otherwise replace) and goes through
 * `HTTPS_PROXY`/`HTTP_PROXY` except for `NO_PROXY` hosts.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Agent, EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';
import type { ForgeAnswer, ForgeSend } from './forge.client.ts';

export interface ForgeHttp {
  fetch: typeof fetch;
  /**
   * The REST client's transport on the same pool, through undici's request API rather than its `fetch`: the WHATWG
   * fetch machinery (request and response objects, body streams, the fetch algorithm's steps) was measured at
   * about a third of the CPU of a forge call from the MCP server, and the client reads every answer whole anyway.
   */
  send: ForgeSend;
  close(): Promise<void>;
}

export interface ForgeHttpSettings {
  /** PEM file of the CA (or certificate) the forge's TLS certificate chains to. */
  caCertPath?: string | undefined;
  /** Where the proxy variables are read (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** The CAs to trust: the public roots, `NODE_EXTRA_CA_CERTS`, and the configured one; undefined: Node's defaults. */
function trustedCas(settings: ForgeHttpSettings, env: Record<string, string | undefined>): string[] | undefined {
  if (!settings.caCertPath) return undefined;
  let custom: string;
  try {
    custom = readFileSync(settings.caCertPath, 'utf8');
  } catch (error) {
    throw new Error(`FORGE_CA_CERT_PATH: cannot read ${settings.caCertPath}: ${(error as Error).message}`);
  }
  if (!custom.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`FORGE_CA_CERT_PATH: ${settings.caCertPath} holds no PEM certificate`);
  const extra = env.NODE_EXTRA_CA_CERTS ? readFileSync(env.NODE_EXTRA_CA_CERTS, 'utf8') : undefined;
  return [...rootCertificates, ...(extra ? [extra] : []), custom];
}

/**
 * An answer read whole. A class rather than an object of arrow functions: under tsx (how the server runs, see
 * bin/platform.js) every arrow function made per call is named with an `Object.defineProperty`, three per forge
 * call here, measured at about a tenth of this transport's own CPU on `get_project`.
 */
class ReadAnswer implements ForgeAnswer {
  readonly status: number;
  readonly #headers: Record<string, string | string[] | undefined>;
  readonly #body: string;

  constructor(status: number, headers: Record<string, string | string[] | undefined>, body: string) {
    this.status = status;
    this.#headers = headers;
    this.#body = body;
  }

  header(name: string): string | null {
    const value = this.#headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }

  async text(): Promise<string> {
    return this.#body;
  }

  async discard(): Promise<void> {}
}

export function createForgeHttp(settings: ForgeHttpSettings = {}): ForgeHttp {
  const env = settings.env ?? process.env;
  const ca = trustedCas(settings, env);
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy;
  const httpProxy = env.HTTP_PROXY ?? env.http_proxy;
  const noProxy = env.NO_PROXY ?? env.no_proxy;
  const pool = { keepAliveTimeout: 30_000, ...(ca ? { connect: { ca } } : {}) };
  // Without a proxy, a plain pool: the proxy agent would parse each request's origin and read NO_PROXY from the
  // environment on every request only to pick that same pool (the proxy variables are read here, once, from `env`).
  const dispatcher =
    httpsProxy || httpProxy
      ? new EnvHttpProxyAgent({
          ...pool,
          // `requestTls` for the forge behind a proxy tunnel (`connect` is for direct connections).
          ...(ca ? { requestTls: { ca } } : {}),
          ...(httpsProxy ? { httpsProxy } : {}),
          ...(httpProxy ? { httpProxy } : {}),
          // Given even when unset, so the agent does not read the process environment again on every request.
          noProxy: noProxy ?? '',
        })
      : new Agent(pool);
  // undici's fetch and the global one differ only in their type declarations (the global one is undici's).
  const forgeFetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher,
    })) as unknown as typeof fetch;
  const send: ForgeSend = async (url, init) => {
    const answer = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: init.method,
      headers: init.headers,
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: init.signal,
    });
    // Read whole before answering, as before: the deadline (`signal`) covers the body too.
    return new ReadAnswer(answer.statusCode, answer.headers, await answer.body.text());
  };
  return { fetch: forgeFetch, send, close: () => dispatcher.close() };
}
