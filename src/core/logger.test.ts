import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubString } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination: stream }), text: () => lines.join('') };
}

describe('logger redaction', () => {
  const token = 'pplat_' + 'A'.repeat(43);

  it('removes credentials at any depth, whatever the key case, and in arrays', () => {
    const { log, text } = capture();
    log.info(
      {
        err: { cause: { config: { headers: { Authorization: 'Bearer abc.def', 'X-Api-Key': 'k-123' } } } },
        tokens: [token],
        password: 'hunter2hunter2',
      },
      'call',
    );
    const out = text();
    for (const secret of ['abc.def', 'k-123', token, 'hunter2hunter2']) expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
  });

  it('scrubs secrets from strings: URLs, bearer values, tokens in messages and errors', () => {
    const { log, text } = capture();
    const error = Object.assign(new Error(`upstream said no to ${token} at https://x/cb?code=s3cr3t&state=st4te`), {
      code: 'ECONNREFUSED',
    });
    log.error({ err: error, url: '/callback?code=abc123&x=1' }, `failed for Bearer ${token}`);
    const out = text();
    for (const secret of [token, 's3cr3t', 'st4te', 'abc123']) expect(out).not.toContain(secret);
    expect(out).toContain('ECONNREFUSED');
    expect(out).toContain('x=1');
  });

  it('keeps error codes readable but hides OAuth codes', () => {
    const { log, text } = capture();
    log.warn({ code: 'FST_ERR_CTP_INVALID_JSON_BODY' }, 'a');
    log.warn({ code: '57P01' }, 'b');
    log.warn({ code: 'q1w2e3r4t5y6u7' }, 'c');
    const out = text();
    expect(out).toContain('FST_ERR_CTP_INVALID_JSON_BODY');
    expect(out).toContain('57P01');
    expect(out).not.toContain('q1w2e3r4t5y6u7');
  });

  it('scrubString leaves ordinary text alone', () => {
    expect(scrubString('GET /api/v1/admin/models?workload=text 200')).toBe('GET /api/v1/admin/models?workload=text 200');
  });
});
