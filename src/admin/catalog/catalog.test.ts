import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseAdminConfig } from '../admin.config.ts';
import { composeModel, type ComposedModel } from './catalog.compose.ts';
import { DEFAULT_CATALOG_DIR, loadCatalog, type Catalog } from './catalog.loader.ts';
import { modelRowSchema } from '../admin.schemas.ts';
import { type ModelDefinition, type ProviderDeclaration, type SharedModelDefinition } from './catalog.schemas.ts';
import { PARAMETER_PRESETS, WIRES } from './wires.ts';

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-unit-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function loaded(files: Record<string, string>): Catalog {
  const state = loadCatalog(dirWith(files));
  if (!state.ok) throw new Error(`${state.file}: ${state.reason}`);
  return state.catalog;
}

const openaiChat: ProviderDeclaration = {
  display_name: 'P',
  base_url: 'https://p.example/v1',
  api_format: 'openai_chat',
  credentials: 'api_key',
};

function compose(definition: ModelDefinition, shared: Record<string, SharedModelDefinition> = {}, declaration = openaiChat): ComposedModel {
  const result = composeModel({ providerId: 'p', declaration, modelKey: 'm', definition, shared });
  if (!result.ok) throw new Error(result.reason);
  return result.model;
}

function composeError(definition: ModelDefinition, shared: Record<string, SharedModelDefinition> = {}, declaration = openaiChat): string {
  const result = composeModel({ providerId: 'p', declaration, modelKey: 'm', definition, shared });
  if (result.ok) throw new Error('expected a composition failure');
  return result.reason;
}

describe('the shipped default catalog', () => {
  it('[ADM-CAT-1] is the repository catalog/ directory, resolved from the package root rather than the working directory', () => {
    expect(DEFAULT_CATALOG_DIR).toBe(resolve(import.meta.dirname, '..', '..', '..', 'catalog'));
    expect(parseAdminConfig({}).PLATFORM_CATALOG_DIR).toBe(DEFAULT_CATALOG_DIR);
    expect(parseAdminConfig({ PLATFORM_CATALOG_DIR: 'relative/dir' }).PLATFORM_CATALOG_DIR).toBe(resolve('relative/dir'));
  });

  it('[ADM-CAT-2] declares an OpenAI-compatible provider, Anthropic, Gemini, Mistral and a local server, several models each, inheriting shared definitions', () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(`${state.file}: ${state.reason}`);
    const { providers, composed, modelDefinitions } = state.catalog;
    const formats = [...providers.values()].map((p) => `${p.id}:${p.declaration.api_format}:${p.declaration.credentials}`);
    expect(formats).toEqual(
      expect.arrayContaining([
        'openai:openai_chat:api_key',
        'anthropic:anthropic_messages:api_key',
        'google:gemini_generate_content:api_key',
        'mistral:openai_chat:api_key',
        'ollama:openai_chat:none',
      ]),
    );
    expect(providers.get('ollama')?.declaration.base_url).toMatch(/^http:\/\/127\.0\.0\.1:11434/);
    for (const provider of providers.values()) {
      expect(provider.models.size, provider.id).toBeGreaterThanOrEqual(3);
      expect(
        [...provider.models.values()].some((m) => m.inherit !== undefined),
        provider.id,
      ).toBe(true);
    }
    for (const model of composed.values())
      if (model.workload === 'text_generation')
        expect(model.capabilities.limits.combined_input_output_tokens, model.ref).toBeGreaterThan(0);
    expect(Object.keys(modelDefinitions).length).toBeGreaterThanOrEqual(5);
    // Realistic pricing and capabilities survive composition.
    const sonnet = composed.get('anthropic/claude-sonnet-4-5');
    expect(sonnet?.model_id).toBe('claude-sonnet-4-5-20250929');
    expect(sonnet?.pricing).toMatchObject({ unit: 'USD', input_per_million_tokens: '3.00', output_per_million_tokens: '15.00' });
    expect(sonnet?.capabilities.reasoning).toEqual({ budget_tokens: { minimum: 1024, maximum: 32000 } });
    expect(composed.get('ollama/llama3.1:8b')?.pricing).toMatchObject({ input_per_million_tokens: '0', output_per_million_tokens: '0' });
  });

  it('[ADM-READ-2] holds refs whose upstream id contains "/" and splits them at the first "/" only', () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(state.reason);
    const model = state.catalog.composed.get('together/meta-llama/Llama-3.3-70B-Instruct-Turbo');
    expect(model).toMatchObject({ provider_id: 'together', model_id: 'meta-llama/Llama-3.3-70B-Instruct-Turbo' });
  });
});

