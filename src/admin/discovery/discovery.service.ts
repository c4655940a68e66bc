import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { CredentialService } from '../credentials/credentials.service.ts';
import { emptyDocument, type PolicyDocument } from '../policy/policy.document.ts';
import { staleObject, type PolicyService } from '../policy/policy.service.ts';
import { liveModels, type EffectiveProvider } from '../projection/projection.ts';
import { UpstreamFailure, type UpstreamClient } from '../upstream/upstream-client.ts';
import { endpointFor } from '../wires/wires.registry.ts';
import { DirectoryPagingError, type DirectoryFormat, type WireCredential } from '../wires/wire.types.ts';

/** Spec Limits: one bounded directory fetch per discovery. */
export const DISCOVERY_LIMITS = { deadlineMs: 20_000, maxPages: 16, maxRows: 1024, maxBytes: 2 * 1024 * 1024 } as const;
export type DiscoveryLimits = { [K in keyof typeof DISCOVERY_LIMITS]: number };

/** Spec Endpoints: the discovery answer, deduplicated by id in directory order. */
export interface DiscoveredModel {
  id: string;
  display_name: string | null;
}

export interface DiscoveryDeps {
  upstream: UpstreamClient;
  policy: PolicyService;
  credentials: CredentialService;
  log: Logger;
  limits?: DiscoveryLimits;
}

/** 422 for a discovery that could not complete; the message names the cause and never quotes the upstream body. */
function failed(cause: string): AppError {
  return new AppError('validation_failed', `model discovery failed: ${cause}; nothing was changed`);
}

/** A non-2xx directory answer in words, by status class only (the body may echo the request or the key). */
function statusCause(status: number): string {
  if (status >= 300 && status < 400) return `the directory answered HTTP ${status}, a redirect, which discovery does not follow`;
  if (status === 401 || status === 403) return `the directory refused the saved credential (HTTP ${status})`;
  if (status === 429) return 'the directory answered HTTP 429 (rate limited); discovery does not retry';
  return `the directory answered HTTP ${status}`;
}

function transportCause(failure: UpstreamFailure, limits: DiscoveryLimits): string {
  switch (failure.kind) {
    case 'timed_out':
      return `the directory did not answer within the ${limits.deadlineMs / 1000}-second deadline`;
    case 'body_too_large':
      return `the directory answers exceed ${limits.maxBytes % 1_048_576 === 0 ? `${limits.maxBytes / 1_048_576} MiB` : `${limits.maxBytes} bytes`}`;
    case 'url_refused':
    case 'address_refused':
      return `the provider's base_url is refused by outbound safety (${failure.message})`;
    case 'connection_failed':
      return 'the provider could not be reached, or cut its answer off';
  }
}

/**
 * Model discovery (spec Endpoints rule 4): one bounded fetch of the provider's model directory with the saved
 * connection and credential, then, only after the whole directory arrived, one policy write checked against the
 * submitted version: configured models whose effective upstream id is missing are marked invalid, listed ones are
 * cleared; hides, definitions, prices, credentials and enablement are left as they are. No lock or transaction is held
 * during network IO, nothing is retried, no redirect is followed, nothing is inferred or created.
 */
