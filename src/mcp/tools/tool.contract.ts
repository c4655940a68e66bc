/**
 * The tool contract (issue 17 item 3): how every forge tool is declared, and the one place where a declaration
 * becomes an MCP tool. A tool is a plain {@link ForgeTool} object — name, title, description, toolset, zod input
 * whose fields are all described, an output schema for every read tool, all four annotations spelled out, and a
 * `run` that returns the structured value — and {@link registerForgeTool} adds what every tool shares:
 *
 * - the caller's forge token (`ctx.http.authInfo` on HTTP, `getToken` on stdio), and progress notifications when
 *   the client asked for them (`_meta.progressToken`);
 * - the result: `structuredContent` (validated by the SDK against `outputSchema`) plus a compact text rendering of
 *   the same object, forge text inside it marked as untrusted (tool.text.ts);
 * - every failure as a tool result with `isError: true` and `structuredContent.error` =
 *   `{type, status, message, retry_after_seconds?, required_scope?}` ({@link ToolErrorType}); JSON-RPC errors stay
 *   for an unknown tool or a malformed request, which the SDK answers before a tool runs. Invalid arguments too
 *   are a `validation` error: the SDK's own result for them has only text, so the advertised input schema lets
 *   every value through and the handler checks the arguments with the tool's zod input ({@link invalidArguments}).
 *
 * Issue 18 builds the toolsets on this: one module per toolset (`<toolset>.tools.ts`, exporting a
 * {@link ToolsetDefinition}), listed once in toolsets.ts; each tool's annotations go into the lock in
 * forge.tools.test.ts.
 */
import type { CallToolResult, McpServer, ResourceLink, ServerContext, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Logger } from '../../core/logger.ts';
import { ForgeApiError, type ForgeApi, type ForgeErrorType } from './forge.client.ts';
import { ConfirmationPending, ConfirmationRefused, confirmationOutput, type Confirmer } from './tool.confirm.ts';
import { sanitizeAndRender, sanitizeDeep, sanitizeText } from './tool.text.ts';

/** The contract's error types: the forge's (forge.client.ts) and `internal` for a bug of ours. */
export type ToolErrorType = ForgeErrorType | 'internal';

/** `structuredContent.error` of a failed tool call. */
export interface ToolError {
  type: ToolErrorType;
  /** The forge's HTTP status, 0 when there was no answer or no forge call. */
  status: number;
  message: string;
  retry_after_seconds?: number;
  required_scope?: string;
}

/**
 * All four hints, always explicit (clients default `destructiveHint` and `openWorldHint` to true, and GitLab's
 * governance counts a tool with neither read-only nor destructive as a delete): the lock test compares them.
 */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a tool's `run` gets besides its arguments. */
export interface ToolContext {
  api: ForgeApi;
  /** The forge's base URL (`FORGE_URL`), for web URLs given as ids. */
  forgeUrl: string;
  token: string;
  log: Logger;
  /** Whether bodies the tool writes may hold GitLab quick actions (`FORGE_ALLOW_QUICK_ACTIONS`). */
  allowQuickActions: boolean;
  /** Sends a progress notification when the client asked for progress; a no-op otherwise. */
  progress(message: string): Promise<void>;
  /** The toolsets this request's server carries (its surface), in registry order: what get_server_info reports. */
  toolsets: readonly string[];
  /** The SDK's request context (client capabilities, multi-round-trip input). */
  request: ServerContext;
  /**
   * Asks the person before a high-impact write (tool.confirm.ts): returns when they agreed; otherwise the call
   * ends with the question (elicitation or a confirmation token) or with their refusal. Tools that call it set
   * `confirms: true` and spread `confirmationInput` into their input.
   */
  confirm(summary: string): Promise<void>;
  /**
   * Adds a `resource_link` to the result's content (a large file or log the client can read as a resource,
   * resources.ts) beside the text rendering.
   */
  link(resource: { uri: string; name: string; mimeType?: string; description?: string }): void;
}

