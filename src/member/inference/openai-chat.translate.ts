import { z } from 'zod';
import type {
  ChatMessage,
  CompletedTextGeneration,
  ContentPart,
  FinishReason,
  InferenceCost,
  InferenceMeta,
  InferenceRequest,
  StreamSettlement,
  TextDelta,
  ToolChoice,
  ToolSpec,
  WireUsage,
} from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { checkInput, echoableFieldName } from '../../core/validation.ts';

/**
 * OpenAI Chat Completions ⇄ the platform's `InferenceRequest` (issue 16 item 2): what existing OpenAI clients send,
 * translated to the neutral request, and the platform's answers translated back to `chat.completion` objects and
 * `chat.completion.chunk` events. Pure functions: the route owns HTTP, the engine owns admission and execution.
 */

/** Fields an OpenAI client sends that change nothing here: end-user ids, stored-completion flags, tags. */
const IGNORED_FIELDS = new Set(['user', 'store', 'metadata']);

const textPartSchema = z.object({ type: z.literal('text'), text: z.string() });
const imagePartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const textContentSchema = z.union([z.string(), z.array(textPartSchema)]);
const userContentSchema = z.union([z.string(), z.array(z.discriminatedUnion('type', [textPartSchema, imagePartSchema]))]);

const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

// Message objects are not strict: clients add fields such as `name` or `refusal: null` that carry nothing here.
const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: textContentSchema }),
  z.object({ role: z.literal('developer'), content: textContentSchema }),
  z.object({ role: z.literal('user'), content: userContentSchema }),
  z.object({
    role: z.literal('assistant'),
    content: textContentSchema.nullable().optional(),
    tool_calls: z.array(toolCallSchema).optional(),
  }),
  z.object({ role: z.literal('tool'), content: textContentSchema, tool_call_id: z.string().min(1) }),
]);

const toolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);

const optionalNumber = z.number().nullable().optional();
const tokenCount = z.number().int().positive().nullable().optional();

/** The Chat Completions body this surface accepts; every other field is refused by name (see `parseChatRequest`). */
export const chatCompletionSchema = z.object({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSchema).optional(),
  tool_choice: toolChoiceSchema.optional(),
  temperature: optionalNumber,
  top_p: optionalNumber,
  presence_penalty: optionalNumber,
  frequency_penalty: optionalNumber,
  seed: z.number().int().nullable().optional(),
  stop: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullable().optional(),
  // The neutral `reasoning.effort`: the wire checks it against the efforts the model declares.
  reasoning_effort: z.string().min(1).max(40).nullable().optional(),
  max_tokens: tokenCount,
  max_completion_tokens: tokenCount,
  n: z.literal(1, { error: 'only one choice is generated' }).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  // What OpenAI does by default, so only the defaults are accepted: the platform cannot promise anything else.
  parallel_tool_calls: z.literal(true, { error: 'only true (the default) is supported' }).optional(),
  response_format: z.object({ type: z.literal('text', { error: 'only {"type":"text"} is supported' }) }).optional(),
  logprobs: z.literal(false, { error: 'log probabilities are not supported' }).nullable().optional(),
  modalities: z.array(z.literal('text', { error: 'only text output is supported' })).optional(),
});

type ChatCompletionBody = z.infer<typeof chatCompletionSchema>;

/** OpenAI sampling fields that are platform generation parameters of the same name. */
const PARAMETER_FIELDS = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'seed', 'stop', 'verbosity'] as const;

/** A parsed request: what the engine is asked, and how the answer is to be shaped. */
export interface ParsedChatRequest {
  request: InferenceRequest;
  stream: boolean;
  includeUsage: boolean;
}

function invalid(message: string): AppError {
  return new AppError('parameter_invalid', message);
}

/** The first field this surface neither accepts nor ignores, named when it is safe to repeat (core/validation.ts). */
function refuseUnknownFields(body: Record<string, unknown>): void {
  const known = chatCompletionSchema.shape;
  const unknown = Object.keys(body).filter((key) => !Object.hasOwn(known, key) && !IGNORED_FIELDS.has(key));
  const first = unknown[0];
  if (first === undefined) return;
  const name = echoableFieldName(first);
  throw invalid(name ? `${name}: this field is not supported on the OpenAI-compatible surface` : 'a field of the body is not supported');
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)$/i;

