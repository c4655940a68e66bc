import { AppError } from '../../core/errors.ts';
import { echoableFieldName } from '../../core/validation.ts';
import type { ComposedModel } from '../catalog/catalog.compose.ts';
import {
  DirectoryPagingError,
  type DirectoryFormat,
  type DirectoryPage,
  type ChatMessage,
  type ProbeInput,
  type TextGenerationInput,
  type UpstreamRequest,
  type WireCredential,
  type WireProfile,
} from './wire.types.ts';

const MAX_JOINED_URLS = 1024;
const joinedUrls = new Map<string, string>();

/** `base` + `path`, keeping the base's own path (`https://h/v1` + `/models` → `https://h/v1/models`). */
export function joinUrl(base: string, path: string, query?: Record<string, string>): string {
  if (query === undefined || Object.keys(query).length === 0) {
    // Every inference call joins its provider's base URL with the same path; parsing two URLs each time showed in
    // the gateway's profile. Bounded: base URLs are per provider definition.
    const key = `${base}\n${path}`;
    let joined = joinedUrls.get(key);
    if (joined === undefined) {
      joined = parseJoin(base, path, undefined);
      if (joinedUrls.size >= MAX_JOINED_URLS) joinedUrls.clear();
      joinedUrls.set(key, joined);
    }
    return joined;
  }
  return parseJoin(base, path, query);
}

function parseJoin(base: string, path: string, query: Record<string, string> | undefined): string {
  const url = new URL(base.endsWith('/') ? base : `${base}/`);
  const joined = new URL(path.replace(/^\//, ''), url);
  for (const [k, v] of Object.entries(query ?? {})) joined.searchParams.set(k, v);
  return joined.toString();
}

/**
 * The features only text generation offers, all off, with an empty parameter table: what the embeddings, image,
 * speech and transcription endpoints share; each adds its token counter (and speech its streaming).
 */
export const WITHOUT_TEXT_FEATURES: Omit<WireProfile, 'token_counter'> = {
  tool_calls: false,
  streaming: false,
  prompt_caching: false,
  structured_output: false,
  reasoning: false,
  generation_parameters: Object.freeze({}),
};

function invalid(message: string): AppError {
  return new AppError('validation_failed', message);
}

/**
 * Checks call parameters against the model's composed descriptor table: an undeclared parameter, a value of another
 * kind, out of bounds or not allowed is refused; declared defaults fill what the call omits (null defaults add
 * nothing). Returns the values to send, by platform name.
 */
export function resolveParameters(model: ComposedModel, given: Record<string, unknown> = {}): Record<string, unknown> {
  const table = model.capabilities.generation_parameters;
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(table, name))
      throw invalid(`parameters.${echoableFieldName(name) ?? '<field>'}: the model declares no such generation parameter`);
  }
  for (const [name, d] of Object.entries(table)) {
    const value = Object.hasOwn(given, name) ? given[name] : d.default;
    if (value === null || value === undefined) continue;
    const where = `parameters.${name}`;
    if (d.kind === 'boolean' ? typeof value !== 'boolean' : d.kind === 'string' ? typeof value !== 'string' : typeof value !== 'number')
      throw invalid(`${where}: expected ${d.kind}`);
    if (d.kind === 'integer' && !Number.isInteger(value)) throw invalid(`${where}: expected an integer`);
    if (typeof value === 'number' && ((d.minimum !== null && value < d.minimum) || (d.maximum !== null && value > d.maximum)))
      throw invalid(`${where}: out of bounds`);
    if (d.allowed_values !== null && !d.allowed_values.includes(value as string | number))
      throw invalid(`${where}: not one of ${d.allowed_values.join(', ')}`);
    out[name] = value;
  }
  return out;
}

/** Refuses text-generation input the composed model does not offer (tools, streaming, structured output, reasoning). */
export function checkTextInput(model: ComposedModel, input: TextGenerationInput): void {
  const caps = model.capabilities;
  if (input.tools?.length && !caps.tool_calls) throw invalid('tools: the model does not support tool calls');
  if (input.stream && !caps.streaming) throw invalid('stream: the model does not support streaming');
  if (input.output_schema && !caps.structured_output) throw invalid('output_schema: the model does not support structured output');
  if (input.reasoning) {
    const declared = caps.reasoning;
    if (!declared) throw invalid('reasoning: the model declares no reasoning support');
    if (input.reasoning.effort !== undefined && !declared.efforts?.includes(input.reasoning.effort))
      throw invalid('reasoning.effort: not a declared effort');
    const budget = input.reasoning.budget_tokens;
    if (
      budget !== undefined &&
      (!declared.budget_tokens || budget < declared.budget_tokens.minimum || budget > declared.budget_tokens.maximum)
    ) {
      throw invalid('reasoning.budget_tokens: outside the declared budget');
    }
  }
  checkToolCallArguments(input.messages);
  const kinds = new Set(caps.input_modalities);
  for (const message of input.messages) {
    if (typeof message.content !== 'string' && message.content.some((p) => p.type === 'image') && !kinds.has('image'))
      throw invalid('messages: the model does not accept image input');
  }
}

