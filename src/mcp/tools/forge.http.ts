/**
 * The outbound HTTP of the MCP server towards the forge (issue 17 item 5): one keep-alive connection pool
 * (undici) for the process, used by every tool and by the OAuth calls and token checks, which all take this
 * `fetch`. For self-hosted forges it trusts a custom CA (`FORGE_CA_CERT_PATH`, added to the public roots and to
 * `NODE_EXTRA_CA_CERTS`, whose certificates a `ca` option would otherwise replace) and goes through
 * `HTTPS_PROXY`/`HTTP_PROXY` except for `NO_PROXY` hosts.
 */
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';
import type { ForgeSend } from './forge.client.ts';

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

/** Answers whose status allows no body (`Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

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

export function createForgeHttp(settings: ForgeHttpSettings = {}): ForgeHttp {
  const env = settings.env ?? process.env;
  const ca = trustedCas(settings, env);
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy;
  const httpProxy = env.HTTP_PROXY ?? env.http_proxy;
  const noProxy = env.NO_PROXY ?? env.no_proxy;
  const dispatcher = new EnvHttpProxyAgent({
    keepAliveTimeout: 30_000,
    ...(httpsProxy ? { httpsProxy } : {}),
    ...(httpProxy ? { httpProxy } : {}),
    ...(noProxy ? { noProxy } : {}),
    // `connect` for direct connections, `requestTls` for the forge behind a proxy tunnel.
    ...(ca ? { connect: { ca }, requestTls: { ca } } : {}),
  });
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
    const text = await answer.body.text();
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else headers.set(name, value);
    }
    return new Response(NULL_BODY_STATUSES.has(answer.statusCode) ? null : text, { status: answer.statusCode, headers });
  };
  return { fetch: forgeFetch, send, close: () => dispatcher.close() };
}