/** `image_url` parts become image parts; only inline `data:` URLs are taken, so the server never fetches a URL. */
function imagePart(url: string, where: string): ContentPart {
  const match = DATA_URL.exec(url);
  if (!match) {
    if (/^https?:/i.test(url)) throw invalid(`${where}: only data: URLs are accepted (the platform does not fetch images)`);
    throw invalid(`${where}: expected a base64 data: URL of an image`);
  }
  return { type: 'image', media_type: (match[1] as string).toLowerCase(), data: (match[2] as string).replace(/\s+/g, '') };
}

function content(
  value: string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[],
  where: string,
): string | ContentPart[] {
  if (typeof value === 'string') return value;
  return value.map((part, i) => (part.type === 'text' ? part : imagePart(part.image_url.url, `${where}.${i}.image_url.url`)));
}

/** OpenAI's messages → neutral messages. A tool message takes its tool's name from the call it answers (Gemini needs it). */
function chatMessages(messages: ChatCompletionBody['messages']): ChatMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((message, i): ChatMessage => {
    const where = `messages.${i}.content`;
    switch (message.role) {
      case 'system':
      case 'developer':
      case 'user':
        return { role: message.role, content: content(message.content, where) };
      case 'assistant': {
        const calls = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
        for (const call of calls) toolNames.set(call.id, call.name);
        return { role: 'assistant', content: content(message.content ?? '', where), ...(calls.length > 0 ? { tool_calls: calls } : {}) };
      }
      case 'tool': {
        const name = toolNames.get(message.tool_call_id);
        return { role: 'tool', content: content(message.content, where), tool_call_id: message.tool_call_id, ...(name ? { name } : {}) };
      }
    }
  });
}

function tools(body: ChatCompletionBody): ToolSpec[] | undefined {
  if (!body.tools) return undefined;
  return body.tools.map(({ function: f }) => ({
    name: f.name,
    ...(f.description !== undefined ? { description: f.description } : {}),
    // OpenAI lets a function omit its parameters (no arguments); the neutral tool always carries a schema.
    parameters: f.parameters ?? { type: 'object', properties: {} },
  }));
}

function toolChoice(choice: ChatCompletionBody['tool_choice']): ToolChoice | undefined {
  if (choice === undefined || typeof choice === 'string') return choice;
  return { name: choice.function.name };
}

function parameters(body: ChatCompletionBody): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of PARAMETER_FIELDS) {
    const value = body[field];
    if (value !== null && value !== undefined) out[field] = value;
  }
  return out;
}

/**
 * Parses a Chat Completions body into the engine's request. Refusals are 400 `parameter_invalid` naming the field:
 * an unsupported field (`n` other than 1, `logprobs`, `audio`, …; `user`, `store` and `metadata` are ignored), an
 * image given by an http(s) URL, a malformed message. Sampling fields keep their names as platform parameters (the
 * engine refuses those the model does not declare); `max_completion_tokens`, else `max_tokens`, is `max_output_tokens`.
 */
export function parseChatRequest(body: unknown): ParsedChatRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body: expected a JSON object');
  refuseUnknownFields(body as Record<string, unknown>);
  const checked = checkInput(chatCompletionSchema, body, 'body');
  if (!checked.ok) throw invalid(checked.message);
  const parsed = checked.value;
  const stream = parsed.stream === true;
  const maxOutput = parsed.max_completion_tokens ?? parsed.max_tokens;
  const tooling = tools(parsed);
  const choice = toolChoice(parsed.tool_choice);
  const params = parameters(parsed);
  return {
    request: {
      models: [parsed.model],
      input: {
        workload: 'text_generation',
        messages: chatMessages(parsed.messages),
        ...(tooling ? { tools: tooling } : {}),
        ...(choice !== undefined ? { tool_choice: choice } : {}),
        ...(Object.keys(params).length > 0 ? { parameters: params } : {}),
        ...(maxOutput !== null && maxOutput !== undefined ? { max_output_tokens: maxOutput } : {}),
        ...(parsed.reasoning_effort !== null && parsed.reasoning_effort !== undefined
          ? { reasoning: { effort: parsed.reasoning_effort } }
          : {}),
        stream,
      },
    },
    stream,
    includeUsage: stream && parsed.stream_options?.include_usage === true,
  };
}

// ---- answers ----

/** OpenAI's finish reasons; the platform's `other` (a stop the provider named otherwise) reads as a plain stop. */
type OpenAiFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

function finishReason(reason: FinishReason): OpenAiFinishReason {
  return reason === 'other' ? 'stop' : reason;
}

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

/** Provider-reported usage in OpenAI's names; cached tokens only when the provider said. */
export function openAiUsage(usage: WireUsage): OpenAiUsage {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...(usage.cached_input_tokens !== null ? { prompt_tokens_details: { cached_tokens: usage.cached_input_tokens } } : {}),
  };
}