/** Whether `text` is the JSON text of an object (what a tool call's arguments must be on every wire). */
function isObjectJson(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * Refuses history whose tool calls carry arguments that are not a JSON object (a call cut off by `length` is the
 * usual source). Anthropic and Gemini take the arguments as objects, so the wires parse them; checked here first, so
 * a broken one is the caller's 422 naming where it is, never a failure whose message would quote the text.
 */
function checkToolCallArguments(messages: readonly ChatMessage[]): void {
  messages.forEach((message, m) =>
    message.tool_calls?.forEach((call, c) => {
      if (!isObjectJson(call.arguments)) throw invalid(`messages[${m}].tool_calls[${c}].arguments: not the JSON text of an object`);
    }),
  );
}

/** A tool call's arguments as the object they hold (checked by checkTextInput before a wire builds its body). */
export function toolCallArguments(call: { arguments: string }): Record<string, unknown> {
  return JSON.parse(call.arguments) as Record<string, unknown>;
}

/**
 * The turns with each run of consecutive tool messages as one message holding all their answers: Gemini requires the
 * answers to a turn's parallel calls in one content, and Anthropic wants all tool results in one user message.
 * `merge` makes the wire's parts of the run; other turns pass through one by one.
 */
export function groupToolAnswers<T>(
  turns: readonly ChatMessage[],
  single: (message: ChatMessage) => T,
  merge: (run: readonly ChatMessage[]) => T,
): T[] {
  const out: T[] = [];
  for (let i = 0; i < turns.length;) {
    if (turns[i]!.role !== 'tool') {
      out.push(single(turns[i]!));
      i++;
      continue;
    }
    let end = i;
    while (end < turns.length && turns[end]!.role === 'tool') end++;
    out.push(merge(turns.slice(i, end)));
    i = end;
  }
  return out;
}

export function jsonRequest(url: string, headers: Record<string, string>, body: unknown): UpstreamRequest {
  return { method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** `Authorization: Bearer` for an API key or an OAuth access token; nothing for the `none` lane. */
export function bearer(credential: WireCredential): Record<string, string> {
  if (!credential) return {};
  return { authorization: `Bearer ${credential.kind === 'api_key' ? credential.key : credential.accessToken}` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The OpenAI-compatible directory: `GET {base}/models` → `{data:[{id}]}`. OpenAI and most local servers answer it in
 * one page; servers that page it say `has_more` and take the last id back as `after` (the list-endpoint convention of
 * OpenAI's other APIs), which is followed.
 */
export const openAiDirectory: DirectoryFormat = {
  request: (baseUrl, credential, cursor) => ({
    method: 'GET',
    url: joinUrl(baseUrl, 'models', cursor ? { after: cursor } : undefined),
    headers: { accept: 'application/json', ...bearer(credential) },
    body: null,
  }),
  parse(body: unknown): DirectoryPage {
    if (!isRecord(body) || !Array.isArray(body.data)) throw new Error('the directory is not {"data":[…]}');
    const models = body.data.map((entry: unknown) => {
      if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id === '') throw new Error('a directory entry has no id');
      return { id: entry.id, display_name: null };
    });
    if (body.has_more !== true) return { models, next: null };
    const next = typeof body.last_id === 'string' && body.last_id !== '' ? body.last_id : models.at(-1)?.id;
    if (next === undefined) throw new DirectoryPagingError('has_more without a last id');
    return { models, next };
  },
};

/**
 * The model test's fixed chat probe: one short user line and a budget of 16 output tokens when the model declares
 * `max_output_tokens` (a budget of 1 is refused by some current models; each wire names the field as its model
 * needs, such as `max_completion_tokens` for OpenAI reasoning models).
 */
export function textProbe(model: ComposedModel): ProbeInput<'text_generation'> {
  return {
    ok: true,
    input: {
      messages: [{ role: 'user', content: 'Reply with the word ok.' }],
      parameters: 'max_output_tokens' in model.capabilities.generation_parameters ? { max_output_tokens: 16 } : {},
    },
  };
}

export { isRecord };
