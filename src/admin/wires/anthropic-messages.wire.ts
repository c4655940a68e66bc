import type { ComposedModel } from '../catalog/catalog.compose.ts';
import {
  DirectoryPagingError,
  PARAMETER_PRESETS,
  type ChatMessage,
  type EndpointAdapter,
  type ParameterDescriptor,
  type WireCredential,
} from './wire.types.ts';
import { parseMessage } from './anthropic-messages.answer.ts';
import { anthropicMessagesStreamDecoder } from './anthropic-messages.stream.ts';
import { splitLeadingSystem, textOf } from './prompt-format.ts';
import {
  checkTextInput,
  groupToolAnswers,
  isRecord,
  joinUrl,
  jsonRequest,
  resolveParameters,
  textProbe,
  toolCallArguments,
} from './wire.helpers.ts';

const ANTHROPIC_VERSION = '2023-06-01';
/** The Messages API requires `max_tokens`; used when the call sets none and the model declares no output limit. */
const FALLBACK_MAX_TOKENS = 4096;

function headers(credential: WireCredential): Record<string, string> {
  const auth: Record<string, string> = !credential
    ? {}
    : credential.kind === 'api_key'
      ? { 'x-api-key': credential.key }
      : { authorization: `Bearer ${credential.accessToken}` };
  return { 'anthropic-version': ANTHROPIC_VERSION, ...auth };
}

function blocks(message: ChatMessage): unknown[] {
  if (message.role === 'tool') return [{ type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content: textOf(message) }];
  const parts =
    typeof message.content === 'string'
      ? message.content === ''
        ? []
        : [{ type: 'text', text: message.content }]
      : message.content.map((p) =>
          p.type === 'text'
            ? { type: 'text', text: p.text }
            : { type: 'image', source: { type: 'base64', media_type: p.media_type, data: p.data } },
        );
  for (const call of message.tool_calls ?? [])
    parts.push({ type: 'tool_use', id: call.id, name: call.name, input: toolCallArguments(call) } as never);
  return parts;
}

/** The `max_tokens` sent when the call sets none: the model's output limit, else a fixed budget. */
function defaultMaxTokens(model: ComposedModel): number {
  return model.capabilities.limits.output_tokens ?? FALLBACK_MAX_TOKENS;
}

/** Anthropic's Messages API (`anthropic_messages`, text generation): `POST {base}/messages`. */
export const anthropicMessagesWire: EndpointAdapter<'text_generation'> = {
  apiFormat: 'anthropic_messages',
  workload: 'text_generation',
  credentials: ['api_key', 'oauth_tokens'],
  profile: {
    tool_calls: true,
    streaming: true,
    prompt_caching: true,
    structured_output: false,
    reasoning: true,
    generation_parameters: {
      max_output_tokens: PARAMETER_PRESETS.max_output_tokens as ParameterDescriptor,
      temperature: { kind: 'number', default: null, minimum: 0, maximum: 1, allowed_values: null },
      top_p: { kind: 'number', default: null, minimum: 0, maximum: 1, allowed_values: null },
      top_k: { kind: 'integer', default: null, minimum: 1, maximum: null, allowed_values: null },
    },
    token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.3' },
  },
  directory: {
    request: (baseUrl, credential, cursor) => ({
      method: 'GET',
      url: joinUrl(baseUrl, 'models', { limit: '1000', ...(cursor ? { after_id: cursor } : {}) }),
      headers: { accept: 'application/json', ...headers(credential) },
      body: null,
    }),
    parse(body) {
      if (!isRecord(body) || !Array.isArray(body.data)) throw new Error('the directory is not {"data":[…]}');
      const models = body.data.map((entry: unknown) => {
        if (!isRecord(entry) || typeof entry.id !== 'string' || entry.id === '') throw new Error('a directory entry has no id');
        return { id: entry.id, display_name: typeof entry.display_name === 'string' ? entry.display_name : null };
      });
      const next = body.has_more === true ? (typeof body.last_id === 'string' ? body.last_id : null) : null;
      if (body.has_more === true && next === null) throw new DirectoryPagingError('has_more without last_id');
      return { models, next };
    },
  },
  probe: textProbe,
  build({ baseUrl, model, credential }, input) {
    checkTextInput(model, input);
    const params = resolveParameters(model, input.parameters);
    const { system, turns } = splitLeadingSystem(input.messages, model.capabilities.wire_options.prompt_format);
    const body: Record<string, unknown> = {
      model: model.model_id,
      max_tokens: typeof params.max_output_tokens === 'number' ? params.max_output_tokens : defaultMaxTokens(model),
      ...(system !== undefined ? { system } : {}),
      messages: groupToolAnswers(
        turns,
        (m) => ({ role: m.role === 'assistant' ? 'assistant' : 'user', content: blocks(m) }),
        (answers) => ({ role: 'user', content: answers.flatMap(blocks) }),
      ),
    };
    for (const [name, value] of Object.entries(params)) if (name !== 'max_output_tokens') body[name] = value;
    if (input.tools?.length)
      body.tools = input.tools.map((t) => ({
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        input_schema: t.parameters,
      }));
    // Anthropic's names: `any` is OpenAI's `required`, `tool` with a name forces that one.
    if (input.tools?.length && input.tool_choice !== undefined)
      body.tool_choice =
        typeof input.tool_choice === 'string'
          ? { type: input.tool_choice === 'required' ? 'any' : input.tool_choice }
          : { type: 'tool', name: input.tool_choice.name };
    if (input.reasoning?.budget_tokens !== undefined) body.thinking = { type: 'enabled', budget_tokens: input.reasoning.budget_tokens };
    if (input.stream) body.stream = true;
    return jsonRequest(joinUrl(baseUrl, 'messages'), headers(credential), body);
  },
  parse: parseMessage,
  streamDecoder: anthropicMessagesStreamDecoder,
  defaultMaxOutput: defaultMaxTokens,
};