/** A toolset's name (toolsets.ts lists them: `core`, `issues`, `merge_requests`, …). */
export type Toolset = string;

/** One toolset: its tools, in the order `tools/list` shows them, and whether it is served when none are named. */
export interface ToolsetDefinition {
  name: Toolset;
  /** One line for docs and get_server_info. */
  description: string;
  /** Served by default (`FORGE_TOOLSETS` unset); opt-in toolsets must be named. */
  default: boolean;
  tools(): AnyForgeTool[];
}

export interface ForgeTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  /** `snake_case`, at most 64 characters. */
  name: string;
  /** Older names still callable (the same tool), not listed by `tools/list`. */
  aliases?: readonly string[];
  toolset: Toolset;
  /** Human title (also the `title` annotation). */
  title: string;
  /** One or two sentences: what it returns and when to use it rather than another tool. */
  description: string;
  input: I;
  /** Required for read tools; write tools declare what they return too. */
  output: O;
  annotations: ToolHints;
  /** Whether the tool may ask for a confirmation (its advertised output then admits `confirmation_required`). */
  confirms?: boolean;
  run(args: z.infer<I>, ctx: ToolContext): Promise<z.infer<O>>;
}

/** Any tool, for lists of tools of different shapes. */
export type AnyForgeTool = ForgeTool<z.ZodObject, z.ZodObject>;

/** Declares a tool; the identity function exists so that `run` is typed from `input` and `output`. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: ForgeTool<I, O>): AnyForgeTool {
  return tool;
}

/** A thrown refusal of a tool's own (bad combination of arguments, a quick action): a `validation` tool error. */
export class ToolInputError extends Error {}

/** `structuredContent` of a failed call, as the output schemas admit it. */
const toolErrorOutput = z
  .object({
    error: z
      .object({
        type: z
          .enum([
            'not_found',
            'forbidden',
            'insufficient_scope',
            'validation',
            'conflict',
            'rate_limited',
            'upstream',
            'timeout',
            'internal',
          ])
          .describe('What went wrong'),
        status: z.number().int().describe('The forge HTTP status; 0 without a forge answer'),
        message: z.string().describe('What to tell the user or do next'),
        retry_after_seconds: z.number().int().optional().describe('rate_limited: seconds to wait'),
        required_scope: z.string().optional().describe('insufficient_scope: the scope the token needs'),
      })
      .describe('Present only when isError is true'),
  })
  .strict();

type JsonSchemaOptions = Parameters<StandardSchemaWithJSON['~standard']['jsonSchema']['input']>[0];

/** A JSON Schema conversion that runs once per target instead of on every `tools/list`. */
function memoized(convert: (options: JsonSchemaOptions) => Record<string, unknown>) {
  const done = new Map<string, Record<string, unknown>>();
  return (options: JsonSchemaOptions) => {
    const key = String(options.target);
    let schema = done.get(key);
    if (!schema) {
      schema = convert(options);
      done.set(key, schema);
    }
    return schema;
  };
}

/**
 * A schema as advertised: validation stays zod's, the JSON Schema is converted once. The SDK converts on every
 * `tools/list`, and servers are built per request: measured 9.8 ms per tools/list of the seven tools without this.
 */
function advertised(schema: StandardSchemaWithJSON, shape: (json: Record<string, unknown>) => Record<string, unknown> = (json) => json) {
  const standard = schema['~standard'];
  return {
    '~standard': {
      ...standard,
      jsonSchema: {
        input: memoized((options) => shape(standard.jsonSchema.input(options))),
        output: memoized((options) => shape(standard.jsonSchema.output(options))),
      },
    },
  } satisfies StandardSchemaWithJSON;
}

