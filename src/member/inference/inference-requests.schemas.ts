import { z } from 'zod';

/**
 * The native InferenceRequest (issue 16 item 1): one model ref or an ordered list of candidates (the selector), the
 * workload's input, and for text generation the messages, tools, generation parameters, `max_output_tokens` and
 * `stream`. Field checks here are about shape; what the model accepts is decided by the engine (parameters undeclared
 * by the model's table are 400 there, naming the parameter).
 */
/**
 * Largest inference request body (the native route, Chat Completions and embeddings). Images travel inline as base64,
 * so a chat with a few photos outgrows the JSON APIs' 1 MiB (`PLATFORM_BODY_LIMIT_BYTES`); 32 MiB is Anthropic's
 * Messages request limit, above OpenAI's and Gemini's per-image limits.
 */
export const INFERENCE_BODY_LIMIT_BYTES = 32 * 1024 * 1024;

const refSchema = z.string().min(3).max(400);

const contentPartSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({
    type: z.literal('image'),
    media_type: z.string().regex(/^image\/[a-z0-9.+-]+$/),
    data: z.string().describe('base64'),
  }),
]);

const toolCallSchema = z.strictObject({ id: z.string().min(1).max(200), name: z.string().min(1).max(200), arguments: z.string() });

const messageSchema = z.strictObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(contentPartSchema)]),
  tool_calls: z.array(toolCallSchema).max(128).optional(),
  tool_call_id: z.string().min(1).max(200).optional(),
  name: z.string().min(1).max(200).optional(),
});

const toolSchema = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(4000).optional(),
  parameters: z.record(z.string(), z.unknown()),
});

const toolChoiceSchema = z.union([z.enum(['auto', 'none', 'required']), z.strictObject({ name: z.string().min(1).max(200) })]);

export const inferenceRequestBodySchema = z
  .strictObject({
    model: refSchema.optional().describe('One model ref: an explicit choice'),
    models: z.array(refSchema).min(1).max(16).optional().describe('Candidate refs in order: the first admissible one is used'),
    workload: z.enum(['text_generation', 'embeddings']).default('text_generation'),
    messages: z.array(messageSchema).min(1).max(10_000).optional(),
    tools: z.array(toolSchema).max(128).optional(),
    tool_choice: toolChoiceSchema.optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    reasoning: z
      .strictObject({ effort: z.string().min(1).max(40) })
      .optional()
      .describe("One of the efforts the model's reasoning declaration lists"),
    max_output_tokens: z.number().int().min(1).optional(),
    stream: z.boolean().default(false),
    input: z
      .union([z.string(), z.array(z.string()).min(1).max(2048)])
      .optional()
      .describe('Embeddings: the texts'),
  })
  .superRefine((body, ctx) => {
    if ((body.model === undefined) === (body.models === undefined))
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'give either model or models' });
    if (body.workload === 'text_generation' && body.messages === undefined)
      ctx.addIssue({ code: 'custom', path: ['messages'], message: 'text generation needs messages' });
    if (body.workload === 'embeddings') {
      if (body.input === undefined) ctx.addIssue({ code: 'custom', path: ['input'], message: 'embeddings need input' });
      for (const field of ['messages', 'tools', 'tool_choice', 'max_output_tokens', 'reasoning'] as const)
        if (body[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'not used by embeddings' });
      if (body.stream) ctx.addIssue({ code: 'custom', path: ['stream'], message: 'embeddings do not stream' });
    }
  });

export type InferenceRequestBody = z.infer<typeof inferenceRequestBodySchema>;

const usageSchema = z
  .object({ input_tokens: z.number().int(), output_tokens: z.number().int(), cached_input_tokens: z.number().int().nullable() })
  .nullable()
  .describe('As the provider reported it; null when it did not');

const costSchema = z
  .object({ amount: z.string(), unit: z.string() })
  .nullable()
  .describe("Estimated from the catalog prices in the Account's cost unit; null when a price or the unit is unknown");

/** The JSON answer; a streamed call answers `text/event-stream` with `start`, `delta`, `done` (or `error`) events instead. */
export const inferenceResponseSchema = z.object({
  request_id: z.string(),
  model: z.string(),
  model_identity: z.string().nullable(),
  workload: z.enum(['text_generation', 'embeddings']),
  text: z.string().optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  finish_reason: z.enum(['stop', 'length', 'tool_calls', 'content_filter', 'other']).optional(),
  embeddings: z.array(z.array(z.number())).optional(),
  usage: usageSchema,
  cost: costSchema,
});
