import { answerObject, listAt, objectAt, tokenCount, type Answer } from './answer.helpers.ts';
import type { EmbeddingsOutput, EndpointAdapter } from './wire.types.ts';
import { bearer, joinUrl, jsonRequest, openAiDirectory, resolveParameters, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

/** `{data:[{index, embedding}], usage:{prompt_tokens}}`; the vectors are returned in the order of `index` (the inputs' order). */
function parseEmbeddings(answer: Answer): EmbeddingsOutput {
  const body = answerObject(answer);
  const entries = listAt(body.data, 'data').map((entry, i) => {
    const item = objectAt(entry, `data[${i}]`);
    // A string here is base64 (`encoding_format: base64`), which the request does not ask for.
    const vector = listAt(item.embedding, `data[${i}].embedding`);
    if (!vector.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error(`data[${i}].embedding holds a non-number`);
    return { index: item.index ?? i, vector: vector as number[] };
  });
  const ordered: number[][] = [];
  for (const { index, vector } of entries) {
    if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0 || index >= entries.length || ordered[index])
      throw new Error('data[].index does not number the inputs once each');
    ordered[index] = vector;
  }
  const usage = body.usage === undefined || body.usage === null ? null : objectAt(body.usage, 'usage');
  return {
    embeddings: ordered,
    usage: usage && { input_tokens: tokenCount(usage.prompt_tokens, 'usage.prompt_tokens'), output_tokens: 0, cached_input_tokens: null },
  };
}

/** OpenAI-compatible embeddings: `POST {base}/embeddings` with `{model, input}` and the declared parameters (`dimensions`) by name. */
export const openAiEmbeddingsWire: EndpointAdapter<'embeddings'> = {
  apiFormat: 'openai_chat',
  workload: 'embeddings',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: { ...WITHOUT_TEXT_FEATURES, token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.25' } },
  directory: openAiDirectory,
  probe: () => ({ ok: true, input: { input: ['ok'] } }),
  build({ baseUrl, model, credential }, input) {
    const params = resolveParameters(model, input.parameters);
    return jsonRequest(joinUrl(baseUrl, 'embeddings'), bearer(credential), {
      ...params,
      model: model.model_id,
      input: input.input,
      encoding_format: 'float',
    });
  },
  parse: parseEmbeddings,
};