/**
 * The advertised output schema: the tool's value (see {@link advertisedOutput}); zod checks the exact union of the
 * value, the error object and, for tools that confirm, the confirmation answer. Clients validate
 * `structuredContent` against `outputSchema` even on error results (the v1 SDK client does, once it has listed the
 * tools), so the advertised schema must admit those two as well: it does, since no top-level field is required and
 * other fields are allowed. Both objects are the same on every tool and documented once (docs/mcp.md); spelling
 * them out as an `anyOf` cost 135 bytes per tool of the 32 KB default list.
 */
function advertisedOutputSchema(output: z.ZodObject, confirms: boolean): StandardSchemaWithJSON {
  const union = confirms ? z.union([output, toolErrorOutput, confirmationOutput]) : z.union([output, toolErrorOutput]);
  const value = advertisedOutput(output);
  return advertised(union, () => value);
}

/**
 * An input schema as advertised: types, enums, required fields and descriptions. Dropped, because the server
 * checks them with a message naming the field before a tool runs: `$schema`, numeric bounds, length limits and
 * patterns (descriptions state the useful ones, such as a page size's maximum). A union of plain types becomes
 * one `type` list.
 */
const LIMIT_KEYWORDS = new Set([
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'pattern',
]);

function compactInput(json: Record<string, unknown>): Record<string, unknown> {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (key === '$schema' || LIMIT_KEYWORDS.has(key)) continue;
      out[key] = strip(item);
    }
    return plainTypeUnion(out);
  };
  return strip(json) as Record<string, unknown>;
}

/** `{anyOf: [{type: a}, {type: b}], …}` as `{type: [a, b], …}`; any other schema unchanged. */
function plainTypeUnion(schema: Record<string, unknown>): Record<string, unknown> {
  const { anyOf, ...rest } = schema;
  if (!Array.isArray(anyOf)) return schema;
  const types = anyOf.map((member) => {
    const keys = Object.keys(member as object);
    return keys.length === 1 && keys[0] === 'type' && typeof (member as { type: unknown }).type === 'string'
      ? (member as { type: string }).type
      : undefined;
  });
  if (types.some((t) => t === undefined)) return schema;
  return { type: types, ...rest };
}

/**
 * A tool's value as advertised: the top-level shape and the key fields. At the top, the fields always present
 * (typed) and the optional objects and lists (includes, a log window); below that, a resource or a list item is
 * `{type: object, required: [its key fields]}`, the fields the forge always sends. Other fields are allowed, not
 * listed. No descriptions, bounds or `additionalProperties`: field names and the tool's description say what they
 * hold, and zod checks the whole value before it leaves. Measured: every field of every level spelled out, the
 * default list (then 32 tools) was 58.8 KB, 23 KB of it output schemas; 8 KB now.
 */
function advertisedOutput(output: z.ZodObject): Record<string, unknown> {
  return compactOutput(z.toJSONSchema(output, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }), 0) as Record<
    string,
    unknown
  >;
}

function compactOutput(value: unknown, depth: number): unknown {
  if (Array.isArray(value)) return value.map((v) => compactOutput(v, depth));
  if (value === null || typeof value !== 'object') return value;
  const schema = value as Record<string, unknown>;
  if (depth >= 1 && schema.type === 'object') {
    // A resource inside the result, or a list's item: its key fields by name (the forge always sends them).
    const keys = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    return keys.length > 0 ? { type: 'object', required: keys } : { type: 'object' };
  }
  const out: Record<string, unknown> = {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [key, item] of Object.entries(schema)) {
    if (key === 'description' || key === '$schema' || key === 'additionalProperties' || key === 'required' || LIMIT_KEYWORDS.has(key))
      continue;
    if (key === 'properties') {
      // The result's fields: the ones always there, and the optional objects and lists (includes, a log window);
      // optional scalars (a resource's details) are left to the tool's description. A field called "description"
      // is a field name here, not a keyword.
      const shown = Object.entries(item as Record<string, unknown>).filter(([k, v]) => required.has(k) || isStructured(v));
      out[key] = Object.fromEntries(shown.map(([k, v]) => [k, compactOutput(v, depth + 1)]));
    } else out[key] = key === 'items' ? compactOutput(item, depth + 1) : compactOutput(item, depth);
  }
  return plainTypeUnion(out);
}