/** What the platform adds to OpenAI's shapes, under a key OpenAI clients ignore. */
export interface PlatformExtras {
  request_id: string;
  model_identity: string | null;
  cost: InferenceCost | null;
}

function extras(meta: InferenceMeta, cost: InferenceCost | null): PlatformExtras {
  return { request_id: meta.request_id, model_identity: meta.model_identity, cost };
}

interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletionObject {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: OpenAiToolCall[] };
      finish_reason: OpenAiFinishReason;
      logprobs: null;
    },
  ];
  usage?: OpenAiUsage;
  platform: PlatformExtras;
}

/** The completion id OpenAI clients show: derived from the usage record's id, so both name the same call. */
export function completionId(meta: InferenceMeta): string {
  return `chatcmpl-${meta.request_id}`;
}

/** A completed generation as a `chat.completion` object; `created` in Unix seconds. */
export function chatCompletionObject(answer: CompletedTextGeneration, createdSeconds: number): ChatCompletionObject {
  const { output, meta } = answer;
  const calls = output.tool_calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));
  const usage = answer.usage ?? output.usage;
  return {
    id: completionId(meta),
    object: 'chat.completion',
    created: createdSeconds,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          // OpenAI answers null content when the model only called tools.
          content: output.text === '' && calls.length > 0 ? null : output.text,
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        finish_reason: finishReason(output.finish_reason),
        logprobs: null,
      },
    ],
    ...(usage ? { usage: openAiUsage(usage) } : {}),
    platform: extras(meta, answer.cost),
  };
}

interface ChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function: { name?: string; arguments: string };
}

interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  tool_calls?: ChunkToolCall[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: ChunkDelta; finish_reason: OpenAiFinishReason | null; logprobs: null }[];
  /** Present (null until the last chunk) only when the client asked for `stream_options.include_usage`. */
  usage?: OpenAiUsage | null;
  platform?: PlatformExtras;
}

/**
 * Turns a streamed generation into `chat.completion.chunk` objects, in OpenAI's order: a role chunk first, content
 * and tool-call deltas as they come, then at the end a chunk with the finish reason and, when the client asked for
 * `include_usage`, a chunk with empty choices carrying the usage. The platform extras ride on the last chunk. The
 * route writes each as an SSE `data:` line and ends with `data: [DONE]`.
 */
export function createChunkTranslator(options: { meta: InferenceMeta; createdSeconds: number; includeUsage: boolean }) {
  const { meta, createdSeconds, includeUsage } = options;
  const id = completionId(meta);
  let finish: FinishReason | null = null;
  let streamedUsage: WireUsage | null = null;
  const chunk = (delta: ChunkDelta, reason: OpenAiFinishReason | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: createdSeconds,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: reason, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return {
    /** The opening chunk: the assistant role with empty content, as OpenAI sends it. */
    start(): ChatCompletionChunk {
      return chunk({ role: 'assistant', content: '' });
    },

    /** One neutral delta: a chunk to send, or null for deltas that are held for the end (finish, usage). */
    delta(delta: TextDelta): ChatCompletionChunk | null {
      switch (delta.type) {
        case 'text':
          return delta.text === '' ? null : chunk({ content: delta.text });
        case 'tool_call': {
          const call: ChunkToolCall = {
            index: delta.index,
            ...(delta.id !== undefined ? { id: delta.id, type: 'function' as const } : {}),
            function: { ...(delta.name !== undefined ? { name: delta.name } : {}), arguments: delta.arguments },
          };
          return chunk({ tool_calls: [call] });
        }
        case 'finish':
          finish = delta.finish_reason;
          return null;
        case 'usage':
          streamedUsage = delta.usage;
          return null;
      }
    },

    /** The closing chunks once the call settled: the settlement's usage is authoritative over streamed deltas. */
    end(settlement: StreamSettlement): ChatCompletionChunk[] {
      const reason = finishReason(settlement.finish_reason ?? finish ?? 'stop');
      const platform = extras(meta, settlement.cost);
      if (!includeUsage) return [{ ...chunk({}, reason), platform }];
      const usage = settlement.usage ?? streamedUsage;
      return [
        chunk({}, reason),
        {
          id,
          object: 'chat.completion.chunk',
          created: createdSeconds,
          model: meta.model,
          choices: [],
          usage: usage ? openAiUsage(usage) : null,
          platform,
        },
      ];
    },
  };
}
