import type { Dialect } from '../../src/core/db/database.ts';
import { startStandin, type Standin, type StandinDialect, type StandinOptions } from '../support/upstream/index.ts';
import { openHarness, P, type Harness } from './admin-harness.ts';

/** The shipped catalog's providers per stand-in dialect, with the declaration each is overridden with. */
const PROVIDERS = {
  openai: { id: 'openai', display_name: 'OpenAI', api_format: 'openai_chat' },
  anthropic: { id: 'anthropic', display_name: 'Anthropic', api_format: 'anthropic_messages' },
  gemini: { id: 'google', display_name: 'Google Gemini', api_format: 'gemini_generate_content' },
} as const satisfies Record<StandinDialect, { id: string; display_name: string; api_format: string }>;

/** The key each stand-in accepts; the tests look for it in responses, logs and the database. */
export const STANDIN_KEYS: Record<StandinDialect, string> = {
  openai: 'sk-standin-openai-0123456789abcdef',
  anthropic: 'sk-ant-standin-0123456789abcdef',
  gemini: 'AIzaStandinGemini0123456789abcdef',
};

export interface ProviderStandins {
  h: Harness;
  standins: Record<StandinDialect, Standin>;
  /** The provider id of the shipped catalog each stand-in plays. */
  providerOf: (dialect: StandinDialect) => string;
  /** The provider's current lock_version (null without a policy). */
  version: (providerId: string) => Promise<number | null>;
  /** Points `providerId` at `baseUrl` (a definition override), keeping its api_format and lane. */
  pointAt: (dialect: StandinDialect, baseUrl: string) => Promise<void>;
  close(): Promise<void>;
}

/**
 * A harness on the shipped catalog whose OpenAI, Anthropic and Google providers are overridden to talk to local
 * stand-ins, each with its key installed (so each is enabled with a policy). Loopback upstreams are allowed, as on
 * the embedded default; `env` can say otherwise. Recorded requests start empty.
 */
export async function openProviderStandins(
  dialect: Dialect,
  options: { env?: Record<string, string>; standin?: Partial<StandinOptions> } = {},
): Promise<ProviderStandins> {
  const h = await openHarness(dialect, { env: { PLATFORM_UPSTREAM_ALLOW_PRIVATE: 'true', ...options.env } });
  const start = (d: StandinDialect) => startStandin({ dialect: d, apiKey: STANDIN_KEYS[d], ...options.standin });
  const standins = { openai: await start('openai'), anthropic: await start('anthropic'), gemini: await start('gemini') };
  const version = async (providerId: string): Promise<number | null> => {
    const read = await h.call('GET', P(providerId), { token: h.token });
    if (read.status !== 200) throw new Error(`reading ${providerId}: ${read.status} ${read.text}`);
    return (read.body as { model_provider: { lock_version: number | null } }).model_provider.lock_version;
  };
  const pointAt = async (d: StandinDialect, baseUrl: string) => {
    const p = PROVIDERS[d];
    const definition = { display_name: p.display_name, base_url: baseUrl, api_format: p.api_format, credentials: 'api_key' };
    const put = await h.call('PUT', P(p.id, '/definition'), {
      token: h.token,
      body: { command: { definition, expected_lock_version: await version(p.id) } },
    });
    if (put.status !== 200) throw new Error(`overriding ${p.id}: ${put.status} ${put.text}`);
  };
  for (const d of Object.keys(standins) as StandinDialect[]) {
    await pointAt(d, standins[d].baseUrl);
    const key = await h.call('PUT', P(PROVIDERS[d].id, '/api_key'), { token: h.token, body: { command: { api_key: STANDIN_KEYS[d] } } });
    if (key.status !== 200) throw new Error(`installing the ${d} key: ${key.status} ${key.text}`);
    standins[d].reset();
  }
  return {
    h,
    standins,
    providerOf: (d) => PROVIDERS[d].id,
    version,
    pointAt,
    async close() {
      await Promise.all(Object.values(standins).map((s) => s.close()));
      await h.close();
    },
  };
}
