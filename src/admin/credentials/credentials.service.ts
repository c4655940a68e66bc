import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../core/clock.ts';
import { decryptSecret, encryptSecret, sealedSecretKeyId, type SecretKey } from '../../core/crypto.ts';
import type { AdminTables } from '../admin.table.ts';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { emptyDocument, serializeDocument } from '../policy/policy.document.ts';
import { MAX_LOCK_VERSION, staleObject, versionExhausted } from '../policy/policy.service.ts';
import { findPolicy, insertPolicyIfAbsent, updatePolicyIfVersion, type PolicyKey } from '../policy/policy.store.ts';
import { credentialAad, type EffectiveProvider } from '../projection/projection.ts';
import type { WireCredential } from '../wires/wire.types.ts';
import {
  findCredentialRow,
  insertCredentialIfAbsent,
  listSealedPage,
  resealIfUnchanged,
  updateCredentialIfUnchanged,
} from './credentials.store.ts';

/** Largest accepted API key after trimming; real keys are far shorter. */
const MAX_API_KEY_LENGTH = 4096;

/** Thrown inside a transaction when a compare-and-set lost to a concurrent writer; the command starts over. */
class LostRace extends Error {}

/** How many times a version-less command re-reads and retries after losing a compare-and-set to another writer. */
const ATTEMPTS = 8;

/** A lone surrogate: with the `u` flag, an unpaired UTF-16 surrogate is its own code point of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;
/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators (header injection, invisible noise). */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/**
 * Normalizes an API key: surrounding whitespace is dropped (copy-paste noise). Blank keys, keys that are not
 * well-formed Unicode and keys with control characters are 400 `parameter_invalid` (spec: Endpoints rule 9);
 * messages never repeat the key, its length or any part of it.
 *
 * Well-formedness matters for the credential generation: sealing encodes the key as UTF-8, which turns a lone
 * surrogate into U+FFFD, so the stored key would never equal the submitted one and every identical PUT would
 * count as a change (spec: "Repeating the same normalized key leaves the credential generation unchanged").
 */
function normalizeApiKey(raw: string): string {
  const key = raw.trim();
  if (key === '') throw new AppError('parameter_invalid', 'command.api_key: must not be blank');
  if (key.length > MAX_API_KEY_LENGTH)
    throw new AppError('parameter_invalid', `command.api_key: too long (the limit is ${MAX_API_KEY_LENGTH} characters)`);
  if (LONE_SURROGATE.test(key))
    throw new AppError('parameter_invalid', 'command.api_key: must be well-formed Unicode (it holds an unpaired surrogate)');
  if (CONTROL.test(key)) throw new AppError('parameter_invalid', 'command.api_key: must not contain control characters');
  return key;
}

function requireApiKeyLane(provider: EffectiveProvider): void {
  const lane = provider.declaration?.credentials;
  if (lane !== 'api_key')
    throw new AppError('material_kind_conflict', `provider ${provider.id} uses the ${lane ?? 'no'} credential lane, not api_key`);
}

export interface CredentialServiceDeps {
  db: Kysely<AdminTables>;
  clock: Clock;
  log: Logger;
  secretKeys: { current: SecretKey; all: readonly SecretKey[] };
}

/**
 * API key commands and key rotation. Keys are sealed with AES-256-GCM under `PLATFORM_SECRET_KEY`, bound to their
 * (Account, provider) row; nothing here logs or returns key material, a preview, a length or a fingerprint.
 */
