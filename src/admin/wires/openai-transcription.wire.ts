import { answerObject, objectAt, stringAt, tokenCount, type Answer } from './answer.helpers.ts';
import type { EndpointAdapter, TranscriptionOutput } from './wire.types.ts';
import { bearer, joinUrl, openAiDirectory, resolveParameters, WITHOUT_TEXT_FEATURES } from './wire.helpers.ts';

/** A WAV file of `ms` milliseconds of silence, 16 kHz mono 16-bit: the transcription probe's fixed input. */
export function silentWav(ms: number): Uint8Array {
  const rate = 16_000;
  const samples = Math.round((rate * ms) / 1000);
  const data = samples * 2;
  const buf = Buffer.alloc(44 + data);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + data, 4);
  buf.write('WAVEfmt ', 8, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20); // PCM
  buf.writeUInt16LE(1, 22); // mono
  buf.writeUInt32LE(rate, 24);
  buf.writeUInt32LE(rate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(data, 40);
  return new Uint8Array(buf);
}

/**
 * `{text, usage?}` (the request asks for `response_format: json`). Token-billed models report
 * `usage:{type:"tokens", input_tokens, output_tokens}`; Whisper reports `{type:"duration", seconds}`, which is no token
 * count and so no usage here.
 */
function parseTranscription(answer: Answer): TranscriptionOutput {
  const body = answerObject(answer);
  const text = stringAt(body.text, 'text');
  const usage = body.usage === undefined || body.usage === null ? null : objectAt(body.usage, 'usage');
  if (usage === null || usage.type !== 'tokens') return { text, usage: null };
  return {
    text,
    usage: {
      input_tokens: tokenCount(usage.input_tokens, 'usage.input_tokens'),
      output_tokens: tokenCount(usage.output_tokens, 'usage.output_tokens'),
      cached_input_tokens: null,
    },
  };
}

/** OpenAI-compatible transcription: `POST {base}/audio/transcriptions`, multipart with `file` and `model`. */
export const openAiTranscriptionWire: EndpointAdapter<'transcription'> = {
  apiFormat: 'openai_chat',
  workload: 'transcription',
  credentials: ['api_key', 'oauth_tokens', 'none'],
  profile: { ...WITHOUT_TEXT_FEATURES, token_counter: null },
  directory: openAiDirectory,
  probe: () => ({ ok: true, input: { audio: silentWav(250), filename: 'probe.wav', contentType: 'audio/wav' } }),
  build({ baseUrl, model, credential }, input) {
    const params = resolveParameters(model, input.parameters);
    return {
      method: 'POST',
      url: joinUrl(baseUrl, 'audio/transcriptions'),
      headers: bearer(credential),
      body: {
        kind: 'multipart',
        parts: [
          { name: 'model', value: model.model_id },
          { name: 'response_format', value: 'json' },
          ...Object.entries(params).map(([name, value]) => ({ name, value: String(value) })),
          { name: 'file', filename: input.filename, contentType: input.contentType, data: input.audio },
        ],
      },
    };
  },
  parse: parseTranscription,
};
