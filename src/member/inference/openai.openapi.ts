import { z } from 'zod';
import { ERROR_CODES } from '../../core/errors.ts';
import type { DocumentedOperation } from '../../core/http/api-route.ts';
import { chatCompletionSchema } from './openai-chat.translate.ts';
import { embeddingsSchema } from './openai-embeddings.translate.ts';

/**
 * The OpenAPI description of the OpenAI-compatible surface. Its routes speak OpenAI's shapes rather than the
 * platform's route tables, so they are described here, beside them, and added to the served document through
 * `documentOperation`; the test suite checks every response against it like any other route.
 */

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

const usageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int().optional(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }).optional(),
});

/** What the platform adds under `platform` (OpenAI clients ignore unknown keys). */
const platformExtrasSchema = z.object({
  request_id: z.string(),
  model_identity: z.string().nullable(),
  cost: z.object({ amount: z.string(), unit: z.string() }).nullable(),
});

const chatCompletionObjectSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string().describe('The model ref that answered'),
  choices: z
    .array(
      z.object({
        index: z.number().int(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          refusal: z.null(),
          tool_calls: z
            .array(
              z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) }),
            )
            .optional(),
        }),
        finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter']).nullable(),
        logprobs: z.null(),
      }),
    )
    .length(1),
  usage: usageSchema.optional(),
  platform: platformExtrasSchema,
});

const embeddingsListSchema = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({ object: z.literal('embedding'), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string()]) }),
  ),
  model: z.string(),
  usage: usageSchema,
  platform: platformExtrasSchema,
});

/** OpenAI's list of models, as the OpenAI client's `models.list()` reads it. */
export const openAiModelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })),
});

/** OpenAI's error body (`code` carries the platform's error code). */
const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: 'string' } },
    },
  },
};

/** OpenAI-shaped errors by status, as this surface answers them, naming the platform codes each status carries. */
function errors(statuses: readonly number[]): Json {
  return Object.fromEntries(
    statuses.map((status) => {
      const codes = Object.entries(ERROR_CODES)
        .filter(([, mapping]) => mapping.http === status)
        .map(([code]) => code);
      return [
        String(status),
        {
          description: `OpenAI's error shape; code ${codes.join(' or ')}`,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenAiError' } } },
        },
      ];
    }),
  );
}

const INFERENCE_ERRORS = [400, 401, 404, 409, 413, 415, 429, 500, 502, 503, 504] as const;

export function openAiOperations(base: string): DocumentedOperation[] {
  const common = { tags: ['member'], security: [{ bearer: [] }], parameters: [] };
  return [
    {
      method: 'POST',
      path: `${base}/chat/completions`,
      schemas: { OpenAiError: errorSchema },
      operation: {
        ...common,
        operationId: 'openAiChatCompletions',
        summary: 'OpenAI-compatible Chat Completions through the platform (member-plane and executor tokens)',
        requestBody: { required: true, content: { 'application/json': { schema: schemaOf(chatCompletionSchema, 'input') } } },
        responses: {
          '200': {
            description: 'A chat.completion object, or with stream true Server-Sent Events of chat.completion.chunk ending with [DONE]',
            content: { 'application/json': { schema: schemaOf(chatCompletionObjectSchema, 'output') }, 'text/event-stream': {} },
          },
          ...errors(INFERENCE_ERRORS),
        },
      },
    },
    // The OpenAI client's variant of the member model list (its headers or ?format=openai): its 200 is already one of
    // the member route's documented shapes; its errors are OpenAI's.
    { method: 'GET', path: `${base}/models`, operation: { responses: errors([400, 401, 503]) } },
    {
      method: 'POST',
      path: `${base}/embeddings`,
      operation: {
        ...common,
        operationId: 'openAiEmbeddings',
        summary: 'OpenAI-compatible Embeddings through the platform (member-plane and executor tokens)',
        requestBody: { required: true, content: { 'application/json': { schema: schemaOf(embeddingsSchema, 'input') } } },
        responses: {
          '200': {
            description: 'A list of embeddings',
            content: { 'application/json': { schema: schemaOf(embeddingsListSchema, 'output') } },
          },
          ...errors(INFERENCE_ERRORS),
        },
      },
    },
  ];
}