/** Whether a field's schema is an object or a list (possibly nullable). */
function isStructured(schema: unknown): boolean {
  const { type, anyOf } = schema as { type?: unknown; anyOf?: unknown[] };
  if (type === 'object' || type === 'array') return true;
  return Array.isArray(anyOf) && anyOf.some(isStructured);
}

/**
 * The advertised input schema: the JSON Schema of {@link compactInput}, and a `validate` that accepts anything,
 * because the SDK answers a failed validation with a text-only `isError` result; the handler validates instead.
 */
function advertisedInput(input: z.ZodObject): StandardSchemaWithJSON {
  const schema = advertised(input, compactInput);
  return { '~standard': { ...schema['~standard'], validate: (value: unknown) => ({ value }) } };
}

/**
 * The `validation` error for arguments `input` refuses: each issue's field path and zod's message, which states the
 * expected type or bound and never the value given.
 */
function invalidArguments(error: z.ZodError): ToolError {
  const issues = error.issues.map((issue) =>
    issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message,
  );
  return { type: 'validation', status: 0, message: `Invalid arguments: ${issues.join('; ')}` };
}

/** Per tool, built once: the advertised input and output schemas. */
const advertisedSchemas = new WeakMap<AnyForgeTool, { input: StandardSchemaWithJSON; output: StandardSchemaWithJSON }>();

/** The error object and its text, for the result. */
export function toolErrorResult(error: ToolError): CallToolResult {
  const wait = error.retry_after_seconds !== undefined ? ` Retry after ${error.retry_after_seconds} s.` : '';
  const scope = error.required_scope !== undefined ? ` Required scope: ${error.required_scope}.` : '';
  return {
    isError: true,
    content: [
      {
        type: 'text',
        text: `Error (${error.type}${error.status ? `, forge status ${error.status}` : ''}): ${error.message}${wait}${scope}`,
      },
    ],
    structuredContent: { error },
  };
}

/** The contract's error for anything `run` throws. */
export function toToolError(error: unknown): ToolError {
  if (error instanceof ForgeApiError) {
    return {
      type: error.type,
      status: error.status,
      // A validation message is the forge's own text: cleaned like every other forge string.
      message: sanitizeText(error.publicMessage),
      ...(error.retryAfterSeconds !== undefined ? { retry_after_seconds: error.retryAfterSeconds } : {}),
      ...(error.requiredScope !== undefined ? { required_scope: error.requiredScope } : {}),
    };
  }
  if (error instanceof ToolInputError) return { type: 'validation', status: 0, message: error.message };
  return { type: 'internal', status: 0, message: 'The tool failed unexpectedly.' };
}

export interface RegisterDeps {
  api: ForgeApi;
  /** The toolsets of the server being built (see {@link ToolContext.toolsets}). */
  toolsets: readonly string[];
  forgeUrl: string;
  log: Logger;
  allowQuickActions: boolean;
  /** Where the token comes from when the request carries none (stdio). */
  getToken?: () => Promise<string>;
  /** Told when the forge rejects a token, so a validation cache can forget it. */
  onForgeUnauthorized?: (token: string) => void;
  /** Confirmations of high-impact writes (tool.confirm.ts). */
  confirmer: Confirmer;
}

