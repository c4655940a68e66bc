import { usageQuerySchema, usageResponseSchema } from '../admin.schemas.ts';
import { defineRoute, type AnyApiRoute } from '../../core/http/api-route.ts';
import type { UsageReads } from './usage.service.ts';

/**
 * `GET {base}/usage` (issue 16 item 6): the caller's Account's inference usage per UTC day and model. Owner or admin
 * (the administrator boundary: member tokens 401, member sessions 403).
 */
export function usageRoutes(reads: UsageReads, options: { base: string }): AnyApiRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: `${options.base}/usage`,
      operationId: 'adminGetUsage',
      summary: "The Account's inference requests, tokens and estimated cost per UTC day and model, with totals",
      description: [
        'Answers `{usage: {from, to, cost_unit, totals: {requests, input_tokens, output_tokens, cached_input_tokens, cost},',
        'by_day_and_model: [{day, model, requests, input_tokens, output_tokens, cached_input_tokens, cost, failed}]}}`.',
        'The range is `[from, to)`, by default the last 30 days, at most 366 days; `to` before `from` is 400.',
        '`day` is the UTC date a request started. `cost` is an exact decimal sum in `cost_unit`, null when a request',
        'that reached the provider has no known cost (no cost unit, no price, no reported usage); refusals add nothing.',
        '`failed` counts requests whose outcome is not succeeded. Model tests are not inference requests and never appear.',
      ].join(' '),
      tag: 'admin',
      auth: 'administrator',
      query: usageQuerySchema,
      response: usageResponseSchema,
      errors: ['unauthorized', 'administrator_required', 'parameter_invalid'],
      handler: async ({ principal, query }) => ({
        usage: await reads.report(principal.accountId, { from: query.from, to: query.to, model: query.model, humanId: query.human_id }),
      }),
    }),
  ];
}
