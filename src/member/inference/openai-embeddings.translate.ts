import { z } from 'zod';
import type { CompletedEmbeddings, InferenceRequest } from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { checkInput, echoableFieldName } from '../../core/validation.ts';
import { type PlatformExtras } from './openai-chat.translate.ts';

/** OpenAI Embeddings ⇄ the platform's `InferenceRequest` (issue 16 item 2). Pure functions, as for chat. */

const IGNORED_FIELDS = new Set(['user']);

export const embeddingsSchema = z.object({
  model: z.string().min(1),
  // Token-id arrays, which OpenAI also accepts, are refused: the platform counts and sends text.
  input: z.union([
    z.string().min(1, { error: 'an empty input cannot be embedded' }),
    z
      .array(z.string().min(1, { error: 'an empty input cannot be embedded' }), { error: 'expected a string or an array of strings' })
      .min(1),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).optional(),
});

export type EmbeddingEncoding = 'float' | 'base64';

export interface ParsedEmbeddingsRequest {
  request: InferenceRequest;
  encoding: EmbeddingEncoding;
}

function invalid(message: string): AppError {
  return new AppError('parameter_invalid', message);
}

/**
 * Parses an Embeddings body: `{model, input: string | string[], encoding_format?, dimensions?}`. `dimensions` goes
 * to the engine, which sends it under the name the model declares for the vector size and refuses it (400) when the
 * model declares none. Any other field but `user` (ignored) is 400 `parameter_invalid` naming the field.
 */
export function parseEmbeddingsRequest(body: unknown): ParsedEmbeddingsRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body: expected a JSON object');
  const known = embeddingsSchema.shape;
  const unknown = Object.keys(body).find((key) => !Object.hasOwn(known, key) && !IGNORED_FIELDS.has(key));
  if (unknown !== undefined) {
    const name = echoableFieldName(unknown);
    throw invalid(name ? `${name}: this field is not supported on the OpenAI-compatible surface` : 'a field of the body is not supported');
  }
  const checked = checkInput(embeddingsSchema, body, 'body');
  if (!checked.ok) throw invalid(checked.message);
  const { model, input, encoding_format, dimensions } = checked.value;
  return {
    request: {
      models: [model],
      input: {
        workload: 'embeddings',
        input: typeof input === 'string' ? [input] : input,
        ...(dimensions !== undefined ? { dimensions } : {}),
      },
    },
    encoding: encoding_format ?? 'float',
  };
}

/** A vector as OpenAI's base64 encoding: the float32 values, little-endian, back to back. */
export function base64Embedding(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

export interface EmbeddingsListObject {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  platform: PlatformExtras;
}

/**
 * Completed embeddings as OpenAI's list, in input order. OpenAI always reports usage; when the provider did not,
 * the counts are 0 (the platform never invents a usage figure).
 */
export function embeddingsListObject(answer: CompletedEmbeddings, encoding: EmbeddingEncoding): EmbeddingsListObject {
  const usage = answer.usage ?? answer.output.usage;
  const promptTokens = usage?.input_tokens ?? 0;
  return {
    object: 'list',
    data: answer.output.embeddings.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: encoding === 'base64' ? base64Embedding(vector) : vector,
    })),
    model: answer.meta.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    platform: { request_id: answer.meta.request_id, model_identity: answer.meta.model_identity, cost: answer.cost },
  };
}
