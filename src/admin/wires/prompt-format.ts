import type { ChatMessage } from './wire.types.ts';

/**
 * `wire_options.prompt_format: model3_5` (spec: "wire_options.prompt_format"): for models that accept one leading
 * system instruction only. The leading run of system and developer messages is merged into one system message; a
 * system or developer message after the first other message becomes a user message at its position. The input is
 * not changed (stored messages keep their roles); the transformed copy is what is sent. Without a prompt format the
 * messages are sent as they are.
 */
export function applyPromptFormat(messages: readonly ChatMessage[], format: string | null): ChatMessage[] {
  if (format !== 'model3_5') return [...messages];
  let lead = 0;
  while (lead < messages.length && isInstruction(messages[lead] as ChatMessage)) lead++;
  const out: ChatMessage[] = [];
  if (lead > 0) out.push({ role: 'system', content: messages.slice(0, lead).map(textOf).join('\n\n') });
  for (const message of messages.slice(lead)) out.push(isInstruction(message) ? { role: 'user', content: message.content } : message);
  return out;
}

/**
 * For wires that carry instructions apart from the turns (Anthropic's `system`, Gemini's `systemInstruction`) and
 * have no later system turn: `model3_5` unless the model names another format, then the leading system message
 * taken out. Later instructions are user turns already.
 */
export function splitLeadingSystem(
  messages: readonly ChatMessage[],
  format: string | null,
): { system: string | undefined; turns: ChatMessage[] } {
  const formatted = applyPromptFormat(messages, format ?? 'model3_5');
  const first = formatted[0];
  const system = first?.role === 'system' ? textOf(first) : undefined;
  return { system, turns: system === undefined ? formatted : formatted.slice(1) };
}

function isInstruction(message: ChatMessage): boolean {
  return message.role === 'system' || message.role === 'developer';
}

/** The text of a message (instructions carry text only; other parts are dropped from the merged instruction). */
export function textOf(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}
