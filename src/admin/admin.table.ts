import type { Selectable } from 'kysely';

/**
 * Per-Account provider policy (spec: "Provider policy: absent (untouched) or present with lock_version"). One row
 * per (Account, provider); its `document` holds hidden models, invalid marks, definition and removal entries as
 * canonical JSON. `lock_version` is a 32-bit integer column, so PostgreSQL itself enforces 0..2147483647.
 */
export interface ModelProviderPolicyTable {
  account_id: string;
  provider_id: string;
  lock_version: number;
  /** 1 enabled, 0 disabled. */
  enabled: number;
  /** Canonical JSON of `PolicyDocument`. */
  document: string;
  created_at: number;
  updated_at: number;
}

/**
 * Installed credential material per (Account, provider). The row outlives a cleared key so the generation keeps
 * counting; `sealed` is AES-256-GCM output naming its key id, never the key itself.
 */
export interface ModelProviderCredentialTable {
  account_id: string;
  provider_id: string;
  /** `api_key`, `oauth_tokens` or null when nothing is installed. */
  material_kind: string | null;
  sealed: string | null;
  /** Advances when the normalized material changes (install, change, clear). */
  generation: number;
  /** 1 when OAuth material must be re-authorized. */
  reauthorization_required: number;
  updated_at: number;
}

/** Runtime admission facts per (Account, provider), kept apart from the policy so they never bump its version. */
export interface ModelProviderAdmissionTable {
  account_id: string;
  provider_id: string;
  /** Epoch ms: the provider's admission-delay floor, or null. */
  unavailable_until: number | null;
  updated_at: number;
}

/** The configure-once cost unit of an Account; no row means none configured. */
export interface AccountCostUnitTable {
  account_id: string;
  cost_unit: string;
  configured_at: number;
}

/** A Human's recent model tests (the rate limit's window): a JSON array of epoch-ms start times, oldest first. */
export interface ModelTestWindowTable {
  human_id: string;
  attempts: string;
}

/** `inference_usage` (migration 20261126_0012): one row per inference request, without any prompt or output content. */
export interface InferenceUsageTable {
  id: string;
  account_id: string;
  human_id: string;
  credential_id: string;
  model: string;
  model_identity: string | null;
  workload: string;
  /** As the provider reported them; null when it did not. */
  input_tokens: number | null;
  output_tokens: number | null;
  cached_input_tokens: number | null;
  /** A decimal string in `cost_unit`; null when a price or the unit is unknown. */
  cost: string | null;
  cost_unit: string | null;
  started_at: number;
  duration_ms: number;
  outcome: string;
  /** 1 for a streamed call. */
  streamed: number;
}

/** `inference_rate_windows` (migration 20261126_0013): a credential's current minute and its requests so far. */
export interface InferenceRateWindowTable {
  credential_id: string;
  window_start: number;
  requests: number;
}

/** `inference_stream_slots` (migration 20261126_0013): a credential's held stream slots, each under an expiring lease. */
export interface InferenceStreamSlotTable {
  credential_id: string;
  slot: number;
  lease_id: string;
  expires_at: number;
}

/**
 * `model_plane_versions` (migration 20261126_0014): per Account, a counter that triggers move with every write to the
 * tables defining its model plane (policies, credentials, admission facts, cost unit).
 */
export interface ModelPlaneVersionTable {
  account_id: string;
  version: number;
}

export interface AdminTables {
  model_provider_policies: ModelProviderPolicyTable;
  model_provider_credentials: ModelProviderCredentialTable;
  model_provider_admission: ModelProviderAdmissionTable;
  account_cost_units: AccountCostUnitTable;
  model_test_windows: ModelTestWindowTable;
  inference_usage: InferenceUsageTable;
  inference_rate_windows: InferenceRateWindowTable;
  inference_stream_slots: InferenceStreamSlotTable;
  model_plane_versions: ModelPlaneVersionTable;
}

export type PolicyRow = Selectable<ModelProviderPolicyTable>;
export type CredentialMaterialRow = Selectable<ModelProviderCredentialTable>;
export type AdmissionRow = Selectable<ModelProviderAdmissionTable>;
