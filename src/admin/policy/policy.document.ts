import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import {
  modelDefinitionSchema,
  providerDeclarationSchema,
  type ModelDefinition,
  type ProviderDeclaration,
} from '../catalog/catalog.schemas.ts';

/** Spec "Limits": at most 256 distinct references across definition entries, hidden models and invalid models. */
export const MAX_POLICY_REFERENCES = 256;
/** Spec "Limits": 2 MiB of canonical JSON. */
export const MAX_POLICY_BYTES = 2 * 1024 * 1024;

/**
 * What an Account's policy says about one provider, beyond `enabled`. Definition entries, removal entries and the
 * provider declaration are written by the definition commands (part 2); they are part of the document now so the
 * limits count them and the shape never needs a migration.
 */
export interface PolicyDocument {
  /** Manually hidden refs (spec: `model_visibility`). */
  hidden_models: string[];
  /** Refs marked invalid (spec: `model_availability`, discovery, model test). */
  invalid_models: string[];
  /** Authored model entries by ref: overrides of catalog models or custom models. */
  model_definitions: Record<string, ModelDefinition>;
  /** Removal entries: refs whose model is removed while the entry is kept so it can be restored. */
  removed_models: string[];
  /** An override of the catalog declaration, or the declaration of a custom provider. */
  provider_definition: ProviderDeclaration | null;
  /** True once a custom provider's declaration was deleted (`source` removed). */
  provider_removed: boolean;
}

const documentSchema = z.strictObject({
  hidden_models: z.array(z.string()),
  invalid_models: z.array(z.string()),
  model_definitions: z.record(z.string(), modelDefinitionSchema),
  removed_models: z.array(z.string()),
  provider_definition: providerDeclarationSchema.nullable(),
  provider_removed: z.boolean(),
});

export function emptyDocument(): PolicyDocument {
  return {
    hidden_models: [],
    invalid_models: [],
    model_definitions: {},
    removed_models: [],
    provider_definition: null,
    provider_removed: false,
  };
}

/** JSON with object keys sorted at every depth and no whitespace: the form the size limit is measured on. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The distinct refs a document mentions (what the 256 limit counts). */
function documentReferences(doc: PolicyDocument): Set<string> {
  return new Set([...doc.hidden_models, ...doc.invalid_models, ...Object.keys(doc.model_definitions), ...doc.removed_models]);
}

/**
 * Serialises a document for storage after checking the limits; over a limit is 422 `validation_failed` and the
 * caller writes nothing (spec: Endpoints rule 11).
 */
export function serializeDocument(doc: PolicyDocument): string {
  const refs = documentReferences(doc).size;
  if (refs > MAX_POLICY_REFERENCES) {
    throw new AppError(
      'validation_failed',
      `the provider policy would reference ${refs} distinct models; the limit is ${MAX_POLICY_REFERENCES}`,
    );
  }
  const text = canonicalJson(doc);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_POLICY_BYTES) {
    throw new AppError(
      'validation_failed',
      `the provider policy would take ${bytes} bytes of canonical JSON; the limit is ${MAX_POLICY_BYTES}`,
    );
  }
  return text;
}

/** Parses a stored document; a row that does not parse is corruption, reported as an internal error. */
export function parseDocument(text: string): PolicyDocument {
  const result = documentSchema.safeParse(JSON.parse(text));
  if (!result.success) throw new AppError('internal', 'a stored provider policy is corrupt', { cause: result.error });
  return result.data;
}

function toggled(list: readonly string[], ref: string, present: boolean): string[] {
  const set = new Set(list);
  if (present) set.add(ref);
  else set.delete(ref);
  return [...set].sort();
}

/** A copy of `doc` with `ref` hidden or shown. */
export function withHidden(doc: PolicyDocument, ref: string, hidden: boolean): PolicyDocument {
  return { ...doc, hidden_models: toggled(doc.hidden_models, ref, hidden) };
}

/** A copy of `doc` with `ref` marked invalid or cleared. */
export function withInvalid(doc: PolicyDocument, ref: string, invalid: boolean): PolicyDocument {
  return { ...doc, invalid_models: toggled(doc.invalid_models, ref, invalid) };
}
