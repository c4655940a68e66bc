import { eventError, eventJson, objectAt, refuseErrorEnvelope, upstreamError } from './answer.helpers.ts';
import {
  callId,
  candidatePieces,
  firstCandidate,
  geminiFinishReason,
  geminiUsage,
  promptBlocked,
} from './gemini-generate-content.answer.ts';
import { sseStreamDecoder, type SseEvent } from './sse-lines.ts';
import type { StreamDecoder, TextDelta, WireUsage } from './wire.types.ts';

/**
 * The streamed generateContent answer (`:streamGenerateContent?alt=sse`): every `data:` event is a whole
 * GenerateContentResponse holding the next text parts or whole `functionCall` parts; the last carries `finishReason`.
 * `usageMetadata` is cumulative and may ride on every chunk, so only the last is reported. The wire has no end marker
 * past the last chunk, so the finish and the usage are given at the end of the body, which must have seen a
 * `finishReason` (or a blocked prompt).
 */
export function geminiStreamDecoder(): StreamDecoder {
  let reason: string | null = null;
  let blocked = false;
  let calls = 0;
  let usage: WireUsage | null = null;

  function onEvent(event: SseEvent): TextDelta[] {
    if (event.event === 'error') throw upstreamError(eventError(event));
    const chunk = objectAt(eventJson(event), 'a stream chunk');
    refuseErrorEnvelope(chunk);
    usage = geminiUsage(chunk.usageMetadata) ?? usage;
    if (promptBlocked(chunk)) blocked = true;
    const candidate = firstCandidate(chunk);
    if (candidate === undefined) return [];
    const out = candidatePieces(candidate).flatMap((piece): TextDelta[] => {
      if (piece.call) {
        const index = calls++;
        return [{ type: 'tool_call', index, id: callId(index, piece.call.id), name: piece.call.name, arguments: piece.call.arguments }];
      }
      return piece.text ? [{ type: 'text', text: piece.text }] : [];
    });
    const given = candidate.finishReason;
    if (typeof given === 'string' && given !== '' && given !== 'FINISH_REASON_UNSPECIFIED' && reason === null) reason = given;
    return out;
  }

  return sseStreamDecoder({
    onEvent,
    onEnd() {
      if (reason === null && !blocked) throw new Error('the stream ended before a finishReason');
      const finish: TextDelta = {
        type: 'finish',
        finish_reason: reason === null ? 'content_filter' : geminiFinishReason(reason, calls > 0),
      };
      return usage === null ? [finish] : [finish, { type: 'usage', usage }];
    },
  });
}