export function createCredentialService(deps: CredentialServiceDeps) {
  const { db, clock, log, secretKeys } = deps;
  // Opened credentials by (Account, provider, sealed value): every inference call needs its provider's credential,
  // and decrypting it (AES-GCM set-up and JSON for OAuth) was a few percent of a call's CPU. The key is the sealed
  // text itself, so any write (rotation, a new key, a reseal under a new PLATFORM_SECRET_KEY) is a different key and
  // misses: the projection read of the same request supplies the sealed value, so no replica ever uses a replaced or
  // deleted credential. Material only ever held in this process's memory, as during the call itself.
  const opened = new LRUCache<string, Exclude<WireCredential, null>>({ max: 1024 });

  function open(sealed: string, key: PolicyKey): string | undefined {
    try {
      return decryptSecret(sealed, secretKeys.all, credentialAad(key.accountId, key.providerId));
    } catch {
      return undefined;
    }
  }

  /** The wire credential sealed in `sealed` for its lane, or undefined when it does not open. */
  function openWire(sealed: string, key: PolicyKey, lane: 'api_key' | 'oauth_tokens'): Exclude<WireCredential, null> | undefined {
    const plain = open(sealed, key);
    if (plain === undefined) return undefined;
    if (lane === 'api_key') return { kind: 'api_key', key: plain };
    // OAuth material is sealed as the token set's JSON; only its access token travels.
    try {
      const tokens = JSON.parse(plain) as { access_token?: unknown };
      return typeof tokens.access_token === 'string' ? { kind: 'oauth_tokens', accessToken: tokens.access_token } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Inside the credential transaction: enable the provider, creating its policy if needed (spec: `PUT api_key` → enabled). */
  async function enableWithin(trx: Parameters<typeof findPolicy>[0], key: PolicyKey, now: number): Promise<void> {
    const policy = await findPolicy(trx, key);
    if (!policy) {
      if (!(await insertPolicyIfAbsent(trx, key, { enabled: true, document: serializeDocument(emptyDocument()) }, now)))
        throw new LostRace();
      return;
    }
    if (policy.enabled === 1) return;
    if (policy.lock_version >= MAX_LOCK_VERSION) throw versionExhausted();
    // The same optimistic idiom as the versioned commands, with the version just read under this transaction.
    if (!(await updatePolicyIfVersion(trx, key, policy.lock_version, { enabled: true, document: policy.document }, now)))
      throw new LostRace();
  }

  return {
    /**
     * `PUT …/api_key`: installs or rotates the key and enables the provider in one transaction. The credential
     * generation advances only when the normalized key differs from the stored one; saving the same key again
     * still enables the provider.
     */
    async putApiKey(accountId: string, provider: EffectiveProvider, rawKey: string): Promise<{ generation: number; changed: boolean }> {
      const apiKey = normalizeApiKey(rawKey);
      requireApiKeyLane(provider);
      const key = { accountId, providerId: provider.id };
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const row = await findCredentialRow(db, key);
        if (row?.sealed && row.material_kind !== 'api_key') {
          throw new AppError(
            'material_kind_conflict',
            `provider ${provider.id} holds ${row.material_kind ?? 'other'} material, not an API key`,
          );
        }
        const stored = row?.sealed ? open(row.sealed, key) : undefined;
        const same = stored !== undefined && stored === apiKey;
        const generation = row ? (same ? row.generation : row.generation + 1) : 1;
        // Re-seal an unchanged key only when it was sealed under an older key (keeps rotation moving).
        const sealed =
          same && row?.sealed && sealedSecretKeyId(row.sealed) === secretKeys.current.id
            ? row.sealed
            : encryptSecret(apiKey, secretKeys.current, credentialAad(accountId, provider.id));
        const now = clock.now();
        try {
          await db.transaction().execute(async (trx) => {
            // The credential write comes first: on SQLite it takes the write lock before anything is read.
            const values = { material_kind: 'api_key', sealed, generation };
            const written = row
              ? await updateCredentialIfUnchanged(trx, key, { generation: row.generation, sealed: row.sealed }, values, now)
              : await insertCredentialIfAbsent(trx, key, values, now);
            if (!written) throw new LostRace();
            await enableWithin(trx, key, now);
          });
        } catch (error) {
          if (error instanceof LostRace) continue;
          throw error;
        }
        log.info(
          { account_id: accountId, provider_id: provider.id, credential_generation: generation, changed: !same },
          'provider API key saved',
        );
        return { generation, changed: !same };
      }
      throw staleObject('the credential kept changing concurrently; try again');
    },

    /** `DELETE …/api_key`: clears the key; the policy and `enabled` stay as they are (spec: side rules). */
    async deleteApiKey(accountId: string, provider: EffectiveProvider): Promise<{ generation: number }> {
      requireApiKeyLane(provider);
      const key = { accountId, providerId: provider.id };
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const row = await findCredentialRow(db, key);
        if (!row?.sealed) throw new AppError('not_found', `provider ${provider.id} has no API key`);
        if (row.material_kind !== 'api_key')
          throw new AppError(
            'material_kind_conflict',
            `provider ${provider.id} holds ${row.material_kind ?? 'other'} material, not an API key`,
          );
        const generation = row.generation + 1;
        const cleared = await updateCredentialIfUnchanged(
          db,
          key,
          { generation: row.generation, sealed: row.sealed },
          { material_kind: null, sealed: null, generation },
          clock.now(),
        );
        if (!cleared) continue;
        log.info({ account_id: accountId, provider_id: provider.id, credential_generation: generation }, 'provider API key cleared');
        return { generation };
      }
      throw staleObject('the credential kept changing concurrently; try again');
    },

    /**
     * The credential an upstream call of `provider` carries, opened from the material its projection read: null on a `none` lane,
     * undefined when the lane needs material that is absent, of another kind or not openable. The value goes into
     * the request's headers and nowhere else (never a log, a response or an error message).
     */
    wireCredential(accountId: string, provider: EffectiveProvider): WireCredential | undefined {
      const lane = provider.declaration?.credentials;
      if (lane === 'none') return null;
      // The material read with the provider's projection (one read per request serves admission and the call).
      const { sealed, materialKind } = provider.credential;
      if (sealed === null || materialKind !== lane) return undefined;
      const cacheKey = `${accountId}\n${provider.id}\n${lane}\n${sealed}`;
      const hit = opened.get(cacheKey);
      if (hit) return hit;
      const credential = openWire(sealed, { accountId, providerId: provider.id }, lane);
      if (credential) opened.set(cacheKey, credential);
      return credential;
    },

    /**
     * Re-encrypts every stored credential that is not sealed under the current key (`platform secrets rotate`).
     * Old values decrypt with `PLATFORM_SECRET_KEY_PREVIOUS`; a value no configured key opens is counted as
     * failed and left untouched. Each row is replaced only if unchanged since it was read.
     */
    async rotate(): Promise<{ rotated: number; current: number; failed: number }> {
      const counts = { rotated: 0, current: 0, failed: 0 };
      let after: { accountId: string; providerId: string } | null = null;
      for (;;) {
        const page = await listSealedPage(db, after, 200);
        if (page.length === 0) break;
        for (const row of page) {
          const key = { accountId: row.account_id, providerId: row.provider_id };
          const sealed = row.sealed;
          if (sealed === null) continue;
          if (sealedSecretKeyId(sealed) === secretKeys.current.id) {
            counts.current++;
            continue;
          }
          const plain = open(sealed, key);
          if (plain === undefined) {
            counts.failed++;
            log.warn(
              { account_id: row.account_id, provider_id: row.provider_id },
              'a stored provider credential cannot be decrypted with the configured keys',
            );
            continue;
          }
          const next = encryptSecret(plain, secretKeys.current, credentialAad(row.account_id, row.provider_id));
          if (await resealIfUnchanged(db, key, sealed, next)) counts.rotated++;
          else counts.current++;
        }
        const last = page[page.length - 1];
        if (!last) break;
        after = { accountId: last.account_id, providerId: last.provider_id };
      }
      return counts;
    },
  };
}

export type CredentialService = ReturnType<typeof createCredentialService>;
