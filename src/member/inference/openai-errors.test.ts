import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import { openAiErrorFromAppError, toAppError } from './openai-errors.ts';

describe('openAiErrorFromAppError', () => {
  it('keeps the status and code, picks OpenAI’s type by status and keeps retry-after', () => {
    const cases = [
      [new AppError('unauthorized', 'a valid credential is required'), 401, 'authentication_error'],
      [new AppError('not_found', 'no model openai/none'), 404, 'invalid_request_error'],
      [new AppError('model_unavailable', 'openai/x: provider_disabled'), 409, 'invalid_request_error'],
      [new AppError('context_length_exceeded', 'input 900 + max_output_tokens 200 exceeds 1000'), 400, 'invalid_request_error'],
      [new AppError('rate_limited', 'slow down', { headers: { 'retry-after': '7' } }), 429, 'rate_limit_error'],
      [new AppError('provider_error', 'upstream failed'), 502, 'api_error'],
      [new AppError('deadline_exceeded', 'too slow'), 504, 'api_error'],
    ] as const;
    for (const [error, status, type] of cases) {
      const answer = openAiErrorFromAppError(error);
      expect(answer.status).toBe(status);
      expect(answer.body).toEqual({ error: { message: error.message, type, param: null, code: error.code } });
    }
    expect(openAiErrorFromAppError(cases[4][0]).headers).toEqual({ 'retry-after': '7' });
  });

  it('names the parameter of an input error', () => {
    const answer = openAiErrorFromAppError(new AppError('parameter_invalid', 'body.messages.0.role: Invalid input'));
    expect(answer.body.error.param).toBe('messages.0.role');
    expect(
      openAiErrorFromAppError(new AppError('parameter_invalid', 'parameters.top_k: the model declares no such generation parameter')).body
        .error.param,
    ).toBe('parameters.top_k');
  });
});

describe('toAppError', () => {
  it('maps framework errors and hides unexpected ones', () => {
    const json = toAppError(Object.assign(new Error('Unexpected token'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }));
    expect(json).toMatchObject({ internal: false, error: { code: 'parameter_invalid', message: 'request body is not valid JSON' } });
    const crash = toAppError(new TypeError('secret detail'));
    expect(crash.internal).toBe(true);
    expect(crash.error.code).toBe('internal');
    expect(crash.error.message).not.toContain('secret');
  });
});
