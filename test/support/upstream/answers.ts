import { createHash } from 'node:crypto';
import type { RawAnswer } from './standin.types.ts';

/** Thrown by a dialect's handler to answer at once with a refusal; the server sends `answer`. */
export class Refusal extends Error {
  constructor(readonly answer: RawAnswer) {
    super(`refused with HTTP ${answer.status}`);
  }
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): RawAnswer {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** A server-sent-events answer made of `data:` lines (each event's JSON), sent in one piece. */
export function sse(events: { event?: string; data: unknown }[], tail = ''): RawAnswer {
  const text = events.map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`).join('') + tail;
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: text };
}

/** A rough token count (four characters a token), only so usage figures move with the input. */
export function tokenEstimate(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** A deterministic unit-free vector for `text`: equal texts embed equally, different texts differently. */
export function vectorFor(text: string, dimensions: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dimensions; block++) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dimensions; i += 2)
      out.push(Math.round((digest.readUInt16BE(i) / 65535 - 0.5) * 2e6) / 1e6);
  }
  return out;
}

/** A valid 1×1 PNG (CRCs checked), base64: what an image endpoint returns in `b64_json`. */
export const TINY_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** An ID3 tag followed by one silent MPEG-1 Layer III frame (128 kbit/s, 44.1 kHz): enough to be recognised as MP3. */
export function silentMp3(): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]);
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat([id3, frame]);
}

/**
 * Raw answers no provider documents but every client meets: what sits between the platform and a provider (a captive
 * portal, a gateway, a proxy) or a broken server. Pass them to `Standin.respond`.
 */
export const RAW_ANSWERS = {
  /** HTTP 200 with an HTML page, as a captive portal or a misrouted base URL gives. */
  html200: (): RawAnswer => ({
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form action="/login"><input name="user"></form></body></html>',
  }),
  /** HTTP 200 announcing JSON whose text is cut short. */
  invalidJson: (): RawAnswer => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: '{"object":"list","data":[{"id":"gpt-4o","object":"model",',
  }),
  /** A redirect; a client that must not follow redirects stops here. */
  redirect: (location: string, status = 302): RawAnswer => ({ status, headers: { location }, body: '' }),
  /** A gateway's HTML error page (nginx's, say) in place of the provider's JSON error. */
  gatewayHtml: (status = 502): RawAnswer => ({
    status,
    headers: { 'content-type': 'text/html' },
    body: `<html>\r\n<head><title>${status} Bad Gateway</title></head>\r\n<body>\r\n<center><h1>${status} Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`,
  }),
  /** A JSON body whose connection is cut after `bytes` of it, its full length announced. */
  truncated: (body: unknown, bytes: number): RawAnswer => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    truncateAt: bytes,
  }),
} as const;
