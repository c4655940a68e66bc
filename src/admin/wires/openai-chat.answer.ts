import { answerObject, argumentsText, listAt, objectAt, optionalTokenCount, stringAt, tokenCount, type Answer } from './answer.helpers.ts';
import { isRecord } from './wire.helpers.ts';
import type { FinishReason, TextGenerationOutput, WireUsage } from './wire.types.ts';

/**
 * Chat Completions answers (`openai_chat`): `choices[0].message` with `content`, `tool_calls` and `refusal`,
 * `finish_reason`, and `usage`. Only the first choice is read: the platform never asks for `n` > 1.
 */

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  // The deprecated single `function_call` is a tool call by another name.
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

export function openAiFinishReason(value: unknown): FinishReason {
  return (typeof value === 'string' && Object.hasOwn(FINISH, value) ? FINISH[value] : undefined) ?? 'other';
}

/** `usage.prompt_tokens` / `completion_tokens` (reasoning tokens are inside it), `prompt_tokens_details.cached_tokens`. */
export function openAiUsage(value: unknown): WireUsage | null {
  if (value === undefined || value === null) return null;
  const usage = objectAt(value, 'usage');
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return {
    input_tokens: tokenCount(usage.prompt_tokens, 'usage.prompt_tokens'),
    output_tokens: tokenCount(usage.completion_tokens, 'usage.completion_tokens'),
    cached_input_tokens: optionalTokenCount(details.cached_tokens, 'usage.prompt_tokens_details.cached_tokens'),
  };
}

/**
 * The text of a message's `content`: a string, null (a pure tool call), or — as some compatible servers (Mistral's
 * reasoning models) send — a list of parts whose `text` parts are joined.
 */
export function openAiContentText(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return listAt(value, field)
    .map((part) => (isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function toolCalls(message: Record<string, unknown>): TextGenerationOutput['tool_calls'] {
  const calls = message.tool_calls ?? [];
  const out = listAt(calls, 'message.tool_calls').map((entry, i) => {
    const field = `message.tool_calls[${i}]`;
    const call = objectAt(entry, field);
    const fn = objectAt(call.function, `${field}.function`);
    return {
      id: stringAt(call.id, `${field}.id`),
      name: stringAt(fn.name, `${field}.function.name`),
      arguments: argumentsText(fn.arguments, `${field}.function.arguments`),
    };
  });
  // The deprecated `function_call` carries no id; the platform needs one to match the answer, so it gets a stable one.
  if (isRecord(message.function_call)) {
    const fn = message.function_call;
    out.push({
      id: `call_${out.length}`,
      name: stringAt(fn.name, 'message.function_call.name'),
      arguments: argumentsText(fn.arguments, 'message.function_call.arguments'),
    });
  }
  return out;
}

/** Reads a non-streamed chat completion. */
export function parseChatCompletion(answer: Answer): TextGenerationOutput {
  const body = answerObject(answer);
  const choice = objectAt(listAt(body.choices, 'choices')[0], 'choices[0]');
  const message = objectAt(choice.message, 'choices[0].message');
  const text = openAiContentText(message.content, 'choices[0].message.content');
  // A refusal (structured outputs) arrives with finish_reason `stop` and no content: it is the provider's filter
  // speaking, and its words are the answer the user should see.
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : null;
  const finish = openAiFinishReason(choice.finish_reason);
  return {
    text: refusal !== null && text === '' ? refusal : text,
    tool_calls: toolCalls(message),
    finish_reason: refusal !== null && finish === 'stop' ? 'content_filter' : finish,
    usage: openAiUsage(body.usage),
  };
}
