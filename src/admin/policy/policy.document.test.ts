import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors.ts';
import {
  canonicalJson,
  emptyDocument,
  MAX_POLICY_BYTES,
  MAX_POLICY_REFERENCES,
  parseDocument,
  serializeDocument,
  withHidden,
  withInvalid,
} from './policy.document.ts';

describe('policy documents', () => {
  it('serialise as canonical JSON: sorted keys at every depth, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
    const doc = withInvalid(withHidden(emptyDocument(), 'p/b', true), 'p/a', true);
    expect(parseDocument(serializeDocument(doc))).toEqual(doc);
  });

  it('[ADM-LIM-1] count distinct references across hidden, invalid, definition and removal entries, up to 256', () => {
    const refs = Array.from({ length: MAX_POLICY_REFERENCES }, (_, i) => `p/m${i}`);
    const full = {
      ...emptyDocument(),
      hidden_models: refs.slice(0, 200),
      invalid_models: refs.slice(100),
      removed_models: ['p/m0'],
      model_definitions: { 'p/m1': {} },
    };
    expect(() => serializeDocument(full)).not.toThrow();
    const over = { ...full, model_definitions: { ...full.model_definitions, 'p/new': {} } };
    expect(() => serializeDocument(over)).toThrow(AppError);
    try {
      serializeDocument({ ...full, removed_models: ['p/other'] });
    } catch (error) {
      expect(error).toMatchObject({ code: 'validation_failed' });
    }
  });

  it('[ADM-LIM-1] refuse more than 2 MiB of canonical JSON', () => {
    const long = 'é'.repeat(400_000);
    const definitions = Object.fromEntries(Array.from({ length: 3 }, (_, i) => [`p/m${i}`, { display_name: long }]));
    const doc = { ...emptyDocument(), model_definitions: definitions };
    // 2.4 MB of UTF-8 but 1.2 M characters: the limit is on bytes.
    expect(canonicalJson(doc).length).toBeLessThan(MAX_POLICY_BYTES);
    expect(Buffer.byteLength(canonicalJson(doc))).toBeGreaterThan(MAX_POLICY_BYTES);
    expect(() => serializeDocument(doc)).toThrow(/2097152/);
  });
});
