import { AppError } from '../../core/errors.ts';
import { composeRef } from '../catalog/catalog.compose.ts';
import { compareRefs, type Catalog } from '../catalog/catalog.loader.ts';
import type { ModelDefinition, ProviderDeclaration } from '../catalog/catalog.schemas.ts';
import { WIRES } from '../catalog/wires.ts';
import type { PolicyDocument } from '../policy/policy.document.ts';

/**
 * What a provider's policy document and the deployment catalog together say about its definitions, as pure
 * functions of (catalog, document): the definition commands compute the next document from the one they are about to
 * replace and check it here before anything is written (spec: "Inheritance and composition": an invalid composed
 * model gives 422 and saves nothing). The projection (../projection/projection.ts) reads the same fields the same
 * way.
 */

/** The declaration in effect: the policy's override or custom declaration, else the catalog's; null when removed. */
export function effectiveDeclaration(catalog: Catalog, providerId: string, doc: PolicyDocument): ProviderDeclaration | null {
  const fromCatalog = catalog.providers.get(providerId);
  if (fromCatalog) return doc.provider_definition ?? fromCatalog.declaration;
  return doc.provider_definition && !doc.provider_removed ? doc.provider_definition : null;
}

/** The entry of `ref` as the configuration lists it: the authored one, else the catalog's; undefined when neither. */
export function entryOf(catalog: Catalog, providerId: string, doc: PolicyDocument, ref: string): ModelDefinition | undefined {
  return doc.model_definitions[ref] ?? catalog.providers.get(providerId)?.models.get(ref.slice(providerId.length + 1));
}

/** Every ref the configuration lists for a provider (catalog models and authored entries, removed ones included). */
export function configuredRefs(catalog: Catalog, providerId: string, doc: PolicyDocument): string[] {
  const refs = new Set(Object.keys(doc.model_definitions));
  for (const key of catalog.providers.get(providerId)?.models.keys() ?? []) refs.add(`${providerId}/${key}`);
  return [...refs].sort(compareRefs);
}

function invalid(message: string): AppError {
  return new AppError('validation_failed', message);
}

/**
 * Checks that a declaration names a supported adapter and credential lane (spec "Provider declaration": both "must
 * already be supported"; the schema checks the names, this the pair).
 */
export function checkDeclaration(declaration: ProviderDeclaration): void {
  const wire = WIRES[declaration.api_format];
  if (!wire.credentials.includes(declaration.credentials)) {
    throw invalid(
      `command.definition.credentials: the ${declaration.api_format} adapter supports the credential lanes ${wire.credentials.join(', ')}`,
    );
  }
}

/**
 * Composes one entry under a declaration, or throws 422 naming the field. An unknown `inherit` is reported with the
 * valid choices and without repeating the submitted name (error messages never echo client input).
 */
export function checkEntry(
  catalog: Catalog,
  providerId: string,
  declaration: ProviderDeclaration,
  ref: string,
  definition: ModelDefinition,
  where: string,
): void {
  if (definition.inherit !== undefined && !Object.hasOwn(catalog.modelDefinitions, definition.inherit)) {
    const names = Object.keys(catalog.modelDefinitions).sort(compareRefs);
    throw invalid(
      `${where}.inherit: unknown model definition; the choices are the names of configuration.model_definitions (${names.join(', ') || 'none'})`,
    );
  }
  const result = composeRef(providerId, declaration, ref, definition, catalog.modelDefinitions);
  if (!result.ok) throw invalid(`${where}: ${result.reason}`);
}

/**
 * Checks every live (not removed) model of the provider under its effective declaration: a declaration change must
 * not leave a model that no longer composes (for example an `api_format` without the model's workload). Model refs
 * in the message are stored or catalog refs, not this request's input.
 */
export function checkAllEntries(catalog: Catalog, providerId: string, doc: PolicyDocument): void {
  const declaration = effectiveDeclaration(catalog, providerId, doc);
  if (!declaration) return;
  const removed = new Set(doc.removed_models);
  for (const ref of configuredRefs(catalog, providerId, doc)) {
    if (removed.has(ref)) continue;
    const definition = entryOf(catalog, providerId, doc, ref);
    if (!definition) continue;
    try {
      checkEntry(catalog, providerId, declaration, ref, definition, 'definition');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      throw invalid(
        `command.definition: model ${ref} would not compose under this declaration (${error.message}); change or remove its entry first`,
      );
    }
  }
}
