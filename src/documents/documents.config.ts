import { env, parseEnv, type Env, type EnvValues } from '../core/config.ts';

const MiB = 1024 * 1024;

/** Limits of PlatformDocuments. */
const documentsEnvSpec = {
  /** Largest ciphertext of one document; larger creates are RESOURCE_EXHAUSTED (HTTP 413). */
  PLATFORM_DOCUMENT_MAX_BYTES: env.integer(8 * MiB, 1, 256 * MiB),
  /**
   * Most document bytes (ciphertext and metadata) in one ListDocuments page; a page always holds one document.
   * The default, 3 MiB, keeps a page (with the framing of up to 1000 documents) under the 4 MiB default receive
   * limit of standard gRPC clients; only a single document larger than that needs a client with a raised limit.
   */
  PLATFORM_DOCUMENT_PAGE_MAX_BYTES: env.integer(3 * MiB, 1024, 256 * MiB),
} as const;

export type DocumentsConfig = EnvValues<typeof documentsEnvSpec>;

export function parseDocumentsConfig(source: Env): DocumentsConfig {
  return parseEnv(documentsEnvSpec, source);
}
