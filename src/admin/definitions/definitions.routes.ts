import type { ErrorCode } from '../../core/errors.ts';
import {
  modelDefinitionCommandSchema,
  modelDefinitionRefCommandSchema,
  providerDefinitionCommandSchema,
  providerDefinitionDeleteCommandSchema,
  providerEnvelopeSchema,
  providerIdParamsSchema,
} from '../admin.schemas.ts';
import { defineRoute, type AnyApiRoute } from '../../core/http/api-route.ts';
import type { ModelPlane } from '../model-plane.ts';

/**
 * The five definition routes (spec: Endpoints). Each answers the singular-read envelope with the configuration and
 * version after the command; a malformed `definition` is 422 `validation_failed` naming the field (rule 3), a
 * malformed version 400 (rule 2). `base` is the admin API's base path and `errors` what its command routes answer.
 */
export function definitionRoutes(plane: ModelPlane, api: { base: string; errors: readonly ErrorCode[] }): AnyApiRoute[] {
  const { base, errors } = api;
  const tag = 'admin';
  const path = (suffix: string) => `${base}/model_providers/{provider_id}${suffix}`;
  return [
    defineRoute({
      method: 'PUT',
      path: path('/definition'),
      operationId: 'adminPutProviderDefinition',
      summary: 'Save a complete provider declaration: a catalog provider gets an override, a new id is created disabled',
      description:
        'Never enables the provider, installs a credential or calls upstream. A removed custom provider is recreated with the lock_version its singular read shows.',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: providerDefinitionCommandSchema,
      definitionFields: ['definition'],
      response: providerEnvelopeSchema,
      errors,
      handler: async ({ principal, params, command }) =>
        plane.putProviderDefinition(principal.accountId, params.provider_id, command.definition, command.expected_lock_version ?? null),
    }),
    defineRoute({
      method: 'DELETE',
      path: path('/definition'),
      operationId: 'adminDeleteProviderDefinition',
      summary: 'Remove the stored declaration: a catalog provider returns to its file, a custom provider is removed and disabled',
      description:
        'A removed custom provider keeps its policy and credential; its singular read shows source removed, definition null and the version to recreate it with.',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: providerDefinitionDeleteCommandSchema,
      response: providerEnvelopeSchema,
      errors,
      handler: async ({ principal, params, command }) =>
        plane.deleteProviderDefinition(principal.accountId, params.provider_id, command.expected_lock_version ?? null),
    }),
    defineRoute({
      method: 'PUT',
      path: path('/model_definition'),
      operationId: 'adminPutModelDefinition',
      summary: 'Replace the whole stored entry of a model (a catalog override or a custom model)',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: modelDefinitionCommandSchema,
      definitionFields: ['definition'],
      response: providerEnvelopeSchema,
      errors,
      handler: async ({ principal, params, command }) =>
        plane.putModelDefinition(
          principal.accountId,
          params.provider_id,
          command.model,
          command.definition,
          command.expected_lock_version ?? null,
        ),
    }),
    defineRoute({
      method: 'DELETE',
      path: path('/model_definition'),
      operationId: 'adminDeleteModelDefinition',
      summary: 'Write a removal entry: the model leaves GET /models and stays listed (removed true) so it can be restored',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: modelDefinitionRefCommandSchema,
      response: providerEnvelopeSchema,
      errors,
      handler: async ({ principal, params, command }) =>
        plane.removeModelDefinition(principal.accountId, params.provider_id, command.model, command.expected_lock_version ?? null),
    }),
    defineRoute({
      method: 'POST',
      path: path('/model_definition/reset'),
      operationId: 'adminResetModelDefinition',
      summary: 'Remove the stored entry: file inheritance comes back; a custom model without a file definition disappears',
      tag,
      auth: 'administrator',
      params: providerIdParamsSchema,
      command: modelDefinitionRefCommandSchema,
      response: providerEnvelopeSchema,
      errors,
      handler: async ({ principal, params, command }) =>
        plane.resetModelDefinition(principal.accountId, params.provider_id, command.model, command.expected_lock_version ?? null),
    }),
  ];
}
