import { answerObject, listAt, objectAt, optionalTokenCount, stringAt, tokenCount, type Answer } from './answer.helpers.ts';
import { isRecord } from './wire.helpers.ts';
import type { FinishReason, TextGenerationOutput, WireUsage } from './wire.types.ts';

/**
 * Messages API answers (`anthropic_messages`): `{type:"message", content:[blocks], stop_reason, usage}`. Text blocks
 * are joined, `tool_use` blocks become tool calls; thinking and server-tool blocks are not part of the answer.
 */

const FINISH: Readonly<Record<string, FinishReason>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  // The context window ran out before `max_tokens`: still a cut by length.
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  // A server tool loop paused the turn; the caller may resume it, so it is no stop in the platform's sense.
  pause_turn: 'other',
};

export function anthropicFinishReason(value: unknown): FinishReason {
  return (typeof value === 'string' && Object.hasOwn(FINISH, value) ? FINISH[value] : undefined) ?? 'other';
}

/**
 * Anthropic's `usage`. Its `input_tokens` counts only the input after the last cache breakpoint: cache reads
 * (`cache_read_input_tokens`) and cache writes (`cache_creation_input_tokens`) are counted apart. The platform's
 * `input_tokens` is the whole input, so it is the sum of the three, and `cached_input_tokens` is the cache reads.
 */
export function anthropicUsage(usage: Record<string, unknown>): WireUsage {
  const uncached = tokenCount(usage.input_tokens, 'usage.input_tokens');
  const reads = optionalTokenCount(usage.cache_read_input_tokens, 'usage.cache_read_input_tokens');
  const writes = optionalTokenCount(usage.cache_creation_input_tokens, 'usage.cache_creation_input_tokens');
  return {
    input_tokens: uncached + (reads ?? 0) + (writes ?? 0),
    output_tokens: tokenCount(usage.output_tokens, 'usage.output_tokens'),
    cached_input_tokens: reads,
  };
}

/** Reads a non-streamed message. */
export function parseMessage(answer: Answer): TextGenerationOutput {
  const body = answerObject(answer);
  if (body.type !== undefined && body.type !== 'message') throw new Error('the answer is not a message');
  let text = '';
  const toolCalls: TextGenerationOutput['tool_calls'] = [];
  listAt(body.content, 'content').forEach((entry, i) => {
    const block = objectAt(entry, `content[${i}]`);
    if (block.type === 'text') text += stringAt(block.text, `content[${i}].text`);
    else if (block.type === 'tool_use')
      toolCalls.push({
        id: stringAt(block.id, `content[${i}].id`),
        name: stringAt(block.name, `content[${i}].name`),
        arguments: JSON.stringify(objectAt(block.input ?? {}, `content[${i}].input`)),
      });
  });
  return {
    text,
    tool_calls: toolCalls,
    finish_reason: anthropicFinishReason(body.stop_reason),
    usage: isRecord(body.usage) ? anthropicUsage(body.usage) : null,
  };
}
