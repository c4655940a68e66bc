import { eventError, eventJson, listAt, objectAt, refuseErrorEnvelope, upstreamError } from './answer.helpers.ts';
import { openAiContentText, openAiFinishReason, openAiUsage } from './openai-chat.answer.ts';
import { sseStreamDecoder, type SseEvent } from './sse-lines.ts';
import { isRecord } from './wire.helpers.ts';
import type { StreamDecoder, TextDelta, WireUsage } from './wire.types.ts';

/**
 * The streamed Chat Completions answer: `data: {chunk}` events whose `choices[0].delta` carries `content`, `refusal`
 * and `tool_calls[]` fragments (`index`, then `id` and `function.name` once, then `function.arguments` pieces), a
 * chunk with `finish_reason`, with `stream_options.include_usage` a last chunk of empty `choices` and `usage`, and
 * `data: [DONE]`. Usage is held until `[DONE]` (or the end of the body) because some compatible servers repeat a
 * cumulative `usage` on every chunk; the last one counts.
 */
export function openAiChatStreamDecoder(): StreamDecoder {
  let done = false;
  let finished = false;
  let refused = false;
  let usage: WireUsage | null = null;
  let usageSent = false;

  function flushUsage(): TextDelta[] {
    if (usageSent || usage === null) return [];
    usageSent = true;
    return [{ type: 'usage', usage }];
  }

  function toolCallDeltas(value: unknown): TextDelta[] {
    return listAt(value, 'delta.tool_calls').flatMap((entry, position): TextDelta[] => {
      const call = objectAt(entry, 'delta.tool_calls[]');
      const fn = isRecord(call.function) ? call.function : {};
      // Servers that send each call whole in one chunk sometimes leave out `index`; the position then orders them.
      const index = typeof call.index === 'number' && Number.isSafeInteger(call.index) && call.index >= 0 ? call.index : position;
      const delta: TextDelta = { type: 'tool_call', index, arguments: typeof fn.arguments === 'string' ? fn.arguments : '' };
      if (typeof call.id === 'string' && call.id !== '') delta.id = call.id;
      if (typeof fn.name === 'string' && fn.name !== '') delta.name = fn.name;
      return delta.id === undefined && delta.name === undefined && delta.arguments === '' ? [] : [delta];
    });
  }

  function deltas(delta: Record<string, unknown>): TextDelta[] {
    const out: TextDelta[] = [];
    const text = openAiContentText(delta.content, 'delta.content');
    if (text !== '') out.push({ type: 'text', text });
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      refused = true;
      out.push({ type: 'text', text: delta.refusal });
    }
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) out.push(...toolCallDeltas(delta.tool_calls));
    const legacy = delta.function_call;
    if (isRecord(legacy)) {
      const name = typeof legacy.name === 'string' && legacy.name !== '' ? legacy.name : undefined;
      out.push({
        type: 'tool_call',
        index: 0,
        // The deprecated `function_call` has no id; it gets the one the non-streamed parse gives it.
        ...(name !== undefined ? { id: 'call_0', name } : {}),
        arguments: typeof legacy.arguments === 'string' ? legacy.arguments : '',
      });
    }
    return out;
  }

  function onEvent(event: SseEvent): TextDelta[] {
    if (done) return [];
    if (event.event === 'error') throw upstreamError(eventError(event));
    if (event.data.trim() === '[DONE]') {
      done = true;
      // A server that ends without any finish_reason still owes the consumer one finish.
      const finish: TextDelta[] = finished ? [] : [{ type: 'finish', finish_reason: 'other' }];
      finished = true;
      return [...finish, ...flushUsage()];
    }
    const chunk = objectAt(eventJson(event), 'a stream chunk');
    refuseErrorEnvelope(chunk);
    const chunkUsage = openAiUsage(chunk.usage);
    if (chunkUsage !== null) usage = chunkUsage;
    const choices = listAt(chunk.choices ?? [], 'choices');
    const choice = choices.find((c) => isRecord(c) && (c.index === 0 || c.index === undefined));
    if (choice === undefined) return [];
    const { delta, finish_reason: reason } = objectAt(choice, 'choices[0]');
    const out = delta === undefined || delta === null ? [] : deltas(objectAt(delta, 'choices[0].delta'));
    if (reason !== undefined && reason !== null && !finished) {
      finished = true;
      const finish = openAiFinishReason(reason);
      out.push({ type: 'finish', finish_reason: refused && finish === 'stop' ? 'content_filter' : finish });
    }
    return out;
  }

  return sseStreamDecoder({
    onEvent,
    onEnd() {
      if (!done && !finished) throw new Error('the stream ended before data: [DONE] or a finish_reason');
      return flushUsage();
    },
  });
}
