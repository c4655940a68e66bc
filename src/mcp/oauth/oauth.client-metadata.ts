/**
 * Client ID metadata documents (forge-facts.md "What real MCP clients need": the current MCP authorization spec
 * prefers an https URL as `client_id`). The server fetches the document behind the URL and treats it as the
 * client's registration (issue 3 item 3): bounded in time and size, no redirects followed, port 443 only, no private
 * or loopback addresses (checked on the resolved address the socket uses, so DNS tricks cannot swap it; IPv6 forms
 * embedding an IPv4 address judged by that address), results cached, and uncached fetches limited per client
 * address.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { isAllowedRedirectUri, type Allowlist } from './oauth.allowlist.ts';
import { inPrefix, ipv6Bytes, lastIpv4 } from './oauth.ip.ts';
import { createWindowRateLimiter, type RateLimiter } from './oauth.rate-limit.ts';

/** Documents are small JSON objects; the draft suggests a few kilobytes. */
export const MAX_DOCUMENT_BYTES = 16 * 1024;
export const FETCH_TIMEOUT_MS = 5_000;
/** Cache lifetime bounds: the document's `Cache-Control: max-age` within [1 minute, 1 day], 1 hour when absent. */
const MIN_CACHE_MS = 60_000;
const MAX_CACHE_MS = 24 * 3_600_000;
const DEFAULT_CACHE_MS = 3_600_000;
/** A failed fetch is remembered briefly so a bad client id cannot make us hammer a host. */
const FAILURE_CACHE_MS = 60_000;
/**
 * Uncached fetches one client address may cause per window: every new client id URL costs an outgoing request, so
 * without a bound one client could make the server fetch arbitrary public URLs at its pace.
 */
export const METADATA_FETCH_LIMIT = 20;
export const METADATA_FETCH_WINDOW_MS = 10 * 60_000;

/** Addresses a metadata fetch must never reach (SSRF): private, loopback, link-local, shared, reserved. */
function privateRanges(): BlockList {
  const list = new BlockList();
  const v4: [string, number][] = [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  // The IPv6 forms that embed an IPv4 address (::/96, ::ffff:0:0/96, ::ffff:0:0:0/96, 64:ff9b::/96) are handled
  // in isPrivateAddress, by the embedded address.
  const v6: [string, number][] = [
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001::', 23],
    ['2001:db8::', 32],
    ['2002::', 16],
    ['fc00::', 7],
    ['fe80::', 10],
    ['fec0::', 10],
    ['ff00::', 8],
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}
const PRIVATE = privateRanges();

/** IPv6 ranges that carry an IPv4 address in their last 32 bits. */
const IPV4_COMPATIBLE = ipv6Bytes('::') as Uint8Array;
const IPV4_MAPPED = ipv6Bytes('::ffff:0:0') as Uint8Array;
const IPV4_TRANSLATED = ipv6Bytes('::ffff:0:0:0') as Uint8Array;
const NAT64 = ipv6Bytes('64:ff9b::') as Uint8Array;

/**
 * True when an IP address is not publicly routable. IPv6 forms embedding an IPv4 address are judged as follows:
 * IPv4-compatible `::/96` (deprecated; includes `::` and `::1`) and IPv4-translated `::ffff:0:0:0/96` are always
 * refused, IPv4-mapped `::ffff:0:0/96` and NAT64 `64:ff9b::/96` by the IPv4 address they lead to (so a DNS64
 * network still reaches public hosts, never private ones). Anything unparsable counts as private.
 */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  if (inPrefix(bytes, IPV4_COMPATIBLE, 96) || inPrefix(bytes, IPV4_TRANSLATED, 96)) return true;
  if (inPrefix(bytes, IPV4_MAPPED, 96) || inPrefix(bytes, NAT64, 96)) return PRIVATE.check(lastIpv4(bytes), 'ipv4');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return PRIVATE.check(groups.join(':'), 'ipv6');
}

export interface FetchedDocument {
  status: number;
  body: string;
  contentType: string;
  cacheControl: string;
}

export interface DocumentFetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
  /** Tests only: reach a local https server. */
  allowPrivateAddresses?: boolean;
  /** Tests only: a port other than 443 (a local test server cannot listen on 443). */
  allowAnyPort?: boolean;
  /** Tests only: trust this CA. */
  ca?: string | Buffer;
}

