import { eventError, eventJson, objectAt, stringAt, upstreamError } from './answer.helpers.ts';
import { anthropicFinishReason, anthropicUsage } from './anthropic-messages.answer.ts';
import { sseStreamDecoder, type SseEvent } from './sse-lines.ts';
import { isRecord } from './wire.helpers.ts';
import type { StreamDecoder, TextDelta } from './wire.types.ts';

/**
 * The streamed Messages answer: `message_start` (the input usage), per content block `content_block_start` (a text
 * block, or a `tool_use` block with its id and name), `content_block_delta` (`text_delta`, `input_json_delta` with a
 * `partial_json` piece), `content_block_stop`; then `message_delta` (`stop_reason`, the output usage so far) and
 * `message_stop`. `ping` and event types this decoder does not know are skipped (Anthropic's versioning policy adds
 * event types); an `error` event throws.
 */
export function anthropicMessagesStreamDecoder(): StreamDecoder {
  let stopped = false;
  let finished = false;
  /** `message_start`'s usage, overlaid by each `message_delta`'s (its counts are cumulative). */
  const usage: Record<string, unknown> = {};
  /** Content block index → the tool call it is, and whether any argument text came for it. */
  const toolBlocks = new Map<number, { index: number; gotArguments: boolean }>();

  function finish(reason: unknown): TextDelta[] {
    if (finished) return [];
    finished = true;
    return [{ type: 'finish', finish_reason: anthropicFinishReason(reason) }];
  }

  function mergeUsage(value: unknown): void {
    if (!isRecord(value)) return;
    for (const [name, count] of Object.entries(value)) if (count !== null && count !== undefined) usage[name] = count;
  }

  function blockIndex(data: Record<string, unknown>): number {
    const index = data.index;
    if (typeof index !== 'number' || !Number.isSafeInteger(index)) throw new Error(`${String(data.type)} has no block index`);
    return index;
  }

  function blockStart(data: Record<string, unknown>): TextDelta[] {
    const block = objectAt(data.content_block, 'content_block_start.content_block');
    if (block.type === 'text') return typeof block.text === 'string' && block.text !== '' ? [{ type: 'text', text: block.text }] : [];
    if (block.type !== 'tool_use') return [];
    const call = { index: toolBlocks.size, gotArguments: false };
    toolBlocks.set(blockIndex(data), call);
    return [
      {
        type: 'tool_call',
        index: call.index,
        id: stringAt(block.id, 'content_block_start.content_block.id'),
        name: stringAt(block.name, 'content_block_start.content_block.name'),
        arguments: '',
      },
    ];
  }

  function blockDelta(data: Record<string, unknown>): TextDelta[] {
    const delta = objectAt(data.delta, 'content_block_delta.delta');
    if (delta.type === 'text_delta') {
      const text = stringAt(delta.text, 'text_delta.text');
      return text === '' ? [] : [{ type: 'text', text }];
    }
    if (delta.type !== 'input_json_delta') return [];
    const call = toolBlocks.get(blockIndex(data));
    const piece = stringAt(delta.partial_json, 'input_json_delta.partial_json');
    if (!call) throw new Error('input_json_delta for a block that is not a tool_use');
    if (piece === '') return [];
    call.gotArguments = true;
    return [{ type: 'tool_call', index: call.index, arguments: piece }];
  }

  function blockStop(data: Record<string, unknown>): TextDelta[] {
    const call = toolBlocks.get(blockIndex(data));
    // A tool without parameters may stream no argument text; the non-streamed answer's `input` is then `{}`.
    if (!call || call.gotArguments) return [];
    call.gotArguments = true;
    return [{ type: 'tool_call', index: call.index, arguments: '{}' }];
  }

  function onEvent(event: SseEvent): TextDelta[] {
    if (stopped) return [];
    if (event.event === 'error') throw upstreamError(eventError(event));
    const data = objectAt(eventJson(event), 'a stream event');
    switch (data.type) {
      case 'error':
        throw upstreamError(data.error);
      case 'message_start':
        mergeUsage(objectAt(data.message, 'message_start.message').usage);
        return [];
      case 'content_block_start':
        return blockStart(data);
      case 'content_block_delta':
        return blockDelta(data);
      case 'content_block_stop':
        return blockStop(data);
      case 'message_delta': {
        mergeUsage(data.usage);
        const reason = isRecord(data.delta) ? data.delta.stop_reason : undefined;
        return reason === undefined || reason === null ? [] : finish(reason);
      }
      case 'message_stop': {
        stopped = true;
        const out = finish(null);
        if (usage.input_tokens !== undefined) out.push({ type: 'usage', usage: anthropicUsage(usage) });
        return out;
      }
      default:
        return [];
    }
  }

  // message_start reports the input tokens and each message_delta the output so far, so a stream cut short still
  // knows what it was billed for.
  return {
    ...sseStreamDecoder({
      onEvent,
      onEnd() {
        if (!stopped) throw new Error('the stream ended before message_stop');
        return [];
      },
    }),
    usageSoFar: () => (usage.input_tokens !== undefined ? anthropicUsage(usage) : null),
  };
}
