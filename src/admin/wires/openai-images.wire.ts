import { answerObject, listAt, objectAt, optionalTokenCount, stringAt, tokenCount, type Answer } from './answer.helpers.ts';
import { isRecord } from './wire.helpers.ts';
import type { EndpointAdapter, ImageOutput } from './wire.types.ts';
import { bearer, joinUrl, jsonRequest, openAiDirectory, resolveParameters, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

const FORMAT_TYPES: Readonly<Record<string, string>> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The media type of base64 image data by its first bytes (DALL·E and compatible servers name no format). */
function sniffedType(base64: string): string | undefined {
  if (base64.startsWith('iVBORw0KGgo')) return 'image/png';
  if (base64.startsWith('/9j/')) return 'image/jpeg';
  if (base64.startsWith('UklGR')) return 'image/webp';
  return undefined;
}

/**
 * `{data:[{b64_json}], output_format?, usage?}`. GPT Image models always answer base64 and report token usage;
 * older models answer a `url` unless asked otherwise, which is refused here (the platform does not fetch it).
 */
function parseImages(answer: Answer): ImageOutput {
  const body = answerObject(answer);
  const declared = typeof body.output_format === 'string' ? FORMAT_TYPES[body.output_format] : undefined;
  const images = listAt(body.data, 'data').map((entry, i) => {
    const item = objectAt(entry, `data[${i}]`);
    if (item.b64_json === undefined && typeof item.url === 'string') throw new Error(`data[${i}] is a URL, not b64_json`);
    const data = stringAt(item.b64_json, `data[${i}].b64_json`);
    return { data, media_type: declared ?? sniffedType(data) ?? 'image/png' };
  });
  if (images.length === 0) throw new Error('the answer holds no image');
  const usage = body.usage === undefined || body.usage === null ? null : objectAt(body.usage, 'usage');
  const details = usage && isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return {
    images,
    usage: usage && {
      input_tokens: tokenCount(usage.input_tokens, 'usage.input_tokens'),
      output_tokens: tokenCount(usage.output_tokens, 'usage.output_tokens'),
      cached_input_tokens: optionalTokenCount(details.cached_tokens, 'usage.input_tokens_details.cached_tokens'),
    },
  };
}

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
  parse: parseImages,
};
