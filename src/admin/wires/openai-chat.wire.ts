import { PARAMETER_PRESETS, type ChatMessage, type EndpointAdapter, type ParameterDescriptor } from './wire.types.ts';
import { parseChatCompletion } from './openai-chat.answer.ts';
import { openAiChatStreamDecoder } from './openai-chat.stream.ts';
import { applyPromptFormat } from './prompt-format.ts';
import { bearer, checkTextInput, joinUrl, jsonRequest, openAiDirectory, resolveParameters, textProbe } from './wire.helpers.ts';

const number = (minimum: number, maximum: number): ParameterDescriptor => ({
  kind: 'number',
  default: null,
  minimum,
  maximum,
  allowed_values: null,
});

/** Platform parameter names → Chat Completions fields. `max_output_tokens` is mapped per model (see `build`). */
const FIELD: Record<string, string> = {
  temperature: 'temperature',
  top_p: 'top_p',
  presence_penalty: 'presence_penalty',
  frequency_penalty: 'frequency_penalty',
  verbosity: 'verbosity',
  seed: 'seed',
};

function chatMessage(message: ChatMessage): Record<string, unknown> {
  const content =
    typeof message.content === 'string'
      ? message.content
      : message.content.map((part) =>
          part.type === 'text'
            ? { type: 'text', text: part.text }
            : { type: 'image_url', image_url: { url: `data:${part.media_type};base64,${part.data}` } },
        );
  const out: Record<string, unknown> = { role: message.role, content };
  if (message.tool_calls?.length)
    out.tool_calls = message.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  return out;
}

/**
 * The compatible-chat adapter (`openai_chat`, text generation): `POST {base}/chat/completions`, bearer auth. It
 * serves OpenAI, Mistral, Together, Ollama, vLLM and other servers of that dialect.
 */
export const openAiChatWire: EndpointAdapter<'text_generation'> = {
  apiFormat: 'openai_chat',
  workload: 'text_generation',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: {
    tool_calls: true,
    streaming: true,
    prompt_caching: false,
    structured_output: true,
    reasoning: true,
    generation_parameters: {
      max_output_tokens: PARAMETER_PRESETS.max_output_tokens as ParameterDescriptor,
      temperature: number(0, 2),
      top_p: number(0, 1),
    },
    token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.25' },
  },
  directory: openAiDirectory,
  probe: textProbe,
  build({ baseUrl, model, credential }, input) {
    checkTextInput(model, input);
    const params = resolveParameters(model, input.parameters);
    const body: Record<string, unknown> = {
      model: model.model_id,
      messages: applyPromptFormat(input.messages, model.capabilities.wire_options.prompt_format).map(chatMessage),
    };
    for (const [name, value] of Object.entries(params)) {
      // Reasoning models refuse `max_tokens`; compatible servers without reasoning mostly know only `max_tokens`.
      if (name === 'max_output_tokens') body[model.capabilities.reasoning ? 'max_completion_tokens' : 'max_tokens'] = value;
      else body[FIELD[name] ?? name] = value;
    }
    if (input.tools?.length)
      body.tools = input.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters },
      }));
    if (input.tools?.length && input.tool_choice !== undefined)
      body.tool_choice =
        typeof input.tool_choice === 'string' ? input.tool_choice : { type: 'function', function: { name: input.tool_choice.name } };
    if (input.output_schema)
      body.response_format = { type: 'json_schema', json_schema: { name: 'output', strict: true, schema: input.output_schema } };
    if (input.reasoning?.effort) body.reasoning_effort = input.reasoning.effort;
    if (input.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return jsonRequest(joinUrl(baseUrl, 'chat/completions'), bearer(credential), body);
  },
  parse: parseChatCompletion,
  streamDecoder: openAiChatStreamDecoder,
};