describe('catalog files', () => {
  it('[ADM-CAT-1] reads YAML and JSON files of the directory in name order and ignores other files', () => {
    const catalog = loaded({
      'b.json': JSON.stringify({ providers: { jp: { ...openaiChat, models: { x: {} } } } }),
      'a.yml': 'model_definitions:\n  d: { capabilities: { tool_calls: false } }\n',
      'c.yaml':
        'providers:\n  yp:\n    display_name: Y\n    base_url: https://y.example\n    api_format: openai_chat\n    credentials: none\n    models:\n      m: { inherit: d }\n',
      'README.md': '# not a catalog file',
    });
    expect([...catalog.providers.keys()]).toEqual(['jp', 'yp']);
    expect(catalog.files.map((f) => f.split('/').pop())).toEqual(['a.yml', 'b.json', 'c.yaml']);
    expect(catalog.composed.get('yp/m')?.capabilities.tool_calls).toBe(false);
  });

  it.each([
    ['a missing directory', null, /does not exist/],
    ['an empty directory', {}, /holds no catalog file/],
    ['invalid YAML', { 'x.yaml': 'providers: [unclosed' }, /x\.yaml.*|is not valid YAML/],
    ['invalid JSON', { 'x.json': '{"providers":' }, /is not valid JSON/],
    ['an unknown field', { 'x.yaml': 'provider: {}\n' }, /Unrecognized key/],
    [
      'an unsupported api_format',
      { 'x.yaml': 'providers:\n  p: { display_name: P, base_url: "https://p", api_format: soap, credentials: api_key }\n' },
      /providers\.p\.api_format/,
    ],
    [
      'an unsupported lane for the adapter',
      { 'x.yaml': 'providers:\n  p: { display_name: P, base_url: "https://p", api_format: anthropic_messages, credentials: none }\n' },
      /does not support the none credential lane/,
    ],
    [
      'an unknown inherit',
      {
        'x.yaml':
          'providers:\n  p: { display_name: P, base_url: "https://p", api_format: openai_chat, credentials: api_key, models: { m: { inherit: nope } } }\n',
      },
      /providers\.p\.models\.m: inherit: unknown model definition "nope"/,
    ],
    [
      'a provider declared twice',
      {
        'a.yaml': 'providers:\n  p: { display_name: P, base_url: "https://p", api_format: openai_chat, credentials: api_key }\n',
        'b.yaml': 'providers:\n  p: { display_name: P, base_url: "https://p", api_format: openai_chat, credentials: api_key }\n',
      },
      /also declared in .*a\.yaml/,
    ],
    ['a provider id with "/"', { 'x.json': JSON.stringify({ providers: { 'a/b': openaiChat } }) }, /provider id/],
  ])('[ADM-CAT-3] refuses %s and names the file and the reason', (_name, files, reason) => {
    const dir = files === null ? join(tmpdir(), 'no-such-catalog-dir-' + Math.random().toString(36).slice(2)) : dirWith(files);
    const state = loadCatalog(dir);
    expect(state.ok).toBe(false);
    if (state.ok) return;
    expect(state.file.startsWith(dir)).toBe(true);
    expect(`${state.file}: ${state.reason}`).toMatch(reason);
  });

  it.each([
    ['an empty YAML file', { 'defs.yaml': 'model_definitions:\n  d: {}\n', 'x.yaml': '' }, 'x.yaml', /the file is empty/],
    [
      'a comment-only YAML file',
      { 'defs.yaml': 'model_definitions:\n  d: {}\n', 'x.yml': '# providers were here\n' },
      'x.yml',
      /the file is empty/,
    ],
    ['a whitespace-only YAML file', { 'x.yaml': '\n   \n' }, 'x.yaml', /the file is empty/],
    ['an empty JSON file', { 'x.json': '' }, 'x.json', /is not valid JSON/],
    ['a JSON null', { 'x.json': 'null' }, 'x.json', /the file is empty/],
    [
      'an empty JSON object',
      {
        'a.yaml': 'providers:\n  p: { display_name: P, base_url: "https://p", api_format: openai_chat, credentials: none }\n',
        'x.json': '{}',
      },
      'x.json',
      /declares neither providers nor model_definitions/,
    ],
    [
      'empty providers and model_definitions maps',
      { 'x.yaml': 'providers: {}\nmodel_definitions: {}\n' },
      'x.yaml',
      /declares neither providers nor model_definitions/,
    ],
    ['a file truncated after its first key', { 'x.yaml': 'providers:\n' }, 'x.yaml', /providers/],
  ])(
    '[ADM-CAT-5] regression: an empty or truncated catalog file is refused, not loaded as "nothing" (%s)',
    (_name, files, culprit, reason) => {
      const dir = dirWith(files);
      const state = loadCatalog(dir);
      expect(state.ok).toBe(false);
      if (state.ok) return;
      expect(state.file).toBe(join(dir, culprit));
      expect(state.reason).toMatch(reason);
    },
  );

  it('[ADM-CAT-5] regression: a catalog with zero providers is refused (it would answer {"models":[]})', () => {
    const dir = dirWith({ 'definitions.yaml': 'model_definitions:\n  chat: { capabilities: { workload: text_generation } }\n' });
    const state = loadCatalog(dir);
    expect(state.ok).toBe(false);
    if (state.ok) return;
    expect(state.file).toBe(join(dir, 'definitions.yaml'));
    expect(state.reason).toMatch(/no provider is declared \(files read: definitions\.yaml\)/);
    // With several files none of which declares a provider, the directory is named and the files are listed.
    const two = dirWith({ 'a.yaml': 'model_definitions:\n  a: {}\n', 'b.yaml': 'model_definitions:\n  b: {}\n' });
    const both = loadCatalog(two);
    expect(both.ok).toBe(false);
    if (both.ok) return;
    expect(both.file).toBe(two);
    expect(both.reason).toMatch(/files read: a\.yaml, b\.yaml/);
  });

  it('[ADM-CAT-4] refuses prices in shared definitions and never inherits them', () => {
    const state = loadCatalog(
      dirWith({ 'x.yaml': 'model_definitions:\n  d:\n    pricing: { unit: USD, input_per_million_tokens: "1" }\n' }),
    );
    expect(state.ok).toBe(false);
    if (!state.ok) expect(state.reason).toMatch(/model_definitions\.d.*Unrecognized key.*pricing/);
    expect(compose({ inherit: 'd' }, { d: { capabilities: { tool_calls: false } } }).pricing).toBeNull();
  });
});

