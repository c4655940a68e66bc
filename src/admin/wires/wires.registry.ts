import type { ApiFormat, Workload } from '../catalog/wires.ts';
import { anthropicMessagesWire } from './anthropic-messages.wire.ts';
import { geminiEmbeddingsWire, geminiGenerateContentWire } from './gemini-generate-content.wire.ts';
import { openAiChatWire } from './openai-chat.wire.ts';
import { openAiEmbeddingsWire } from './openai-embeddings.wire.ts';
import { openAiImagesWire } from './openai-images.wire.ts';
import { openAiSpeechWire } from './openai-speech.wire.ts';
import { openAiTranscriptionWire } from './openai-transcription.wire.ts';
import type { EndpointAdapter, Target, UpstreamRequest, WorkloadInputs } from './wire.types.ts';

/**
 * Every endpoint adapter the platform ships. The catalog's wire table (`../catalog/wires.ts`) is derived from these
 * declarations, so what a definition inherits and what a request is built with come from one place.
 */
export const ENDPOINT_ADAPTERS: readonly EndpointAdapter[] = [
  openAiChatWire,
  openAiEmbeddingsWire,
  openAiImagesWire,
  openAiSpeechWire,
  openAiTranscriptionWire,
  anthropicMessagesWire,
  geminiGenerateContentWire,
  geminiEmbeddingsWire,
] as readonly EndpointAdapter[];

/** The adapter serving `workload` on `apiFormat`, or undefined when that wire has no such endpoint. */
export function endpointFor<W extends Workload>(apiFormat: ApiFormat, workload: W): EndpointAdapter<W> | undefined {
  return ENDPOINT_ADAPTERS.find((a) => a.apiFormat === apiFormat && a.workload === workload) as EndpointAdapter<W> | undefined;
}

/** Builds the upstream request for a composed model on its provider's wire (nothing is sent). */
export function buildUpstreamRequest<W extends Workload>(
  apiFormat: ApiFormat,
  target: Target & { model: { workload: W } },
  input: WorkloadInputs[W],
): UpstreamRequest {
  const adapter = endpointFor(apiFormat, target.model.workload);
  if (!adapter) throw new Error(`no ${target.model.workload} endpoint on the ${apiFormat} wire`);
  return adapter.build(target, input);
}
