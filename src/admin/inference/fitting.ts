import { AppError } from '../../core/errors.ts';
import { echoableFieldName } from '../../core/validation.ts';
import type { ComposedModel } from '../catalog/catalog.compose.ts';
import type { TextCounter } from '../tokens/token-counter.ts';
import type { ChatMessage, ParameterDescriptor, ToolSpec } from '../wires/wire.types.ts';

/**
 * The chat allowance (issue 16 item 4): provider chat templates wrap every message in role and separator tokens the
 * text count does not see. OpenAI documents 3 tokens per message plus 3 priming the reply; Anthropic and Gemini
 * frame similarly. This uses 4 per message (a margin for names and tool-call framing) plus 3 per request, so the
 * estimate errs high, the safe side for fitting. Images are not counted (their cost is provider-specific).
 */
export const CHAT_ALLOWANCE_PER_MESSAGE = 4;
export const CHAT_ALLOWANCE_PER_REQUEST = 3;

function parameterInvalid(name: string, problem: string): AppError {
  return new AppError('parameter_invalid', `parameters.${echoableFieldName(name) ?? '<field>'}: ${problem}`);
}

function checkValue(name: string, d: ParameterDescriptor, value: unknown): void {
  const kindOk =
    d.kind === 'boolean'
      ? typeof value === 'boolean'
      : d.kind === 'string'
        ? typeof value === 'string'
        : typeof value === 'number' && Number.isFinite(value) && (d.kind === 'number' || Number.isInteger(value));
  if (!kindOk) throw parameterInvalid(name, `expected ${d.kind === 'integer' ? 'an integer' : `a ${d.kind}`}`);
  if (typeof value === 'number') {
    if (d.minimum !== null && value < d.minimum) throw parameterInvalid(name, `must be at least ${d.minimum}`);
    if (d.maximum !== null && value > d.maximum) throw parameterInvalid(name, `must be at most ${d.maximum}`);
  }
  if (d.allowed_values !== null && !d.allowed_values.includes(value as string | number))
    throw parameterInvalid(name, `must be one of ${d.allowed_values.join(', ')}`);
}

/**
 * The request's generation parameters, checked against the composed model's table: a parameter the model does not
 * declare is 400 `parameter_invalid` naming it, as is a value outside its descriptor. `max_output_tokens` travels in
 * the parameters under its platform name.
 */
export function checkedParameters(
  model: ComposedModel,
  parameters: Record<string, unknown> = {},
  maxOutputTokens?: number,
): Record<string, unknown> {
  const table = model.capabilities.generation_parameters;
  const out: Record<string, unknown> = { ...parameters };
  if (maxOutputTokens !== undefined) {
    if (Object.hasOwn(parameters, 'max_output_tokens'))
      throw parameterInvalid('max_output_tokens', 'given twice (top level and in parameters)');
    out.max_output_tokens = maxOutputTokens;
  }
  for (const [name, value] of Object.entries(out)) {
    const descriptor = Object.hasOwn(table, name) ? table[name] : undefined;
    if (!descriptor) throw parameterInvalid(name, `the model ${model.ref} declares no such generation parameter`);
    checkValue(name, descriptor, value);
  }
  return out;
}

function messageText(message: ChatMessage): string {
  const parts =
    typeof message.content === 'string' ? [message.content] : message.content.flatMap((p) => (p.type === 'text' ? [p.text] : []));
  for (const call of message.tool_calls ?? []) parts.push(call.name, call.arguments);
  if (message.name !== undefined) parts.push(message.name);
  return parts.join('\n');
}

/** The input estimate of a chat request: the counted text of every message and tool declaration plus the chat allowance. */
export function estimateChatInput(counter: TextCounter, messages: readonly ChatMessage[], tools: readonly ToolSpec[] = []): number {
  let tokens = CHAT_ALLOWANCE_PER_REQUEST;
  for (const message of messages) tokens += CHAT_ALLOWANCE_PER_MESSAGE + counter.count(messageText(message));
  for (const tool of tools) tokens += counter.count(JSON.stringify(tool));
  return tokens;
}

/** The input estimate of an embeddings request: each text counted, no framing. */
export function estimateEmbeddingsInput(counter: TextCounter, input: readonly string[]): number {
  return input.reduce((sum, text) => sum + counter.count(text), 0);
}

/** Whether `inputTokens` and `maxOutputTokens` fit the model's `limits` (what checkFit refuses, without a message). */
function fits(model: ComposedModel, inputTokens: number, maxOutputTokens: number | undefined): boolean {
  const { input_tokens: input, output_tokens: output, combined_input_output_tokens: combined } = model.capabilities.limits;
  return (
    (input === undefined || inputTokens <= input) &&
    (maxOutputTokens === undefined || output === undefined || maxOutputTokens <= output) &&
    (combined === undefined || inputTokens + (maxOutputTokens ?? 0) <= combined)
  );
}

/**
 * Fitting with the counter's byte bound first: `estimate` is run with a counter that answers each text's upper bound
 * from its UTF-8 length (TextCounter.atMost), and when even that fits, the request fits and the tokenizer is not run
 * (for a long prompt far inside a large window, tokenizing was most of the gateway's CPU). Otherwise, or when the
 * counter has no bound, the exact estimate decides, so a refusal names the same figures as before. Returns nothing;
 * throws checkFit's refusal.
 */
export function checkFitBounded(
  model: ComposedModel,
  counter: TextCounter,
  estimate: (counter: TextCounter) => number,
  maxOutputTokens: number | undefined,
): void {
  const atMost = counter.atMost;
  if (atMost) {
    const bounding: TextCounter = { kind: counter.kind, exact: false, count: (text) => atMost(Buffer.byteLength(text, 'utf8')) };
    if (fits(model, estimate(bounding), maxOutputTokens)) return;
  }
  checkFit(model, estimate(counter), maxOutputTokens);
}

/**
 * Fitting (issue 16 item 4): refuses before any upstream call, never truncating, when the estimated input plus the
 * requested output cannot fit the model's `limits`; each message names both figures and the limit.
 */
export function checkFit(model: ComposedModel, inputTokens: number, maxOutputTokens: number | undefined): void {
  const { limits } = model.capabilities;
  const refuse = (message: string) => new AppError('context_length_exceeded', `${message} (model ${model.ref})`);
  if (limits.input_tokens !== undefined && inputTokens > limits.input_tokens)
    throw refuse(`the input is estimated at ${inputTokens} tokens, above the model's input limit of ${limits.input_tokens}`);
  if (maxOutputTokens !== undefined && limits.output_tokens !== undefined && maxOutputTokens > limits.output_tokens)
    throw refuse(`max_output_tokens ${maxOutputTokens} is above the model's output limit of ${limits.output_tokens}`);
  const combined = limits.combined_input_output_tokens;
  if (combined !== undefined && inputTokens + (maxOutputTokens ?? 0) > combined)
    throw refuse(
      `the input is estimated at ${inputTokens} tokens and max_output_tokens is ${maxOutputTokens ?? 0}: together ${inputTokens + (maxOutputTokens ?? 0)}, above the model's combined limit of ${combined}`,
    );
}
