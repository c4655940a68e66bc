import type { ComposedModel } from '../catalog/catalog.compose.ts';
import {
  PARAMETER_PRESETS,
  type ChatMessage,
  type DirectoryFormat,
  type EndpointAdapter,
  type ParameterDescriptor,
  type WireCredential,
} from './wire.types.ts';
import { parseBatchEmbeddings, parseGenerateContent } from './gemini-generate-content.answer.ts';
import { geminiStreamDecoder } from './gemini-generate-content.stream.ts';
import { splitLeadingSystem, textOf } from './prompt-format.ts';
import {
  checkTextInput,
  groupToolAnswers,
  isRecord,
  joinUrl,
  jsonRequest,
  resolveParameters,
  WITHOUT_TEXT_FEATURES,
  textProbe,
  toolCallArguments,
} from './wire.helpers.ts';
import { AppError } from '../../core/errors.ts';

function headers(credential: WireCredential): Record<string, string> {
  if (!credential) return {};
  return credential.kind === 'api_key' ? { 'x-goog-api-key': credential.key } : { authorization: `Bearer ${credential.accessToken}` };
}

/** `models/<id>` path segment; ids may already carry the `models/` prefix the directory reports. */
function modelPath(model: ComposedModel): string {
  return `models/${model.model_id.replace(/^models\//, '')}`;
}

const GENERATION_FIELD: Record<string, string> = {
  max_output_tokens: 'maxOutputTokens',
  temperature: 'temperature',
  top_p: 'topP',
  top_k: 'topK',
  seed: 'seed',
};

/**
 * Gemini matches a function's answer to its call by the function's name, which the platform's tool messages carry
 * only as the id of the call they answer (OpenAI's shape): the name is looked up among the earlier calls.
 */
function calledNames(turns: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const turn of turns) for (const call of turn.tool_calls ?? []) names.set(call.id, call.name);
  return names;
}

function functionResponse(message: ChatMessage, names: ReadonlyMap<string, string>): unknown {
  const name = message.name ?? (message.tool_call_id !== undefined ? names.get(message.tool_call_id) : undefined);
  if (name === undefined || name === '')
    throw new AppError('validation_failed', 'messages: a tool message answers no earlier tool call and names no tool');
  return { functionResponse: { name, response: { content: textOf(message) } } };
}

function parts(message: ChatMessage): unknown[] {
  const out: unknown[] =
    typeof message.content === 'string'
      ? message.content === ''
        ? []
        : [{ text: message.content }]
      : message.content.map((p) => (p.type === 'text' ? { text: p.text } : { inlineData: { mimeType: p.media_type, data: p.data } }));
  for (const call of message.tool_calls ?? []) out.push({ functionCall: { name: call.name, args: toolCallArguments(call) } });
  return out;
}

/** Gemini's model directory: `GET {base}/models?pageSize=1000[&pageToken]` → `{models:[{name, displayName}], nextPageToken}`. */
const geminiDirectory: DirectoryFormat = {
  request: (baseUrl, credential, cursor) => ({
    method: 'GET',
    url: joinUrl(baseUrl, 'models', { pageSize: '1000', ...(cursor ? { pageToken: cursor } : {}) }),
    headers: { accept: 'application/json', ...headers(credential) },
    body: null,
  }),
  parse(body) {
    if (!isRecord(body)) throw new Error('the directory is not an object');
    const list = body.models ?? [];
    if (!Array.isArray(list)) throw new Error('models is not a list');
    const models = list.map((entry: unknown) => {
      if (!isRecord(entry) || typeof entry.name !== 'string' || !entry.name.startsWith('models/'))
        throw new Error('a directory entry has no models/ name');
      return { id: entry.name.slice('models/'.length), display_name: typeof entry.displayName === 'string' ? entry.displayName : null };
    });
    const next = typeof body.nextPageToken === 'string' && body.nextPageToken !== '' ? body.nextPageToken : null;
    return { models, next };
  },
};

/**
 * Gemini's generateContent (`gemini_generate_content`, text generation): `POST {base}/models/{id}:generateContent`
 * (`:streamGenerateContent?alt=sse` when streaming). Leading instructions go to `systemInstruction`; the wire has no
 * later system turn, so later instructions travel as user turns.
 */
