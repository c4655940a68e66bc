// TEMPORARY (delete when the wireparse branch lands): minimal parse/streamDecoder for openai_chat and openai
// embeddings so the engine tests can run before the wire adapters read answers.
import { openAiChatWire } from '../../src/admin/wires/openai-chat.wire.ts';
import { openAiEmbeddingsWire } from '../../src/admin/wires/openai-embeddings.wire.ts';
import type { FinishReason, TextDelta, WireUsage } from '../../src/admin/wires/wire.types.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const usageOf = (u: Json | undefined): WireUsage | null =>
  u ? { input_tokens: u.prompt_tokens ?? 0, output_tokens: u.completion_tokens ?? 0, cached_input_tokens: u.prompt_tokens_details?.cached_tokens ?? null } : null;
const finishOf = (f: string): FinishReason => (['stop', 'length', 'tool_calls', 'content_filter'].includes(f) ? (f as FinishReason) : 'other');

const chat = openAiChatWire as unknown as Json;
chat.parse ??= ({ body }: { body: Uint8Array }) => {
  const json = JSON.parse(Buffer.from(body).toString('utf8')) as Json;
  const choice = json.choices[0];
  return { text: choice.message.content ?? '', tool_calls: [], finish_reason: finishOf(choice.finish_reason), usage: usageOf(json.usage) };
};
chat.streamDecoder ??= () => {
  let buffer = '';
  const decoder = new TextDecoder();
  const events = (): TextDelta[] => {
    const out: TextDelta[] = [];
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
      if (!data || data === '[DONE]') continue;
      const json = JSON.parse(data) as Json;
      if (json.usage) out.push({ type: 'usage', usage: usageOf(json.usage)! });
      const choice = json.choices?.[0];
      if (choice?.delta?.content) out.push({ type: 'text', text: choice.delta.content });
      if (choice?.finish_reason) out.push({ type: 'finish', finish_reason: finishOf(choice.finish_reason) });
    }
    return out;
  };
  return {
    push: (chunk: Uint8Array) => ((buffer += decoder.decode(chunk, { stream: true })), events()),
    end: () => events(),
  };
};
const embeddings = openAiEmbeddingsWire as unknown as Json;
embeddings.parse ??= ({ body }: { body: Uint8Array }) => {
  const json = JSON.parse(Buffer.from(body).toString('utf8')) as Json;
  return { embeddings: json.data.map((d: Json) => d.embedding), usage: usageOf(json.usage) };
};
