import { answerObject, argumentsText, listAt, objectAt, optionalTokenCount, stringAt, tokenCount, type Answer } from './answer.helpers.ts';
import { isRecord } from './wire.helpers.ts';
import type { EmbeddingsOutput, FinishReason, TextGenerationOutput, WireUsage } from './wire.types.ts';

/**
 * generateContent answers (`gemini_generate_content`): a GenerateContentResponse with `candidates[0].content.parts`
 * (text parts, thought parts, `functionCall` parts), `finishReason`, `usageMetadata`, and `promptFeedback` when the
 * prompt itself was blocked. A streamed answer is a sequence of the same objects, one per event.
 */

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']);

/** The platform's finish reason for a Gemini `finishReason`; an answer that called functions finished with tool calls. */
export function geminiFinishReason(value: unknown, calledFunctions: boolean): FinishReason {
  if (calledFunctions) return 'tool_calls';
  if (value === 'STOP') return 'stop';
  if (value === 'MAX_TOKENS') return 'length';
  return typeof value === 'string' && FILTERED.has(value) ? 'content_filter' : 'other';
}

/**
 * `usageMetadata`: `promptTokenCount` is the whole prompt (cached content included) and `toolUsePromptTokenCount` the
 * tool results Google fed in, both billed as input; `candidatesTokenCount` and `thoughtsTokenCount` (thinking, not
 * part of the candidates' count) are output; `cachedContentTokenCount` is the cached part of the prompt.
 */
export function geminiUsage(value: unknown): WireUsage | null {
  if (value === undefined || value === null) return null;
  const usage = objectAt(value, 'usageMetadata');
  const count = (name: string) => optionalTokenCount(usage[name], `usageMetadata.${name}`) ?? 0;
  return {
    input_tokens: tokenCount(usage.promptTokenCount, 'usageMetadata.promptTokenCount') + count('toolUsePromptTokenCount'),
    output_tokens: count('candidatesTokenCount') + count('thoughtsTokenCount'),
    cached_input_tokens: optionalTokenCount(usage.cachedContentTokenCount, 'usageMetadata.cachedContentTokenCount'),
  };
}

export interface CandidatePiece {
  text?: string;
  call?: { id: string | null; name: string; arguments: string };
}

/**
 * The first candidate of a response (the platform asks for one), or undefined when the response has none (a blocked
 * prompt, or a streamed chunk carrying only usage).
 */
export function firstCandidate(response: Record<string, unknown>): Record<string, unknown> | undefined {
  if (response.candidates === undefined) return undefined;
  const candidates = listAt(response.candidates, 'candidates');
  const first = candidates.find((c) => isRecord(c) && (c.index === undefined || c.index === 0)) ?? candidates[0];
  return first === undefined ? undefined : objectAt(first, 'candidates[0]');
}

/** The answer's pieces in order: text parts (thought summaries left out) and function calls. */
export function candidatePieces(candidate: Record<string, unknown>): CandidatePiece[] {
  if (candidate.content === undefined || candidate.content === null) return [];
  const content = objectAt(candidate.content, 'candidates[0].content');
  if (content.parts === undefined) return [];
  return listAt(content.parts, 'candidates[0].content.parts').flatMap((entry, i): CandidatePiece[] => {
    const part = objectAt(entry, `candidates[0].content.parts[${i}]`);
    if (isRecord(part.functionCall)) {
      const field = `candidates[0].content.parts[${i}].functionCall`;
      const call = part.functionCall;
      return [
        {
          call: {
            id: typeof call.id === 'string' && call.id !== '' ? call.id : null,
            name: stringAt(call.name, `${field}.name`),
            arguments: argumentsText(call.args ?? {}, `${field}.args`),
          },
        },
      ];
    }
    if (typeof part.text === 'string' && part.thought !== true) return [{ text: part.text }];
    return [];
  });
}

/** Whether the prompt itself was blocked (`promptFeedback.blockReason`): no candidate follows. */
export function promptBlocked(response: Record<string, unknown>): boolean {
  return isRecord(response.promptFeedback) && typeof response.promptFeedback.blockReason === 'string';
}

/** Gemini names no call; the n-th call of an answer is `call_<n>`, the same in a parsed and a streamed answer. */
export const callId = (position: number, given: string | null): string => given ?? `call_${position}`;

/** Reads a non-streamed generateContent response. */
export function parseGenerateContent(answer: Answer): TextGenerationOutput {
  const body = answerObject(answer);
  const usage = geminiUsage(body.usageMetadata);
  const candidate = firstCandidate(body);
  if (candidate === undefined) {
    if (promptBlocked(body)) return { text: '', tool_calls: [], finish_reason: 'content_filter', usage };
    throw new Error('the answer has no candidates');
  }
  const pieces = candidatePieces(candidate);
  const toolCalls = pieces.flatMap((p) => (p.call ? [p.call] : [])).map((c, i) => ({ ...c, id: callId(i, c.id) }));
  return {
    text: pieces.map((p) => p.text ?? '').join(''),
    tool_calls: toolCalls,
    finish_reason: geminiFinishReason(candidate.finishReason, toolCalls.length > 0),
    usage,
  };
}

/** Reads a batchEmbedContents response: `embeddings[].values`, in the order of the requests. Gemini reports no usage here. */
export function parseBatchEmbeddings(answer: Answer): EmbeddingsOutput {
  const body = answerObject(answer);
  const embeddings = listAt(body.embeddings, 'embeddings').map((entry, i) => {
    const values = listAt(objectAt(entry, `embeddings[${i}]`).values, `embeddings[${i}].values`);
    if (!values.every((v) => typeof v === 'number' && Number.isFinite(v))) throw new Error(`embeddings[${i}].values holds a non-number`);
    return values as number[];
  });
  return { embeddings, usage: null };
}
