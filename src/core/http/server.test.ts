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