/** A `lookup` that refuses hostnames resolving to any private address (all answers are checked). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname: string, options: object, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses;
      if (!allowPrivate && (list.length === 0 || list.some((a) => isPrivateAddress(a.address)))) {
        return callback(Object.assign(new Error(`refused: ${hostname} resolves to a private address`), { code: 'EPRIVATE' }), '');
      }
      const all = (options as { all?: boolean }).all === true;
      if (all) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * GETs an https URL with the metadata-document guards. Redirects are returned as they are (never followed); the
 * caller treats anything but 200 as a failure.
 */
export function fetchDocument(url: URL, options: DocumentFetchOptions = {}): Promise<FetchedDocument> {
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_DOCUMENT_BYTES;
  const allowPrivate = options.allowPrivateAddresses === true;
  return new Promise((resolve, reject) => {
    if (url.protocol !== 'https:') return reject(new Error('refused: not https'));
    // Only the https port: other ports reach admin consoles and internal services on otherwise public hosts.
    if (url.port !== '' && options.allowAnyPort !== true) return reject(new Error('refused: port other than 443'));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && !allowPrivate && isPrivateAddress(host)) return reject(new Error('refused: private address'));
    const request = httpsRequest(
      {
        host,
        port: url.port === '' ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        servername: isIP(host) === 0 ? host : undefined,
        headers: { accept: 'application/json', 'user-agent': 'platform-mcp-oauth/1' },
        agent: false,
        lookup: guardedLookup(allowPrivate),
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (response) => {
        const declared = Number(response.headers['content-length'] ?? '0');
        if (declared > maxBytes) {
          request.destroy(new Error('refused: document too large'));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) request.destroy(new Error('refused: document too large'));
          else chunks.push(chunk);
        });
        response.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            contentType: String(response.headers['content-type'] ?? ''),
            cacheControl: String(response.headers['cache-control'] ?? ''),
          });
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(() => request.destroy(new Error('refused: timed out')), timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end();
  });
}