describe('composition', () => {
  const shared: Record<string, SharedModelDefinition> = {
    base: {
      capabilities: {
        input_modalities: ['image', 'pdf'],
        limits: { combined_input_output_tokens: 1000, output_tokens: 100 },
        reasoning: { efforts: ['low', 'high'] },
        generation_parameters: { temperature: { kind: 'number', minimum: 0, maximum: 2, default: 1 }, verbosity: {} },
        wire_options: { prompt_format: 'model3_5' },
        model_identity: 'vendor/base',
      },
    },
  };

  it('[ADM-DEF-1] merges objects recursively, replaces limits, arrays and scalars, and keeps explicit null', () => {
    const model = compose(
      {
        inherit: 'base',
        capabilities: {
          input_modalities: ['audio'],
          limits: { combined_input_output_tokens: 5000 },
          reasoning: null,
          generation_parameters: { temperature: { maximum: 1 } },
          model_identity: null,
        },
      },
      shared,
    );
    expect(model.capabilities.input_modalities).toEqual(['audio']);
    // limits replaced as a whole: the inherited output_tokens is gone.
    expect(model.capabilities.limits).toEqual({ combined_input_output_tokens: 5000 });
    // generation_parameters merged recursively: the inherited verbosity stays, temperature keeps kind and minimum.
    expect(model.capabilities.generation_parameters.temperature).toEqual({
      kind: 'number',
      default: 1,
      minimum: 0,
      maximum: 1,
      allowed_values: null,
    });
    expect(model.capabilities.generation_parameters.verbosity).toEqual(PARAMETER_PRESETS.verbosity);
    expect(model.capabilities.reasoning).toBeNull();
    expect(model.capabilities.model_identity).toBeNull();
    expect(model.capabilities.wire_options).toEqual({ prompt_format: 'model3_5' });
    expect(composeError({ inherit: 'missing' }, shared)).toMatch(/unknown model definition/);
  });

  it('[ADM-DEF-2] defaults input to [] and output to the workload, inherits wire flags, and explicit false disables', () => {
    const text = compose({});
    expect(text.workload).toBe('text_generation');
    expect(text.capabilities.input_modalities).toEqual([]);
    expect(text.capabilities.output_modalities).toEqual(['text']);
    expect(text.capabilities).toMatchObject({ tool_calls: true, streaming: true, prompt_caching: false, structured_output: true });
    expect(compose({ capabilities: { workload: 'image_generation' } }).capabilities.output_modalities).toEqual(['image']);
    expect(compose({ capabilities: { workload: 'speech' } }).capabilities.output_modalities).toEqual(['audio']);
    expect(compose({ capabilities: { workload: 'embeddings' } }).capabilities.output_modalities).toEqual(['embedding']);
    expect(compose({ capabilities: { workload: 'transcription', input_modalities: ['audio'] } }).capabilities.output_modalities).toEqual([
      'text',
    ]);
    expect(compose({ capabilities: { tool_calls: false, streaming: false } }).capabilities).toMatchObject({
      tool_calls: false,
      streaming: false,
    });
    // A wire without a capability cannot be declared to have it.
    expect(composeError({ capabilities: { prompt_caching: true } })).toMatch(/prompt_caching/);
    expect(composeError({ capabilities: { workload: 'speech' } }, {}, { ...openaiChat, api_format: 'anthropic_messages' })).toMatch(
      /does not support the speech workload/,
    );
    expect(composeError({ capabilities: { workload: 'embeddings', output_modalities: ['text'] } })).toMatch(/embeddings output exactly/);
  });

  it('[ADM-DEF-3] fills presets, requires kind elsewhere, inherits or empties the wire table, and output_format false disables structured output', () => {
    expect(compose({}).capabilities.generation_parameters).toEqual(WIRES.openai_chat.workloads.text_generation?.generation_parameters);
    expect(compose({ capabilities: { generation_parameters: {} } }).capabilities.generation_parameters).toEqual({});
    const declared = compose({
      capabilities: { generation_parameters: { max_output_tokens: {}, verbosity: { default: 'high' }, seed: { kind: 'integer' } } },
    });
    expect(declared.capabilities.generation_parameters).toEqual({
      max_output_tokens: { kind: 'integer', default: null, minimum: 1, maximum: null, allowed_values: null },
      verbosity: { kind: 'string', default: 'high', minimum: null, maximum: null, allowed_values: ['low', 'medium', 'high'] },
      seed: { kind: 'integer', default: null, minimum: null, maximum: null, allowed_values: null },
    });
    expect(composeError({ capabilities: { generation_parameters: { seed: {} } } })).toMatch(/seed: kind is required/);
    expect(composeError({ capabilities: { generation_parameters: { verbosity: { default: 'loud' } } } })).toMatch(
      /default is not one of allowed_values/,
    );
    expect(composeError({ capabilities: { generation_parameters: { max_output_tokens: { minimum: 10, maximum: 5 } } } })).toMatch(
      /minimum is above maximum/,
    );
    const noStructured = compose({ capabilities: { generation_parameters: { output_format: false, max_output_tokens: {} } } });
    expect(noStructured.capabilities.structured_output).toBe(false);
    expect(Object.keys(noStructured.capabilities.generation_parameters)).toEqual(['max_output_tokens']);
    expect(composeError({ capabilities: { generation_parameters: { temperature: false } } })).toMatch(/only for output_format/);
  });

  it('[ADM-DEF-4] inherits the wire counter, treats null as the byte estimate and validates counter fields', () => {
    expect(compose({}).capabilities.token_counter).toEqual(WIRES.openai_chat.workloads.text_generation?.token_counter);
    expect(compose({ capabilities: { token_counter: null } }).capabilities.token_counter).toBeNull();
    expect(compose({ capabilities: { token_counter: { kind: 'hub', tokenizer_id: 'org/tok' } } }).capabilities.token_counter).toEqual({
      kind: 'hub',
      tokenizer_id: 'org/tok',
    });
    const bad = (counter: unknown) =>
      loadCatalog(
        dirWith({
          'x.json': JSON.stringify({ providers: { p: { ...openaiChat, models: { m: { capabilities: { token_counter: counter } } } } } }),
        }),
      );
    expect(bad({ kind: 'anchored', encoding: 'cl100k_base', safety_factor: '0.9' }).ok).toBe(false);
    expect(bad({ kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1' }).ok).toBe(true);
    expect(bad({ kind: 'bpe', encoding: 'made_up' }).ok).toBe(false);
    expect(bad({ kind: 'hub' }).ok).toBe(false);
  });

  it('[ADM-DEF-5] limits model_identity to nonempty, trimmed and at most 256 bytes', () => {
    const check = (identity: string) =>
      loadCatalog(
        dirWith({
          'x.json': JSON.stringify({ providers: { p: { ...openaiChat, models: { m: { capabilities: { model_identity: identity } } } } } }),
        }),
      ).ok;
    expect(check('vendor/model-2025')).toBe(true);
    expect(check('é'.repeat(128))).toBe(true);
    expect(check('é'.repeat(129))).toBe(false);
    expect(check('')).toBe(false);
    expect(check(' padded')).toBe(false);
  });

  it('[ADM-DEF-6] accepts missing and all-zero prices and validates decimals and formulas', () => {
    expect(compose({}).pricing).toBeNull();
    expect(compose({ pricing: { unit: 'USD', input_per_million_tokens: '0', output_per_million_tokens: '0' } }).pricing).not.toBeNull();
    expect(composeError({ pricing: { unit: 'USD', input_per_million_tokens: '1' } })).toMatch(
      /needs input_per_million_tokens and output_per_million_tokens/,
    );
    expect(
      composeError({
        capabilities: { workload: 'embeddings' },
        pricing: { unit: 'USD', input_per_million_tokens: '1', output_per_million_tokens: '1' },
      }),
    ).toMatch(/does not apply to embeddings/);
    const decimal = (value: string) =>
      loadCatalog(
        dirWith({
          'x.json': JSON.stringify({
            providers: {
              p: {
                ...openaiChat,
                models: { m: { pricing: { unit: 'USD', input_per_million_tokens: value, output_per_million_tokens: '1' } } },
              },
            },
          }),
        }),
      ).ok;
    expect(decimal('2.50')).toBe(true);
    expect(decimal('-1')).toBe(false);
    expect(decimal('1e3')).toBe(false);
  });

  it('[ADM-DEF-7] defaults model_id to the reference after the first "/" and honours an authored one', () => {
    const result = composeModel({ providerId: 'p', declaration: openaiChat, modelKey: 'org/name', definition: {}, shared: {} });
    expect(result.ok && result.model).toMatchObject({ ref: 'p/org/name', model_id: 'org/name' });
    expect(compose({ model_id: 'm-2025-01-01' }).model_id).toBe('m-2025-01-01');
  });

  it('[ADM-DEF-8] accepts only the supported prompt_format value', () => {
    const check = (format: unknown) =>
      loadCatalog(
        dirWith({
          'x.json': JSON.stringify({
            providers: { p: { ...openaiChat, models: { m: { capabilities: { wire_options: { prompt_format: format } } } } } },
          }),
        }),
      ).ok;
    expect(check('model3_5')).toBe(true);
    expect(check('chatml')).toBe(false);
    expect(compose({}).capabilities.wire_options).toEqual({ prompt_format: null });
  });
});

describe('composed models hold to the published schema', () => {
  const anchored: Record<string, SharedModelDefinition> = {
    counted: {
      capabilities: { workload: 'text_generation', token_counter: { kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.25' } },
    },
  };

  it('[ADM-DEF-9] regression: a hub token_counter over an inherited anchored one is an invalid composed model, not a mixed value', () => {
    const reason = composeError(
      { inherit: 'counted', capabilities: { token_counter: { kind: 'hub', tokenizer_id: 'org/tok' } } },
      anchored,
    );
    expect(reason).toMatch(/^the composed capabilities are invalid: capabilities\.token_counter: /);
    expect(reason).toMatch(/"encoding", "safety_factor"/);
    // The same kind merges field by field, as the spec's recursive merge says.
    const tuned = compose(
      { inherit: 'counted', capabilities: { token_counter: { kind: 'anchored', safety_factor: '1.5' } as never } },
      anchored,
    );
    expect(tuned.capabilities.token_counter).toEqual({ kind: 'anchored', encoding: 'cl100k_base', safety_factor: '1.5' });
    // null still selects the byte estimate over an inherited counter.
    expect(compose({ inherit: 'counted', capabilities: { token_counter: null } }, anchored).capabilities.token_counter).toBeNull();
  });

  it('[ADM-DEF-9] the loader refuses such a catalog with a message naming the file, the provider and the model', () => {
    const dir = dirWith({
      'defs.yaml':
        'model_definitions:\n  counted:\n    capabilities:\n      token_counter: { kind: anchored, encoding: cl100k_base, safety_factor: "1.25" }\n',
      'acme.yaml':
        'providers:\n  acme:\n    display_name: Acme\n    base_url: https://acme.example/v1\n    api_format: openai_chat\n    credentials: api_key\n    models:\n' +
        '      fine: { inherit: counted }\n      org/mixed:\n        inherit: counted\n        capabilities:\n          token_counter: { kind: hub, tokenizer_id: org/tok }\n',
    });
    const state = loadCatalog(dir);
    expect(state.ok).toBe(false);
    if (state.ok) return;
    expect(state.file).toBe(join(dir, 'acme.yaml'));
    expect(state.reason).toMatch(
      /^providers\.acme\.models\.org\/mixed: the composed capabilities are invalid: capabilities\.token_counter: /,
    );
  });

  it('[ADM-DEF-9] the shipped catalog loads and every composed model is a valid model row of the published schema', () => {
    const state = loadCatalog(DEFAULT_CATALOG_DIR);
    if (!state.ok) throw new Error(`${state.file}: ${state.reason}`);
    expect(state.catalog.composed.size).toBeGreaterThan(20);
    // The JSON Schema the OpenAPI document publishes for a model row (the same conversion as src/admin/openapi.ts).
    const published = z.toJSONSchema(modelRowSchema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' });
    const validate = new Ajv2020({ strict: false }).compile(published);
    for (const model of state.catalog.composed.values()) {
      const row = { ...model, token_counter_available: true, available: false, visible: true, unavailable_reason: 'provider_disabled' };
      expect(validate(row), `${model.ref}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    // The check can fail: the mixed counter of the bug is refused by the published schema.
    const llama = state.catalog.composed.get('ollama/llama3.1:8b');
    if (!llama) throw new Error('ollama/llama3.1:8b is missing');
    const mixed = { kind: 'hub', encoding: 'cl100k_base', safety_factor: '1.25', tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct' };
    expect(
      validate({
        ...llama,
        capabilities: { ...llama.capabilities, token_counter: mixed },
        token_counter_available: true,
        available: false,
        visible: true,
        unavailable_reason: 'provider_disabled',
      }),
    ).toBe(false);
    expect(state.catalog.composed.get('ollama/llama3.1:8b')?.capabilities.token_counter).toEqual({
      kind: 'hub',
      tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct',
    });
  });
});
