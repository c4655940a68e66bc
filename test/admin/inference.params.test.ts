/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are untyped JSON; the assertions pin their shape */
// Issue 16: the generation parameters a model's composed table declares reach the provider, for embeddings too
// (`dimensions` on OpenAI, `output_dimensionality` on Gemini), from the native route and from the OpenAI surface;
// OpenAI's `reasoning_effort` drives a reasoning model and is refused for one without reasoning.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ComposedModel } from '../../src/admin/catalog/catalog.compose.ts';
import { embeddingsParameters } from '../../src/admin/inference/inference.service.ts';
import { AppError } from '../../src/core/errors.ts';
import { openAiErrorFromAppError } from '../../src/member/inference/openai-errors.ts';
import { dialects } from '../support/databases.ts';
import { addHuman, type Reply } from './admin-harness.ts';
import { openProviderStandins, type ProviderStandins } from './provider-standins.ts';

const PATH = '/agent_api/v1/inference_requests';
const OPENAI_EMBEDDING = 'openai/text-embedding-3-small';
const GEMINI_EMBEDDING = 'google/gemini-embedding-001';

describe.each(dialects)('generation parameters on %s', (dialect) => {
  let f: ProviderStandins;
  let token: string;
  let client: OpenAI;
  beforeAll(async () => {
    f = await openProviderStandins(dialect, { standin: { reply: 'ok' } });
    token = (await addHuman(f.h, 'member')).member;
    client = new OpenAI({ apiKey: token, baseURL: `${f.h.url}/agent_api/v1`, maxRetries: 0 });
  });
  afterAll(async () => f.close());
  beforeEach(() => {
    for (const s of Object.values(f.standins)) s.reset();
  });

  const infer = (body: Record<string, unknown>): Promise<Reply> => f.h.call('POST', PATH, { token, body });
  const sent = (standin: 'openai' | 'gemini', path: string) =>
    f.standins[standin].requests.filter((r) => r.path.endsWith(path)).map((r) => r.json as Record<string, unknown>);

  it('sends native embeddings dimensions to OpenAI', async () => {
    const reply = await infer({ model: OPENAI_EMBEDDING, workload: 'embeddings', input: ['a', 'b'], parameters: { dimensions: 16 } });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.embeddings[0]).toHaveLength(16);
    expect(sent('openai', '/embeddings')[0]).toMatchObject({ model: 'text-embedding-3-small', dimensions: 16 });
  });

  it('sends native output_dimensionality to Gemini in each request', async () => {
    const reply = await infer({
      model: GEMINI_EMBEDDING,
      workload: 'embeddings',
      input: ['a', 'b'],
      parameters: { output_dimensionality: 256 },
    });
    expect(reply.status, reply.text).toBe(200);
    const requests = sent('gemini', ':batchEmbedContents')[0]?.requests as { outputDimensionality?: number }[];
    expect(requests.map((r) => r.outputDimensionality)).toEqual([256, 256]);
    expect(reply.body.embeddings[1]).toHaveLength(256);
  });

  it('refuses an embeddings parameter the model does not declare, naming it, before any upstream call', async () => {
    const reply = await infer({ model: GEMINI_EMBEDDING, workload: 'embeddings', input: 'a', parameters: { dimensions: 16 } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('parameter_invalid');
    expect(reply.text).toContain('parameters.dimensions');
    const low = await infer({ model: GEMINI_EMBEDDING, workload: 'embeddings', input: 'a', parameters: { output_dimensionality: 8 } });
    expect(low.status).toBe(400);
    expect(low.text).toContain('parameters.output_dimensionality');
    expect(f.standins.gemini.requests).toHaveLength(0);
  });

  it('takes dimensions from the official OpenAI client, under the name each model declares', async () => {
    const openai = await client.embeddings.create({ model: OPENAI_EMBEDDING, input: ['x'], dimensions: 12 });
    expect(openai.data[0]?.embedding).toHaveLength(12);
    expect(sent('openai', '/embeddings')[0]).toMatchObject({ dimensions: 12 });
    const gemini = await client.embeddings.create({ model: GEMINI_EMBEDDING, input: ['x'], dimensions: 128 });
    expect(gemini.data[0]?.embedding).toHaveLength(128);
    const requests = sent('gemini', ':batchEmbedContents')[0]?.requests as { outputDimensionality?: number }[];
    expect(requests[0]?.outputDimensionality).toBe(128);
  });

  it('maps reasoning_effort to a reasoning model’s request and refuses it for a model without reasoning', async () => {
    const completion = await client.chat.completions.create({
      model: 'openai/gpt-5-mini',
      messages: [{ role: 'user', content: 'hi' }],
      reasoning_effort: 'low',
    });
    expect(completion.choices[0]?.message.content).toBe('ok');
    expect(sent('openai', '/chat/completions')[0]).toMatchObject({ model: 'gpt-5-mini', reasoning_effort: 'low' });
    const native = await infer({ model: 'openai/gpt-5', messages: [{ role: 'user', content: 'hi' }], reasoning: { effort: 'high' } });
    expect(native.status, native.text).toBe(200);
    expect(sent('openai', '/chat/completions')[1]).toMatchObject({ reasoning_effort: 'high' });

    const refused = await client.chat.completions
      .create({ model: 'openai/gpt-4.1', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((refused as InstanceType<typeof OpenAI.APIError>).message).toContain('reasoning');
    const undeclared = await client.chat.completions
      .create({ model: 'openai/gpt-5-mini', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'xhigh' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((undeclared as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(f.standins.openai.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(2);
  });
});

describe('embeddingsParameters', () => {
  const model = (table: Record<string, unknown>) =>
    ({ ref: 'p/m', capabilities: { generation_parameters: table } }) as unknown as ComposedModel;
  it('puts the OpenAI surface’s dimensions under the name the model declares, and refuses it when there is none', () => {
    expect(embeddingsParameters(model({ dimensions: {} }), { workload: 'embeddings', input: ['x'], dimensions: 8 })).toEqual({
      dimensions: 8,
    });
    expect(embeddingsParameters(model({ output_dimensionality: {} }), { workload: 'embeddings', input: ['x'], dimensions: 8 })).toEqual({
      output_dimensionality: 8,
    });
    let refusal: unknown;
    try {
      embeddingsParameters(model({}), { workload: 'embeddings', input: ['x'], dimensions: 8 });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    const answer = openAiErrorFromAppError(refusal as AppError);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ param: 'dimensions', code: 'parameter_invalid' });
  });
});