export function createDiscoveryService(deps: DiscoveryDeps) {
  const { upstream, policy, credentials, log } = deps;
  const limits = deps.limits ?? DISCOVERY_LIMITS;

  /** Every page of the directory, or a 422 naming why the directory is not complete. */
  async function fetchDirectory(baseUrl: string, directory: DirectoryFormat, credential: WireCredential): Promise<DiscoveredModel[]> {
    const deadline = performance.now() + limits.deadlineMs;
    const rows: DiscoveredModel[] = [];
    const cursors = new Set<string>();
    let bytes = 0;
    let cursor: string | null = null;
    for (let page = 1; ; page++) {
      if (page > limits.maxPages) throw failed(`the directory has more than ${limits.maxPages} pages (incomplete pagination)`);
      const remaining = Math.floor(deadline - performance.now());
      if (remaining <= 0) throw failed(transportCause(new UpstreamFailure('timed_out', 'deadline'), limits));
      let answer;
      try {
        answer = await upstream.send(directory.request(baseUrl, credential, cursor), {
          timeoutMs: remaining,
          maxBodyBytes: limits.maxBytes - bytes,
        });
      } catch (error) {
        if (error instanceof UpstreamFailure) throw failed(transportCause(error, limits));
        throw error;
      }
      if (answer.status < 200 || answer.status >= 300) throw failed(statusCause(answer.status));
      bytes += answer.body.length;
      let parsed;
      try {
        parsed = directory.parse(JSON.parse(answer.body.toString('utf8')));
      } catch (error) {
        if (error instanceof DirectoryPagingError)
          throw failed(`page ${page} of the directory says more follow without a cursor (incomplete pagination)`);
        throw failed(`page ${page} of the directory is not the directory format of this provider's api_format`);
      }
      rows.push(...parsed.models);
      if (rows.length > limits.maxRows) throw failed(`the directory lists more than ${limits.maxRows} models`);
      if (parsed.next === null) return rows;
      if (cursors.has(parsed.next)) throw failed('the directory repeats a page cursor (incomplete pagination)');
      cursors.add(parsed.next);
      cursor = parsed.next;
    }
  }

  /** The invalid marks a complete directory calls for, applied to `document` (null when nothing changes). */
  function marked(document: PolicyDocument, provider: EffectiveProvider, listed: ReadonlySet<string>): PolicyDocument | null {
    const invalid = new Set(document.invalid_models);
    for (const model of liveModels(provider)) {
      // Gemini's directory names models without the `models/` prefix an authored id may carry.
      if (listed.has(model.composed.model_id.replace(/^models\//, ''))) invalid.delete(model.ref);
      else invalid.add(model.ref);
    }
    const next = [...invalid].sort();
    const same = next.length === document.invalid_models.length && next.every((ref, i) => ref === document.invalid_models[i]);
    return same ? null : { ...document, invalid_models: next };
  }

  return {
    async discover(accountId: string, provider: EffectiveProvider, expected: number | null): Promise<DiscoveredModel[]> {
      const declaration = provider.declaration;
      if (!declaration) throw failed('the provider has no declaration');
      if (declaration.credentials === 'oauth_tokens') throw failed('discovery does not support OAuth credential lanes');
      const directory = endpointFor(declaration.api_format, 'text_generation')?.directory;
      if (!directory) throw failed(`the ${declaration.api_format} api_format has no model directory`);
      // A version that is already stale fails before any network IO; it is checked again when the result is written.
      if ((provider.policy?.lockVersion ?? null) !== expected) throw staleObject();
      const credential = credentials.wireCredential(accountId, provider);
      if (credential === undefined)
        throw failed(
          provider.credential.refusal === 'missing_credential'
            ? 'the provider has no saved credential'
            : 'the saved credential cannot be used',
        );

      const rows = await fetchDirectory(declaration.base_url, directory, credential);
      const models = new Map<string, DiscoveredModel>();
      for (const row of rows) if (!models.has(row.id)) models.set(row.id, row);
      const listed = new Set(models.keys());

      const outcome = await policy.apply(
        { accountId, providerId: provider.id },
        expected,
        // An untouched provider gets a (disabled) policy only when the directory calls for a mark.
        {
          create: () => {
            const document = marked(emptyDocument(), provider, listed);
            return document ? { enabled: false, document } : 'noop';
          },
        },
        (current) => {
          const document = marked(current.document, provider, listed);
          return document ? { enabled: current.enabled, document } : 'noop';
        },
        // The policy read before the fetch: at the submitted version it saves the re-read (one statement).
        provider.policy,
      );
      log.info(
        { account_id: accountId, provider_id: provider.id, listed: listed.size, pages_rows: rows.length, outcome },
        'model discovery finished',
      );
      return [...models.values()];
    },
  };
}
