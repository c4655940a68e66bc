/**
 * The opt-in `admin` toolset (issue 18 item 1): a project's CI/CD variables, members and webhooks. GitLab returns
 * variable values to a Maintainer; this server hides them unless the call asks (`reveal_values`), and never shows
 * a masked or hidden variable's value, whatever is asked (a masked value is a secret by its owner's choice). A
 * webhook's secret token is write-only on GitLab; credentials in a hook URL are hidden here too.
 */
import { z } from 'zod';
import { READ, text, type Json } from './forge.entities.ts';
import { projectPathId, projectRef } from './forge.ids.ts';
import { forgePaging, pageOutput, pageResult, pagingInput } from './forge.paging.ts';
import { defineTool, ToolInputError, type ToolContext, type ToolsetDefinition } from './tool.contract.ts';

const project = (ctx: ToolContext, id: string | number) => `/projects/${projectPathId(id, ctx.forgeUrl)}`;

/** GitLab's access levels by number. */
const ROLES: Record<number, string> = {
  0: 'none',
  5: 'minimal',
  10: 'guest',
  15: 'planner',
  20: 'reporter',
  30: 'developer',
  40: 'maintainer',
  50: 'owner',
};

const HOOK_EVENTS = [
  'push',
  'tag_push',
  'issues',
  'confidential_issues',
  'merge_requests',
  'note',
  'confidential_note',
  'job',
  'pipeline',
  'wiki_page',
  'deployment',
  'releases',
] as const;

// CI/CD variables -----------------------------------------------------------------------------------------------
const variableSchema = z.object({
  key: z.string(),
  variable_type: z.string().describe('env_var or file'),
  protected: z.boolean(),
  masked: z.boolean(),
  hidden: z.boolean(),
  environment_scope: z.string(),
  description: text('Description').optional(),
  value: text('Value: only with reveal_values, never for masked or hidden variables').optional(),
});

const variableOut = (reveal: boolean) => (value: unknown) => {
  const v = value as Json;
  const secret = v.masked === true || v.hidden === true;
  return {
    key: String(v.key),
    variable_type: typeof v.variable_type === 'string' ? v.variable_type : 'env_var',
    protected: v.protected === true,
    masked: v.masked === true,
    hidden: v.hidden === true,
    environment_scope: typeof v.environment_scope === 'string' ? v.environment_scope : '*',
    ...(typeof v.description === 'string' && v.description !== '' ? { description: v.description } : {}),
    ...(reveal && !secret && typeof v.value === 'string' ? { value: v.value } : {}),
  };
};

// Members -------------------------------------------------------------------------------------------------------
const memberSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  name: text('Display name'),
  state: z.string().optional(),
  access_level: z.number().int(),
  role: z.string().describe('guest, reporter, developer, maintainer, owner, …'),
  expires_at: z.string().nullable(),
});

function memberOut(value: unknown) {
  const v = value as Json;
  const level = Number(v.access_level);
  return {
    id: Number(v.id),
    username: String(v.username),
    name: String(v.name),
    ...(typeof v.state === 'string' ? { state: v.state } : {}),
    access_level: level,
    role: ROLES[level] ?? `level ${level}`,
    expires_at: typeof v.expires_at === 'string' ? v.expires_at : null,
  };
}

// Webhooks ------------------------------------------------------------------------------------------------------
const hookSchema = z.object({
  id: z.number().int(),
  url: z.string().describe('Credentials in the URL are shown as ***'),
  name: text('Name').optional(),
  description: text('Description').optional(),
  events: z.array(z.string()).describe('Events that trigger it'),
  push_events_branch_filter: z.string().optional(),
  enable_ssl_verification: z.boolean(),
  alert_status: z.string().optional().describe('executable, disabled or temporarily_disabled'),
  created_at: z.string().optional(),
});

/** The URL without its user info (a hook URL may carry a password). */
function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username === '' && url.password === '') return raw;
    url.username = '***';
    url.password = '';
    return url.href;
  } catch {
    return raw;
  }
}

function hookOut(value: unknown) {
  const v = value as Json;
  const str = (key: string) => (typeof v[key] === 'string' && v[key] !== '' ? { [key]: v[key] } : {});
  return {
    id: Number(v.id),
    url: redactUrl(String(v.url)),
    ...str('name'),
    ...str('description'),
    events: HOOK_EVENTS.filter((e) => v[`${e}_events`] === true),
    ...str('push_events_branch_filter'),
    enable_ssl_verification: v.enable_ssl_verification !== false,
    ...str('alert_status'),
    ...str('created_at'),
  };
}

