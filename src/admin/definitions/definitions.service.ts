import { AppError } from '../../core/errors.ts';
import type { Catalog } from '../catalog/catalog.loader.ts';
import { modelKeySchema, providerIdSchema, type ModelDefinition, type ProviderDeclaration } from '../catalog/catalog.schemas.ts';
import { canonicalJson, emptyDocument, type PolicyDocument } from '../policy/policy.document.ts';
import { unknownModel, unknownProvider, type AbsentRule, type Mutation, type PolicyService } from '../policy/policy.service.ts';
import type { EffectiveProvider } from '../projection/projection.ts';
import { checkAllEntries, checkDeclaration, checkEntry, effectiveDeclaration, entryOf } from './definitions.document.ts';

export interface DefinitionServiceDeps {
  catalog: Catalog;
  policy: Pick<PolicyService, 'apply'>;
}

type Outcome = 'created' | 'updated' | 'noop';
type Current = { enabled: boolean; document: PolicyDocument };

function sorted(list: Iterable<string>): string[] {
  return [...new Set(list)].sort();
}

/**
 * The five definition commands (spec: Endpoints, "States and transitions" rows for definitions). Each computes the
 * next policy document from the one it replaces, checks it (422 `validation_failed`, nothing written) and writes it
 * through the policy service's one versioned write, so definitions share the lane and visibility commands' version
 * rules, limits and races. No command enables a provider, touches a credential or calls upstream (rule 3).
 */
export function createDefinitionService(deps: DefinitionServiceDeps) {
  const { catalog, policy } = deps;

  /**
   * Runs a document change under the version rules. An absent policy is created disabled with the change applied to
   * an empty document (spec: "PUT definition, new provider id: created disabled"), unless the change is a no-op
   * there, in which case nothing is created.
   */
  function write(
    accountId: string,
    providerId: string,
    expected: number | null,
    change: (doc: PolicyDocument) => PolicyDocument | 'noop',
  ): Promise<Outcome> {
    const step = (current: Current): Mutation => {
      const next = change(current.document);
      if (next === 'noop' || canonicalJson(next) === canonicalJson(current.document)) return 'noop';
      return { enabled: current.enabled, document: next };
    };
    const absent: AbsentRule = { create: () => step({ enabled: false, document: emptyDocument() }) };
    return policy.apply({ accountId, providerId }, expected, absent, step);
  }

  /** 404 unless the ref belongs to the provider; 422 when the part after the provider's `/` is not a model name. */
  function checkRef(provider: { id: string }, ref: string): void {
    if (!ref.startsWith(`${provider.id}/`)) throw unknownModel(provider as EffectiveProvider, ref);
    if (!modelKeySchema.safeParse(ref.slice(provider.id.length + 1)).success) {
      throw new AppError(
        'validation_failed',
        'command.model: the part after the provider id must be a model name (1 to 256 characters, no control characters, no leading or trailing whitespace)',
      );
    }
  }

  return {
    /**
     * `PUT …/definition`: a catalog provider gets an override (`source` override); another id becomes a custom
     * provider, created disabled; a removed custom provider is recreated with the version read from it. The policy's
     * `enabled` is never changed.
     */
    putProviderDefinition(
      accountId: string,
      providerId: string,
      declaration: ProviderDeclaration,
      expected: number | null,
    ): Promise<Outcome> {
      if (!catalog.providers.has(providerId) && !providerIdSchema.safeParse(providerId).success) {
        throw new AppError(
          'validation_failed',
          'provider_id: a new provider id has lower-case letters, digits, ".", "_" or "-", at most 63 characters, starting with a letter or digit',
        );
      }
      checkDeclaration(declaration);
      return write(accountId, providerId, expected, (doc) => {
        const next: PolicyDocument = { ...doc, provider_definition: declaration, provider_removed: false };
        checkAllEntries(catalog, providerId, next);
        return next;
      });
    },

    /**
     * `DELETE …/definition`: a catalog provider goes back to its file declaration; a custom provider's declaration is
     * removed and its policy disabled, the policy row (with its entries and version) and its credential kept.
     */
    deleteProviderDefinition(accountId: string, provider: EffectiveProvider, expected: number | null): Promise<Outcome> {
      const fromCatalog = catalog.providers.has(provider.id);
      if (fromCatalog) {
        return write(accountId, provider.id, expected, (doc) => {
          if (doc.provider_definition === null) return 'noop';
          const next: PolicyDocument = { ...doc, provider_definition: null };
          checkAllEntries(catalog, provider.id, next);
          return next;
        });
      }
      return policy.apply({ accountId, providerId: provider.id }, expected, { absent: () => unknownProvider() }, (current) => ({
        enabled: false,
        document: { ...current.document, provider_definition: null, provider_removed: true },
      }));
    },

    /**
     * `PUT …/model_definition`: replaces the whole stored entry (never merged with the previous one) and clears a
     * removal entry; the entry must compose under the provider's declaration.
     */
    putModelDefinition(
      accountId: string,
      provider: EffectiveProvider,
      ref: string,
      definition: ModelDefinition,
      expected: number | null,
    ): Promise<Outcome> {
      checkRef(provider, ref);
      return write(accountId, provider.id, expected, (doc) => {
        const declaration = effectiveDeclaration(catalog, provider.id, doc);
        if (!declaration) throw unknownProvider();
        checkEntry(catalog, provider.id, declaration, ref, definition, 'command.definition');
        return {
          ...doc,
          model_definitions: { ...doc.model_definitions, [ref]: definition },
          removed_models: doc.removed_models.filter((r) => r !== ref),
        };
      });
    },

    /**
     * `DELETE …/model_definition`: writes a removal entry; the entry (authored or from the file) stays listed in
     * `configuration.models` with `removed` true, and the model leaves `GET /models`.
     */
    removeModelDefinition(accountId: string, provider: EffectiveProvider, ref: string, expected: number | null): Promise<Outcome> {
      checkRef(provider, ref);
      if (!provider.models.some((m) => m.ref === ref)) throw unknownModel(provider, ref);
      return write(accountId, provider.id, expected, (doc) => {
        if (!entryOf(catalog, provider.id, doc, ref)) throw unknownModel(provider, ref);
        if (doc.removed_models.includes(ref)) return 'noop';
        return { ...doc, removed_models: sorted([...doc.removed_models, ref]) };
      });
    },

    /**
     * `POST …/model_definition/reset`: removes the stored entry (definition and removal entry); the file definition
     * comes back, and a custom model without one disappears.
     */
    resetModelDefinition(accountId: string, provider: EffectiveProvider, ref: string, expected: number | null): Promise<Outcome> {
      checkRef(provider, ref);
      if (!provider.models.some((m) => m.ref === ref)) throw unknownModel(provider, ref);
      return write(accountId, provider.id, expected, (doc) => {
        if (!Object.hasOwn(doc.model_definitions, ref) && !doc.removed_models.includes(ref)) return 'noop';
        const { [ref]: _dropped, ...rest } = doc.model_definitions;
        const next: PolicyDocument = { ...doc, model_definitions: rest, removed_models: doc.removed_models.filter((r) => r !== ref) };
        const declaration = effectiveDeclaration(catalog, provider.id, next);
        const restored = entryOf(catalog, provider.id, next, ref);
        if (declaration && restored) checkEntry(catalog, provider.id, declaration, ref, restored, 'command.model: the file definition');
        return next;
      });
    },
  };
}

export type DefinitionService = ReturnType<typeof createDefinitionService>;