/** Registers `tool` (and its aliases) on `server` with the shared behaviour described above. */
export function registerForgeTool(server: McpServer, tool: AnyForgeTool, deps: RegisterDeps): void {
  const handler = async (raw: unknown, ctx: ServerContext): Promise<CallToolResult> => {
    const parsed = await tool.input.safeParseAsync(raw ?? {});
    if (!parsed.success) return toolErrorResult(invalidArguments(parsed.error));
    const args = parsed.data;
    let token = ctx.http?.authInfo?.token;
    try {
      if (token === undefined && deps.getToken) token = await deps.getToken();
    } catch (error) {
      deps.log.warn({ tool: tool.name, cause: (error as Error).message }, 'no forge token for a tool call');
    }
    if (token === undefined || token === '')
      return toolErrorResult({ type: 'forbidden', status: 0, message: 'Not signed in to the forge.' });
    const forgeToken = token;
    const progressToken = ctx.mcpReq._meta?.progressToken;
    let step = 0;
    const progress = async (message: string) => {
      if (progressToken === undefined) return;
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: step + 1, message } });
      step += 1;
    };
    const links: ResourceLink[] = [];
    try {
      await progress('calling the forge');
      const value = await tool.run(args, {
        api: deps.api,
        forgeUrl: deps.forgeUrl,
        token,
        log: deps.log,
        allowQuickActions: deps.allowQuickActions,
        progress,
        toolsets: deps.toolsets,
        request: ctx,
        confirm: (summary) =>
          deps.confirmer.confirm(
            summary,
            { tool: tool.name, args, forgeToken },
            { request: ctx, clientCapabilities: server.server.getClientCapabilities() },
          ),
        link: (resource) => links.push({ type: 'resource_link', ...resource }),
      });
      await progress('done');
      // Forge text is cleaned once here, for every tool, and the text rendering is the cleaned value's JSON.
      const clean = sanitizeAndRender(value);
      return { content: [{ type: 'text', text: clean.text }, ...sanitizeDeep(links)], structuredContent: clean.value };
    } catch (error) {
      if (error instanceof ConfirmationPending) return error.result;
      if (error instanceof ConfirmationRefused) return toolErrorResult({ type: 'forbidden', status: 0, message: error.message });
      const toolError = toToolError(error);
      if (error instanceof ForgeApiError) {
        deps.log.warn(
          { tool: tool.name, forge_status: error.status, type: error.type, detail: error.message },
          'forge call of a tool failed',
        );
        if (error.status === 401) deps.onForgeUnauthorized?.(token);
      } else if (toolError.type === 'internal') {
        deps.log.error({ tool: tool.name, err: error }, 'tool failed');
      }
      return toolErrorResult(toolError);
    }
  };
  let schemas = advertisedSchemas.get(tool);
  if (!schemas) {
    schemas = { input: advertisedInput(tool.input), output: advertisedOutputSchema(tool.output, tool.confirms === true) };
    advertisedSchemas.set(tool, schemas);
  }
  for (const name of [tool.name, ...(tool.aliases ?? [])]) {
    server.registerTool(
      name,
      {
        title: tool.title,
        description: name === tool.name ? tool.description : `${tool.description} (Alias of ${tool.name}.)`,
        inputSchema: schemas.input,
        outputSchema: schemas.output,
        // The title once, at the top level (2025-06-18 on, the oldest revision served): `annotations.title` was the
        // same string again on every tool of the 32 KB list.
        annotations: { ...tool.annotations },
      },
      handler,
    );
    if (name !== tool.name) unlist(server, name);
  }
}

/**
 * Keeps an alias callable but out of `tools/list` (GitLab's server does the same with its old names): each
 * listed alias repeats its tool's whole schema, which the 32 KB budget of the default list cannot carry. The SDK
 * lists `Object.entries` of its tool registry and calls by property lookup, so a non-enumerable entry is exactly
 * "callable, not listed"; tool.surface.test.ts pins both halves against SDK upgrades.
 */
function unlist(server: McpServer, name: string): void {
  const registry = (server as unknown as { _registeredTools?: Record<string, unknown> })._registeredTools;
  const entry = registry ? Object.getOwnPropertyDescriptor(registry, name) : undefined;
  if (!registry || !entry) throw new Error(`cannot unlist alias ${name}: the MCP SDK's tool registry changed`);
  Object.defineProperty(registry, name, { ...entry, enumerable: false });
}
