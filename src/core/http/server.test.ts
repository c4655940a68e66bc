import fastifyFormbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { createHttpApp, hasUtf8Charset } from './server.ts';

describe('hasUtf8Charset', () => {
  it('accepts no charset or UTF-8 in any case, quoted or not, and nothing else', () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; Charset="Utf-8"',
      'application/x-www-form-urlencoded; q=1; charset=utf-8',
    ]) {
      expect(hasUtf8Charset(type), type).toBe(true);
    }
    for (const type of [
      'application/json; charset=latin1',
      'application/json; charset=utf8',
      'application/json; charset="utf-16"',
      'application/json; charset=',
      'application/json; charset=utf-8; charset=iso-8859-1',
    ]) {
      expect(hasUtf8Charset(type), type).toBe(false);
    }
  });
});

/**
 * Form bodies (the MCP listener's OAuth endpoints) under the factory's rules: they keep working in UTF-8, other
 * charsets and unstorable text are refused, and a scope's own error handler sees the status it must answer with.
 */
describe('createHttpApp with a form parser', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(options: { refuseUnstorableText?: boolean } = {}) {
    const built = createHttpApp({ log: createLogger({ level: 'silent' }), ...options });
    app = built;
    await built.register(fastifyFormbody);
    await built.register(async (scope) => {
      // As the OAuth scope does: RFC 6749 bodies, status from the error's statusCode.
      scope.setErrorHandler(async (error: FastifyError, _request, reply) =>
        reply.status(error.statusCode ?? 500).send({ error: 'invalid_request' }),
      );
      scope.post('/token', async (request) => ({ form: request.body }));
    });
    await built.listen({ host: '127.0.0.1', port: 0 });
    const address = built.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    return (body: string, type: string) =>
      fetch(`http://127.0.0.1:${address.port}/token`, { method: 'POST', headers: { 'content-type': type }, body });
  }

  it('parses UTF-8 forms, answers 415 for other charsets and 400 for NUL, in the scope’s own error body', async () => {
    const post = await start();
    const ok = await post('grant_type=authorization_code&code=caf%C3%A9', 'application/x-www-form-urlencoded; charset=UTF-8');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ form: { grant_type: 'authorization_code', code: 'café' } });
    const latin1 = await post('code=caf%E9', 'application/x-www-form-urlencoded; charset=iso-8859-1');
    expect(latin1.status).toBe(415);
    expect(await latin1.json()).toEqual({ error: 'invalid_request' });
    const nul = await post('code=a%00b', 'application/x-www-form-urlencoded');
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({ error: 'invalid_request' });
    expect((await post('{"code":"x"}', 'text/plain')).status).toBe(415);
  });

  it('leaves unstorable text to the routes when told to', async () => {
    const post = await start({ refuseUnstorableText: false });
    const nul = await post('code=a%00b', 'application/x-www-form-urlencoded');
    expect(nul.status).toBe(200);
    expect(await nul.json()).toEqual({ form: { code: 'a\u0000b' } });
  });
});

/**
 * Each request's logger is made lazily (request-logger.ts): whatever the level, the lines it does write are the ones
 * a real child writes, with the request id bound and credentials scrubbed, and the lines below the level are not.
 */
describe('createHttpApp request logging', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function linesOf(level: 'info' | 'warn'): Promise<Record<string, unknown>[]> {
    const lines: string[] = [];
    const destination = { write: (line: string) => void lines.push(line) };
    app = createHttpApp({ log: createLogger({ level, destination }) });
    app.get('/noisy', async (request) => {
      request.log.info({ detail: 'below warn' }, 'an info line');
      request.log.error({ token: 'Bearer sk-secret-value-0123456789' }, 'an error line');
      request.log.child({ step: 'nested' }).warn('a nested warning');
      return { level: request.log.level };
    });
    const answer = await app.inject({ method: 'GET', url: '/noisy', headers: { 'x-request-id': 'req-log-1' } });
    expect(answer.json()).toEqual({ level });
    return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('at warn writes the error and the nested warning with the request id, and no info lines', async () => {
    const lines = await linesOf('warn');
    expect(lines.map((l) => l.msg)).toEqual(['an error line', 'a nested warning']);
    for (const line of lines) expect(line.request_id).toBe('req-log-1');
    expect(lines[1]!.step).toBe('nested');
    expect(JSON.stringify(lines)).not.toContain('sk-secret-value');
  });

  it('at info also writes the info line and the request completed line, each with the request id', async () => {
    const lines = await linesOf('info');
    expect(lines.map((l) => l.msg)).toEqual(['an info line', 'an error line', 'a nested warning', 'request completed']);
    for (const line of lines) expect(line.request_id).toBe('req-log-1');
    expect(lines[3]).toMatchObject({ method: 'GET', path: '/noisy', status: 200 });
  });
});
