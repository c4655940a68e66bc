import { describe, expect, it } from 'vitest';
import type { CompletedEmbeddings } from '../../admin/index.ts';
import { AppError } from '../../core/errors.ts';
import { base64Embedding, embeddingsListObject, parseEmbeddingsRequest } from './openai-embeddings.translate.ts';
import { openAiErrorFromAppError } from './openai-errors.ts';

function refusal(body: unknown) {
  try {
    parseEmbeddingsRequest(body);
  } catch (error) {
    if (error instanceof AppError) return openAiErrorFromAppError(error);
    throw error;
  }
  throw new Error('the body was accepted');
}

describe('parseEmbeddingsRequest', () => {
  it('takes one string or a list, float by default, and ignores user', () => {
    expect(parseEmbeddingsRequest({ model: 'openai/emb', input: 'hello', user: 'u1' })).toEqual({
      request: { models: ['openai/emb'], input: { workload: 'embeddings', input: ['hello'] } },
      encoding: 'float',
    });
    expect(parseEmbeddingsRequest({ model: 'openai/emb', input: ['a', 'b'], encoding_format: 'base64' })).toEqual({
      request: { models: ['openai/emb'], input: { workload: 'embeddings', input: ['a', 'b'] } },
      encoding: 'base64',
    });
  });

  it('refuses non-integer dimensions, token arrays, empty input and unknown encodings, naming the field', () => {
    const cases: [unknown, string][] = [
      [{ model: 'm', input: 'x', dimensions: 2.5 }, 'dimensions'],
      [{ model: 'm', input: [1, 2, 3] }, 'input'],
      [{ model: 'm', input: '' }, 'input'],
      [{ model: 'm', input: [] }, 'input'],
      [{ model: 'm', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
      [{ input: 'x' }, 'model'],
    ];
    for (const [body, param] of cases) {
      const answer = refusal(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param });
    }
  });
});

describe('embeddingsListObject', () => {
  const answer: CompletedEmbeddings = {
    meta: { request_id: 'req_2', model: 'openai/emb', model_identity: null, workload: 'embeddings' },
    output: { embeddings: [[0.5, -1.25], [3]], usage: null },
    usage: { input_tokens: 6, output_tokens: 0, cached_input_tokens: null },
    cost: null,
  };

  it('answers OpenAI’s list in input order with usage', () => {
    expect(embeddingsListObject(answer, 'float')).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1.25] },
        { object: 'embedding', index: 1, embedding: [3] },
      ],
      model: 'openai/emb',
      usage: { prompt_tokens: 6, total_tokens: 6 },
      platform: { request_id: 'req_2', model_identity: null, cost: null },
    });
    expect(embeddingsListObject({ ...answer, usage: null }, 'float').usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
  });

  it('encodes base64 as little-endian float32, as OpenAI does', () => {
    // 0.5 = 0x3f000000, -1.25 = 0xbfa00000, little-endian.
    expect(Buffer.from(base64Embedding([0.5, -1.25]), 'base64')).toEqual(Buffer.from([0, 0, 0, 0x3f, 0, 0, 0xa0, 0xbf]));
    const data = embeddingsListObject(answer, 'base64').data;
    const decoded = data.map((d) => {
      const bytes = Buffer.from(d.embedding as string, 'base64');
      return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    });
    expect(decoded).toEqual([[0.5, -1.25], [3]]);
  });
});
