import * as http2 from 'node:http2';
import { request as httpRequest } from 'node:http';

/** What a server answered to one raw HTTP/2 gRPC request: headers and trailers merged. */
export interface RawGrpcAnswer {
  httpStatus: number;
  /** `grpc-status` from the trailers (or the headers of a trailers-only answer); undefined when none came. */
  grpcStatus: number | undefined;
  grpcMessage: string | undefined;
  contentType: string | undefined;
  /** The response body: length-prefixed messages. */
  body: Buffer;
}

/** One gRPC length-prefixed message: the compressed flag, a 4-byte big-endian length and the bytes. */
export function grpcFrame(message: Uint8Array, compressed = false): Buffer {
  const out = Buffer.alloc(5 + message.byteLength);
  out.writeUInt8(compressed ? 1 : 0, 0);
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  return out;
}

/**
 * Sends exactly `body` as the request stream of `POST path` over a fresh HTTP/2 connection, with `headers` (which
 * may override `content-type`), so tests control every byte grpc-js gets.
 */
export async function rawGrpc(
  address: string,
  path: string,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<RawGrpcAnswer> {
  const session = http2.connect(`http://${address}`);
  session.on('error', () => undefined);
  try {
    return await rawGrpcOn(session, path, body, headers);
  } finally {
    session.close();
  }
}

/** `rawGrpc` on an open HTTP/2 session (many requests over one connection). */
export function rawGrpcOn(
  session: http2.ClientHttp2Session,
  path: string,
  body: Buffer,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<RawGrpcAnswer> {
  return new Promise<RawGrpcAnswer>((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
    let all: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (all = { ...all, ...h }));
    stream.on('trailers', (t: http2.IncomingHttpHeaders) => (all = { ...all, ...t }));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      const status = all['grpc-status'];
      const message = all['grpc-message'];
      resolve({
        httpStatus: Number(all[':status'] ?? 0),
        grpcStatus: typeof status === 'string' ? Number(status) : undefined,
        grpcMessage: typeof message === 'string' ? decodeURIComponent(message) : undefined,
        contentType: typeof all['content-type'] === 'string' ? all['content-type'] : undefined,
        body: Buffer.concat(chunks),
      });
    });
    stream.end(body);
  });
}

/**
 * An HTTP/1.1 request with raw headers (`['name', 'value', ...]`, names may repeat, which fetch cannot send);
 * answers the status and the parsed JSON body. A body goes with its `content-length`: given raw headers, Node's
 * client frames a DELETE's body with neither length nor chunking, so the server rightly reads it as the start of
 * the next request on the kept-alive connection.
 */
export function rawHttp(
  url: string,
  method: string,
  headers: string[],
  body?: string | Buffer,
): Promise<{ status: number; body: unknown; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const framing = body === undefined ? [] : ['content-length', String(Buffer.byteLength(body))];
    const req = httpRequest(url, { method, headers: ['host', target.host, ...framing, ...headers] }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
