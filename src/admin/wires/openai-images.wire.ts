import type { EndpointAdapter } from './wire.types.ts';
import { bearer, joinUrl, jsonRequest, openAiDirectory, resolveParameters, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

/**
 * OpenAI-compatible image generation: `POST {base}/images/generations` with `{model, prompt, n: 1}`; declared
 * parameters (for example `size`, `quality`) are sent under their names.
 */
export const openAiImagesWire: EndpointAdapter<'image_generation'> = {
  apiFormat: 'openai_chat',
  workload: 'image_generation',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: { ...WITHOUT_TEXT_FEATURES, token_counter: null },
  directory: openAiDirectory,
  probe: () => ({ ok: true, input: { prompt: 'A plain grey square.' } }),
  build({ baseUrl, model, credential }, input) {
    return jsonRequest(joinUrl(baseUrl, 'images/generations'), bearer(credential), {
      model: model.model_id,
      prompt: input.prompt,
      n: 1,
      ...resolveParameters(model, input.parameters),
    });
  },
};
