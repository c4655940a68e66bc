import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { StreamDecoder, TextDelta } from './wire.types.ts';

/**
 * Server-sent-events framing for the streamed answers of the text wires: bytes in any split, complete events out.
 *
 * The event grammar (CR, LF and CRLF line ends, `:` comments, multi-line `data:`, `event:`, a BOM) is left to
 * `eventsource-parser` (pinned at 3.1.1, the last line that supports Node 20): it is the parser the MCP SDK already
 * brings in, and it buffers a line split across chunks, even a CRLF split between its two bytes. This module adds what
 * the library leaves to its caller: UTF-8 decoding across chunk boundaries, a bound on what one event may buffer, and
 * telling a stream that ended mid-event from one that ended between events.
 */

/** One dispatched event; `event` is undefined for the default (`message`) type. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/**
 * The most characters one unfinished event may hold. A streamed text answer's events are small deltas (a Gemini
 * chunk is one response of a few kilobytes); a server that never ends its event would otherwise grow the buffer
 * without bound.
 */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

export interface SseReader {
  /** The events completed by `chunk`. Throws on bytes that are not UTF-8 or an event over the size bound. */
  push(chunk: Uint8Array): SseEvent[];
  /** The end of the body: the events its last bytes completed; throws when it stopped inside an event or a character. */
  end(): SseEvent[];
}

export function createSseReader(): SseReader {
  // `fatal`: a stream that is not UTF-8 is not an event stream; `stream: true` below holds a character split across chunks.
  const text = new TextDecoder('utf-8', { fatal: true });
  let events: SseEvent[] = [];
  let overflow = false;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_CHARS,
    onEvent: (message: EventSourceMessage) => events.push({ event: message.event, data: message.data }),
    // Unknown fields and a bad `retry:` are ignored, as the SSE specification says; only the size bound stops us.
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
  });

  let endsWithCr = false;

  function feed(chunk: string): SseEvent[] {
    if (chunk !== '') endsWithCr = chunk.endsWith('\r');
    parser.feed(chunk);
    if (overflow) throw new Error(`a stream event exceeds ${MAX_EVENT_CHARS} characters`);
    const out = events;
    events = [];
    return out;
  }

  function decode(bytes: Uint8Array | undefined): string {
    try {
      return bytes ? text.decode(bytes, { stream: true }) : text.decode();
    } catch {
      throw new Error('the stream is not UTF-8 text');
    }
  }

  return {
    push: (chunk) => feed(decode(chunk)),
    end() {
      const rest = feed(decode(undefined));
      // The parser holds back a final CR, which could be half of a CRLF; at the end it is a whole line end, and a
      // LF after it ends that same line without adding one.
      if (endsWithCr) rest.push(...feed('\n'));
      // A blank line completes whatever is still buffered: an event it dispatches had not been finished upstream.
      if (feed('\n\n').length > 0) throw new Error('the stream ended inside an event');
      return rest;
    },
  };
}

/** What a wire's decoder does with each event and at the end of the body. */
export interface SseHandlers {
  onEvent(event: SseEvent): TextDelta[];
  /** Called after the body ended between events: checks the wire's terminal marker and returns what is left to emit. */
  onEnd(): TextDelta[];
}

/** A `StreamDecoder` over server-sent events. After a throw the decoder is spent: every later call throws. */
export function sseStreamDecoder(handlers: SseHandlers): StreamDecoder {
  const reader = createSseReader();
  let failed: Error | null = null;
  let ended = false;
  const guard = (step: () => TextDelta[]): TextDelta[] => {
    if (failed) throw failed;
    if (ended) throw new Error('the stream already ended');
    try {
      return step();
    } catch (error) {
      failed = error instanceof Error ? error : new Error(String(error));
      throw failed;
    }
  };
  return {
    push: (chunk) => guard(() => reader.push(chunk).flatMap((event) => handlers.onEvent(event))),
    end: () =>
      guard(() => {
        ended = true;
        const rest = reader.end().flatMap((event) => handlers.onEvent(event));
        return [...rest, ...handlers.onEnd()];
      }),
  };
}