function adminTools() {
  return [
    defineTool({
      name: 'list_ci_variables',
      toolset: 'admin',
      title: 'List CI/CD variables',
      description:
        'A project’s CI/CD variables (Maintainer only): keys and flags; values only with reveal_values, and never for masked or hidden ones.',
      input: z.object({
        project_id: projectRef,
        reveal_values: z.boolean().optional().describe('Include values of unmasked variables (default false)'),
        ...pagingInput,
      }),
      output: pageOutput(variableSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { ...forgePaging(args) };
        return pageResult(
          await ctx.api.page(`${project(ctx, args.project_id)}/variables`, ctx.token, query),
          variableOut(args.reveal_values === true),
        );
      },
    }),
    defineTool({
      name: 'list_members',
      toolset: 'admin',
      title: 'List project members',
      description: 'Who has access to a project and at which role; include_inherited adds members of parent groups.',
      input: z.object({
        project_id: projectRef,
        query: z.string().max(255).optional().describe('Name or username contains this'),
        include_inherited: z.boolean().optional().describe('Also members inherited from groups (default false)'),
        ...pagingInput,
      }),
      output: pageOutput(memberSchema),
      annotations: READ,
      async run(args, ctx) {
        const path = `${project(ctx, args.project_id)}/members${args.include_inherited ? '/all' : ''}`;
        const query = { query: args.query, ...forgePaging(args) };
        return pageResult(await ctx.api.page(path, ctx.token, query), memberOut);
      },
    }),
    defineTool({
      name: 'list_webhooks',
      toolset: 'admin',
      title: 'List webhooks',
      description: 'A project’s webhooks (Maintainer only): URL, triggering events, TLS check and status; secret tokens are never shown.',
      input: z.object({ project_id: projectRef, ...pagingInput }),
      output: pageOutput(hookSchema),
      annotations: READ,
      async run(args, ctx) {
        const query = { ...forgePaging(args) };
        return pageResult(await ctx.api.page(`${project(ctx, args.project_id)}/hooks`, ctx.token, query), hookOut);
      },
    }),
    defineTool({
      name: 'save_webhook',
      toolset: 'admin',
      title: 'Create or update a webhook',
      description:
        'Creates a webhook (url required) without hook_id, or updates that hook; events lists every event that should trigger it (the others are turned off).',
      input: z.object({
        project_id: projectRef,
        hook_id: z.number().int().positive().optional().describe('Hook to update; omit to create'),
        url: z.string().max(2000).optional().describe('http(s) URL the forge posts to (required to create)'),
        name: z.string().max(255).optional().describe('Name'),
        description: z.string().max(2000).optional().describe('Description'),
        events: z.array(z.enum(HOOK_EVENTS)).optional().describe('Triggering events (default on create: push)'),
        push_events_branch_filter: z.string().max(255).optional().describe('Branches whose pushes trigger it (wildcards)'),
        token: z.string().max(255).optional().describe('Secret sent as X-Gitlab-Token (write-only)'),
        enable_ssl_verification: z.boolean().optional().describe('Verify the TLS certificate (default true)'),
      }),
      output: hookSchema.extend({ created: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      async run(args, ctx) {
        const body: Record<string, unknown> = {};
        for (const key of ['url', 'name', 'description', 'push_events_branch_filter', 'token', 'enable_ssl_verification'] as const)
          if (args[key] !== undefined) body[key] = args[key];
        if (args.events !== undefined) for (const e of HOOK_EVENTS) body[`${e}_events`] = args.events.includes(e);
        const hooks = `${project(ctx, args.project_id)}/hooks`;
        if (args.hook_id === undefined) {
          if (args.url === undefined) throw new ToolInputError('to create a webhook give its url');
          return { ...hookOut(await ctx.api.post(hooks, ctx.token, body)), created: true };
        }
        if (Object.keys(body).length === 0) throw new ToolInputError('nothing to change: give at least one field to update');
        return { ...hookOut(await ctx.api.put(`${hooks}/${args.hook_id}`, ctx.token, body)), created: false };
      },
    }),
  ];
}

export const adminToolset: ToolsetDefinition = {
  name: 'admin',
  description: 'Admin: CI/CD variables (values hidden by default), members, webhooks',
  default: false,
  tools: adminTools,
};
