import { composeModel, type ComposedModel } from '../catalog/catalog.compose.ts';
import type { ModelDefinition } from '../catalog/catalog.schemas.ts';
import type { ApiFormat } from '../catalog/wires.ts';
import type { FinishReason, MultipartBody, StreamDecoder, TextDelta, UpstreamRequest, WireUsage } from './wire.types.ts';

/** Shared by the answer and stream tests: a composed model, a sender, and the neutral answer a delta list adds up to. */

export function composed(apiFormat: ApiFormat, definition: ModelDefinition, key = 'm-1'): ComposedModel {
  const result = composeModel({
    providerId: 'p',
    declaration: { display_name: 'P', base_url: 'https://p.example/v1', api_format: apiFormat, credentials: 'api_key' },
    modelKey: key,
    definition,
    shared: {},
  });
  if (!result.ok) throw new Error(result.reason);
  return result.model;
}

function formOf(body: MultipartBody): FormData {
  const form = new FormData();
  for (const part of body.parts) {
    if ('filename' in part) form.append(part.name, new Blob([Buffer.from(part.data)], { type: part.contentType }), part.filename);
    else form.append(part.name, part.value);
  }
  return form;
}

/** Sends what an adapter built, as the platform's sender will. */
export function send(request: UpstreamRequest): Promise<Response> {
  const init: RequestInit = { method: request.method, headers: request.headers, redirect: 'manual' };
  if (request.body !== null) init.body = typeof request.body === 'string' ? request.body : formOf(request.body);
  return fetch(request.url, init);
}

/** A fetched answer as an adapter's `parse` takes it. */
export async function answerOf(response: Response): Promise<{ body: Uint8Array; headers: Record<string, string> }> {
  return { body: new Uint8Array(await response.arrayBuffer()), headers: Object.fromEntries(response.headers) };
}

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Feeds `chunks` one by one, then ends the stream; the deltas in order. */
export function decodeAll(decoder: StreamDecoder, chunks: Iterable<Uint8Array>): TextDelta[] {
  const out: TextDelta[] = [];
  for (const chunk of chunks) out.push(...decoder.push(chunk));
  out.push(...decoder.end());
  return out;
}

/** `data` cut at the given offsets (sorted, deduplicated, inside the data). */
export function splitAt(data: Uint8Array, offsets: number[]): Uint8Array[] {
  const cuts = [...new Set(offsets.filter((o) => o > 0 && o < data.length))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, data.length]) {
    out.push(data.subarray(from, cut));
    from = cut;
  }
  return out;
}

/** A body fed one byte at a time. */
export const byteByByte = (data: Uint8Array): Uint8Array[] => Array.from(data, (_, i) => data.subarray(i, i + 1));

/** What a delta list adds up to, with how often finish and usage came (each must come exactly once). */
export interface Collapsed {
  text: string;
  tool_calls: { id: string; name: string; arguments: string }[];
  finish_reason: FinishReason | null;
  usage: WireUsage | null;
  finishes: number;
  usages: number;
}

export function collapse(deltas: TextDelta[]): Collapsed {
  const out: Collapsed = { text: '', tool_calls: [], finish_reason: null, usage: null, finishes: 0, usages: 0 };
  for (const delta of deltas) {
    if (delta.type === 'text') out.text += delta.text;
    else if (delta.type === 'tool_call') {
      const call = (out.tool_calls[delta.index] ??= { id: '', name: '', arguments: '' });
      if (delta.id !== undefined) call.id = delta.id;
      if (delta.name !== undefined) call.name = delta.name;
      call.arguments += delta.arguments;
    } else if (delta.type === 'finish') {
      out.finish_reason = delta.finish_reason;
      out.finishes++;
    } else {
      out.usage = delta.usage;
      out.usages++;
    }
  }
  return out;
}

/** An SSE body from events, with LF line ends (tests swap in CRLF where they mean to). */
export function sseBody(events: ({ event?: string; data: unknown } | string)[]): string {
  return events
    .map((e) =>
      typeof e === 'string'
        ? e
        : `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
    )
    .join('');
}