/** Whether a client id is a metadata-document URL: https with a path other than `/`. */
export function isMetadataDocumentClientId(clientId: string): boolean {
  if (!clientId.startsWith('https://')) return false;
  try {
    const url = new URL(clientId);
    return url.pathname !== '/' && url.hash === '' && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}

const documentSchema = z.object({
  client_id: z.string(),
  redirect_uris: z.array(z.string().max(2000)).min(1).max(20),
  client_name: z.string().max(200).optional(),
  client_uri: z.string().optional(),
  token_endpoint_auth_method: z.string().optional(),
});

export interface MetadataClient {
  clientId: string;
  clientName?: string;
  /** The document's redirect URIs that pass the allowlist (the others are dropped and logged). */
  redirectUris: string[];
}

export type MetadataResult =
  | { ok: true; client: MetadataClient }
  /** `retryAfterSeconds` is set when the client address used up its fetches (not cached: a later try may work). */
  | { ok: false; reason: string; retryAfterSeconds?: number };

export interface ClientMetadataResolver {
  /** Resolves a document client id; `clientAddress` pays for an uncached fetch ({@link METADATA_FETCH_LIMIT}). */
  resolve(clientId: string, clientAddress: string): Promise<MetadataResult>;
}

function cacheLifetime(cacheControl: string): number {
  if (/no-store|no-cache/i.test(cacheControl)) return MIN_CACHE_MS;
  const match = /max-age=(\d+)/i.exec(cacheControl);
  if (!match?.[1]) return DEFAULT_CACHE_MS;
  return Math.min(MAX_CACHE_MS, Math.max(MIN_CACHE_MS, Number(match[1]) * 1000));
}

/**
 * Resolves metadata-document client ids with a bounded cache (at most 1000 documents) and a per-address limit on
 * uncached fetches.
 */
export function createClientMetadataResolver(deps: {
  allowlist: Allowlist;
  clock: Clock;
  log: Logger;
  fetch?: (url: URL) => Promise<FetchedDocument>;
  /** Uncached fetches per client address (default {@link METADATA_FETCH_LIMIT} per 10 minutes). */
  fetchLimiter?: RateLimiter;
}): ClientMetadataResolver {
  const fetcher = deps.fetch ?? ((url: URL) => fetchDocument(url));
  const limiter =
    deps.fetchLimiter ?? createWindowRateLimiter({ clock: deps.clock, limit: METADATA_FETCH_LIMIT, windowMs: METADATA_FETCH_WINDOW_MS });
  const cache = new LRUCache<string, MetadataResult>({
    max: 1000,
    ttl: DEFAULT_CACHE_MS,
    ttlResolution: 0,
    perf: { now: () => deps.clock.now() },
  });
  const inflight = new Map<string, Promise<MetadataResult>>();

  const load = async (clientId: string): Promise<MetadataResult> => {
    const fail = (reason: string, detail?: Record<string, unknown>): MetadataResult => {
      deps.log.warn({ client_id: clientId, reason, ...detail }, 'client metadata document refused');
      const result: MetadataResult = { ok: false, reason };
      cache.set(clientId, result, { ttl: FAILURE_CACHE_MS });
      return result;
    };
    let document: FetchedDocument;
    try {
      document = await fetcher(new URL(clientId));
    } catch (error) {
      return fail('fetch failed', { cause: (error as Error).message });
    }
    if (document.status !== 200) return fail('fetch failed', { status: document.status });
    if (!/json/i.test(document.contentType)) return fail('not JSON', { content_type: document.contentType });
    let parsed: z.infer<typeof documentSchema>;
    try {
      parsed = documentSchema.parse(JSON.parse(document.body));
    } catch {
      return fail('invalid document');
    }
    // The document must name itself, or a document could impersonate another client.
    if (parsed.client_id !== clientId) return fail('client_id in the document differs from its URL');
    if (parsed.token_endpoint_auth_method !== undefined && parsed.token_endpoint_auth_method !== 'none') {
      return fail('only public clients (token_endpoint_auth_method "none") are supported');
    }
    const allowed = parsed.redirect_uris.filter((uri) => isAllowedRedirectUri(deps.allowlist, uri));
    const refused = parsed.redirect_uris.filter((uri) => !allowed.includes(uri));
    if (refused.length > 0)
      deps.log.warn(
        { client_id: clientId, refused_redirect_uris: refused },
        'client metadata document: redirect URIs outside the allowlist ignored',
      );
    if (allowed.length === 0) return fail('no redirect URI on the allowlist');
    const result: MetadataResult = {
      ok: true,
      client: { clientId, redirectUris: allowed, ...(parsed.client_name ? { clientName: parsed.client_name } : {}) },
    };
    cache.set(clientId, result, { ttl: cacheLifetime(document.cacheControl) });
    return result;
  };

  return {
    async resolve(clientId, clientAddress) {
      const cached = cache.get(clientId);
      if (cached) return cached;
      let pending = inflight.get(clientId);
      if (!pending) {
        const decision = limiter.hit(clientAddress);
        if (!decision.allowed) {
          deps.log.warn(
            { client_id: clientId.slice(0, 300), client_address: clientAddress },
            'client metadata document not fetched: fetch limit per client address reached',
          );
          return { ok: false, reason: 'fetch limit per client address reached', retryAfterSeconds: decision.retryAfterSeconds };
        }
        pending = load(clientId).finally(() => inflight.delete(clientId));
        inflight.set(clientId, pending);
      }
      return pending;
    },
  };
}
