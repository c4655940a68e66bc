import type { EndpointAdapter } from './wire.types.ts';
import { bearer, joinUrl, jsonRequest, openAiDirectory, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

/** OpenAI-compatible embeddings: `POST {base}/embeddings` with `{model, input}`. */
export const openAiEmbeddingsWire: EndpointAdapter<'embeddings'> = {
  apiFormat: 'openai_chat',
  workload: 'embeddings',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: { ...WITHOUT_TEXT_FEATURES, token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.25' } },
  directory: openAiDirectory,
  probe: () => ({ ok: true, input: { input: ['ok'] } }),
  build({ baseUrl, model, credential }, input) {
    return jsonRequest(joinUrl(baseUrl, 'embeddings'), bearer(credential), {
      model: model.model_id,
      input: input.input,
      encoding_format: 'float',
    });
  },
};
