/**
 * Client registrations (spec "Stored records": a virtual client id and the client's redirect URIs). The forge knows
 * one application; every MCP client gets a virtual id here (forge-facts.md: a forge MCP server registers clients
 * locally in front of one pre-registered application).
 *
 * - Stateful mode: a UUID in a bounded LRU of this process (at most 1000 registrations).
 * - Stateless mode: the registration (with its UUID) sealed into the client id itself, so any replica reads it.
 * - A client id that is an https URL is a client ID metadata document (oauth.client-metadata.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';
import { isMetadataDocumentClientId, type ClientMetadataResolver } from './oauth.client-metadata.ts';
import type { Sealer } from './oauth.seal.ts';
import { createBoundedStore, MEMORY_STORE_MAX } from './oauth.stores.ts';

export interface RegisteredClient {
  clientId: string;
  clientName?: string;
  redirectUris: string[];
  /** Epoch seconds. */
  issuedAt: number;
  kind: 'virtual' | 'metadata_document';
}

export interface NewRegistration {
  redirectUris: string[];
  clientName?: string;
}

/** A failure carries `retryAfterSeconds` when the client address may not cause another metadata fetch yet. */
export type ResolvedClient = { ok: true; client: RegisteredClient } | { ok: false; reason: string; retryAfterSeconds?: number };

export interface ClientRegistry {
  /** True when registrations are sealed into the client id (stateless mode), which bounds their size. */
  readonly sealed: boolean;
  register(input: NewRegistration): Promise<RegisteredClient>;
  /** Finds a client; `clientAddress` is who asks (it pays for a metadata-document fetch). */
  resolve(clientId: string, clientAddress: string): Promise<ResolvedClient>;
}

/**
 * Longest total of a sealed registration's redirect URIs (UTF-8 bytes). The sealed client id travels in every
 * `/authorize` URL (with the redirect URI again, the state and the challenge): with 2 KiB of callbacks it stays near
 * 3.5 kB, well inside URL limits of browsers and proxies and inside what unsealing accepts.
 */
export const MAX_SEALED_REDIRECT_URIS_BYTES = 2048;

/** Registrations older than this stop opening in stateless mode; clients register again (RFC 7591 allows expiry). */
const SEALED_CLIENT_TTL_MS = 365 * 24 * 3_600_000;

interface SealedClient {
  id: string;
  ru: string[];
  n?: string;
  iat: number;
}

/** A registry in memory (stateful) or sealed (stateless), plus metadata-document client ids. */
export function createClientRegistry(deps: {
  clock: Clock;
  metadata: ClientMetadataResolver;
  /** Present in stateless mode. */
  sealer?: Sealer;
  max?: number;
}): ClientRegistry & { size(): number } {
  const store = createBoundedStore<RegisteredClient>({ clock: deps.clock, max: deps.max ?? MEMORY_STORE_MAX, ttlMs: 0 });
  return {
    sealed: deps.sealer !== undefined,
    size: () => store.cache.size,
    async register(input) {
      const issuedAt = Math.floor(deps.clock.now() / 1000);
      const uuid = randomUUID();
      if (deps.sealer) {
        const sealed: SealedClient = {
          id: uuid,
          ru: input.redirectUris,
          iat: issuedAt,
          ...(input.clientName ? { n: input.clientName } : {}),
        };
        const clientId = deps.sealer.seal('client', sealed, SEALED_CLIENT_TTL_MS);
        return {
          clientId,
          redirectUris: input.redirectUris,
          issuedAt,
          kind: 'virtual',
          ...(input.clientName ? { clientName: input.clientName } : {}),
        };
      }
      const client: RegisteredClient = {
        clientId: uuid,
        redirectUris: input.redirectUris,
        issuedAt,
        kind: 'virtual',
        ...(input.clientName ? { clientName: input.clientName } : {}),
      };
      store.put(uuid, client);
      return client;
    },
    async resolve(clientId, clientAddress) {
      if (typeof clientId !== 'string' || clientId.length === 0) return { ok: false, reason: 'missing client_id' };
      if (isMetadataDocumentClientId(clientId)) {
        const result = await deps.metadata.resolve(clientId, clientAddress);
        if (!result.ok) {
          return {
            ok: false,
            reason: `metadata document: ${result.reason}`,
            ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
          };
        }
        return {
          ok: true,
          client: {
            clientId,
            redirectUris: result.client.redirectUris,
            issuedAt: 0,
            kind: 'metadata_document',
            ...(result.client.clientName ? { clientName: result.client.clientName } : {}),
          },
        };
      }
      if (deps.sealer) {
        const opened = deps.sealer.unseal<SealedClient>('client', clientId);
        if (!opened.ok) return { ok: false, reason: `sealed client id: ${opened.reason}` };
        const v = opened.value;
        if (!Array.isArray(v.ru) || !v.ru.every((u) => typeof u === 'string')) return { ok: false, reason: 'sealed client id: malformed' };
        return {
          ok: true,
          client: { clientId, redirectUris: v.ru, issuedAt: v.iat, kind: 'virtual', ...(v.n ? { clientName: v.n } : {}) },
        };
      }
      const client = store.cache.get(clientId);
      return client ? { ok: true, client } : { ok: false, reason: 'unknown client_id (not registered on this server, or evicted)' };
    },
  };
}