export const geminiGenerateContentWire: EndpointAdapter<'text_generation'> = {
  apiFormat: 'gemini_generate_content',
  workload: 'text_generation',
  credentials: ['api_key', 'oauth_tokens'],
  profile: {
    tool_calls: true,
    streaming: true,
    prompt_caching: true,
    structured_output: true,
    reasoning: true,
    generation_parameters: {
      max_output_tokens: PARAMETER_PRESETS.max_output_tokens as ParameterDescriptor,
      temperature: { kind: 'number', default: null, minimum: 0, maximum: 2, allowed_values: null },
      top_p: { kind: 'number', default: null, minimum: 0, maximum: 1, allowed_values: null },
    },
    token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' },
  },
  directory: geminiDirectory,
  probe: textProbe,
  build({ baseUrl, model, credential }, input) {
    checkTextInput(model, input);
    const params = resolveParameters(model, input.parameters);
    const { system, turns } = splitLeadingSystem(input.messages, model.capabilities.wire_options.prompt_format);
    const names = calledNames(turns);
    const generationConfig: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(params)) generationConfig[GENERATION_FIELD[name] ?? name] = value;
    if (input.output_schema) {
      generationConfig.responseMimeType = 'application/json';
      generationConfig.responseJsonSchema = input.output_schema;
    }
    if (input.reasoning?.budget_tokens !== undefined) generationConfig.thinkingConfig = { thinkingBudget: input.reasoning.budget_tokens };
    const body: Record<string, unknown> = {
      // The answers to one turn's parallel calls go back together, in one content (Gemini refuses them apart).
      contents: groupToolAnswers(
        turns,
        (m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: parts(m) }),
        (answers) => ({ role: 'user', parts: answers.map((m) => functionResponse(m, names)) }),
      ),
      ...(system !== undefined ? { systemInstruction: { parts: [{ text: system }] } } : {}),
      ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
    };
    if (input.tools?.length)
      body.tools = [
        {
          functionDeclarations: input.tools.map((t) => ({
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            parameters: t.parameters,
          })),
        },
      ];
    // Gemini's function-calling modes: AUTO, ANY (a call is required, optionally among named functions), NONE.
    if (input.tools?.length && input.tool_choice !== undefined) {
      const choice = input.tool_choice;
      body.toolConfig = {
        functionCallingConfig:
          typeof choice === 'string'
            ? { mode: choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO' }
            : { mode: 'ANY', allowedFunctionNames: [choice.name] },
      };
    }
    const url = input.stream
      ? joinUrl(baseUrl, `${modelPath(model)}:streamGenerateContent`, { alt: 'sse' })
      : joinUrl(baseUrl, `${modelPath(model)}:generateContent`);
    return jsonRequest(url, headers(credential), body);
  },
  parse: parseGenerateContent,
  streamDecoder: geminiStreamDecoder,
};

/** Gemini embeddings: `POST {base}/models/{id}:batchEmbedContents`, one request per input text. */
export const geminiEmbeddingsWire: EndpointAdapter<'embeddings'> = {
  apiFormat: 'gemini_generate_content',
  workload: 'embeddings',
  credentials: ['api_key', 'oauth_tokens'],
  profile: { ...WITHOUT_TEXT_FEATURES, token_counter: { kind: 'anchored', encoding: 'o200k_base', safety_factor: '1.3' } },
  directory: geminiDirectory,
  probe: () => ({ ok: true, input: { input: ['ok'] } }),
  build({ baseUrl, model, credential }, input) {
    const name = modelPath(model);
    const size = resolveParameters(model, input.parameters).output_dimensionality;
    return jsonRequest(joinUrl(baseUrl, `${name}:batchEmbedContents`), headers(credential), {
      requests: input.input.map((text) => ({
        model: name,
        content: { parts: [{ text }] },
        ...(size !== undefined ? { outputDimensionality: size } : {}),
      })),
    });
  },
  parse: parseBatchEmbeddings,
};
