import type { Kysely } from 'kysely';
import type { ErrorCode } from '../../core/errors.ts';
import type { AdminTables } from '../admin.table.ts';
import type { Workload } from '../catalog/wires.ts';

/** How a request ended: a success, an upstream failure, the caller gone, or the refusal's error code. */
export type UsageOutcome = 'succeeded' | 'failed' | 'aborted' | ErrorCode;

export interface UsageRecord {
  id: string;
  accountId: string;
  humanId: string;
  credentialId: string;
  model: string;
  modelIdentity: string | null;
  workload: Workload;
  inputTokens: number | null;
  outputTokens: number | null;
  cachedInputTokens: number | null;
  cost: { amount: string; unit: string } | null;
  startedAt: number;
  durationMs: number;
  outcome: UsageOutcome;
  streamed: boolean;
}

export async function insertUsage(db: Kysely<AdminTables>, record: UsageRecord): Promise<void> {
  await db
    .insertInto('inference_usage')
    .values({
      id: record.id,
      account_id: record.accountId,
      human_id: record.humanId,
      credential_id: record.credentialId,
      model: record.model,
      model_identity: record.modelIdentity,
      workload: record.workload,
      input_tokens: record.inputTokens,
      output_tokens: record.outputTokens,
      cached_input_tokens: record.cachedInputTokens,
      cost: record.cost?.amount ?? null,
      cost_unit: record.cost?.unit ?? null,
      started_at: record.startedAt,
      duration_ms: record.durationMs,
      outcome: record.outcome,
      streamed: record.streamed ? 1 : 0,
    })
    .execute();
}
