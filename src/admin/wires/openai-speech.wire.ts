import type { ComposedModel } from '../catalog/catalog.compose.ts';
import { headerValue, type Answer } from './answer.helpers.ts';
import type { EndpointAdapter, SpeechOutput } from './wire.types.ts';
import { bearer, joinUrl, jsonRequest, openAiDirectory, resolveParameters, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

/** The voice a probe can use: the declared `voice` parameter's default, else its first allowed value. */
function probeVoice(model: ComposedModel): string | undefined {
  const voice = model.capabilities.generation_parameters.voice;
  if (!voice || voice.kind !== 'string') return undefined;
  if (typeof voice.default === 'string') return voice.default;
  const first = voice.allowed_values?.[0];
  return typeof first === 'string' ? first : undefined;
}

/** The audio type of bytes by their header, for servers that answer `application/octet-stream`. */
function sniffedAudio(bytes: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  return undefined;
}

/** The answer is the audio itself; its type is the `content-type` (parameters dropped), or sniffed from a generic one. */
function parseSpeech(answer: Answer): SpeechOutput {
  const declared = (headerValue(answer.headers, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (answer.body.length === 0) throw new Error('the answer holds no audio');
  if (declared.startsWith('audio/')) return { audio: answer.body, media_type: declared };
  const sniffed = declared === '' || declared === 'application/octet-stream' ? sniffedAudio(answer.body) : undefined;
  if (sniffed === undefined) throw new Error('the answer is not audio');
  return { audio: answer.body, media_type: sniffed };
}

/**
 * OpenAI-compatible speech: `POST {base}/audio/speech` with `{model, input, voice}`. Voices differ per server, so a
 * speech model declares a `voice` parameter; without one the model test cannot build its probe
 * (`test_input_unavailable`, spec rule 8).
 */
export const openAiSpeechWire: EndpointAdapter<'speech'> = {
  apiFormat: 'openai_chat',
  workload: 'speech',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: { ...WITHOUT_TEXT_FEATURES, streaming: true, token_counter: null },
  directory: openAiDirectory,
  probe(model) {
    const voice = probeVoice(model);
    if (voice === undefined)
      return {
        ok: false,
        outcome: 'test_input_unavailable',
        reason: 'the definition declares no voice (generation_parameters.voice with a default or allowed_values)',
      };
    return { ok: true, input: { text: 'ok', parameters: { voice } } };
  },
  build({ baseUrl, model, credential }, input) {
    const params = resolveParameters(model, input.parameters);
    return jsonRequest(joinUrl(baseUrl, 'audio/speech'), bearer(credential), {
      model: model.model_id,
      input: input.text,
      response_format: 'wav',
      ...params,
    });
  },
  parse: parseSpeech,
};
