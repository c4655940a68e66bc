/**
 * The tool surface (issue 17 item 4): which tools a `tools/list` shows and a `tools/call` may reach. The operator
 * sets the upper bound (`FORGE_TOOLSETS`, `FORGE_TOOLS`, `FORGE_DENIED_TOOLS`, `FORGE_READ_ONLY`, parsed in
 * mcp.config.ts); a request may narrow it (`X-MCP-Toolsets`, `X-MCP-Tools`, `X-MCP-Exclude-Tools`,
 * `X-MCP-Readonly`, or `/mcp/x/{toolsets}[/readonly]`) and never widen it: a toolset or tool named by a request
 * that the bound does not hold is refused with a clear error rather than ignored, so a client learns at once why
 * a tool it asked for is missing.
 *
 * A tool is selected when every given condition holds (the lists intersect): its toolset is listed, its name or
 * an alias matches a `tools` pattern, no `denied` pattern matches its name or an alias, and in read-only mode it
 * is read-only (`readOnlyHint`). Aliases follow their tool. The declared order is kept, so the list is
 * deterministic; a tool outside the selection is not registered, so calling it is refused like an unknown tool.
 */
import type { AnyForgeTool } from './tool.contract.ts';

/** A bound or a narrowing; `undefined` lists mean "no condition". */
export interface ToolSurface {
  toolsets?: readonly string[];
  /** Names or globs (`*`, `?`). */
  tools?: readonly string[];
  /** Names or globs hidden. */
  denied: readonly string[];
  readOnly: boolean;
}

/** The whole declared surface. */
export const FULL_SURFACE: ToolSurface = Object.freeze({ denied: [], readOnly: false });

/** A comma-separated list, trimmed, empty entries dropped; `undefined` for an absent or blank value. */
export function parseNameList(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

const PATTERN = /^[a-z0-9_*?]{1,64}$/;

/** Whether `pattern` is a tool name or glob as the lists accept them. */
export function isToolPattern(pattern: string): boolean {
  return PATTERN.test(pattern);
}

function globRegExp(pattern: string): RegExp {
  return new RegExp(`^${pattern.replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
}

/** Whether any of `patterns` matches the tool's name or one of its aliases. */
function matchesTool(tool: AnyForgeTool, patterns: readonly RegExp[]): boolean {
  const names = [tool.name, ...(tool.aliases ?? [])];
  return patterns.some((p) => names.some((n) => p.test(n)));
}

/** The tools of `tools` inside `surface`, in their declared order. */
export function selectTools(tools: readonly AnyForgeTool[], surface: ToolSurface): AnyForgeTool[] {
  const wanted = surface.tools?.map(globRegExp);
  const denied = surface.denied.map(globRegExp);
  return tools.filter(
    (tool) =>
      (surface.toolsets === undefined || surface.toolsets.includes(tool.toolset)) &&
      (wanted === undefined || matchesTool(tool, wanted)) &&
      !matchesTool(tool, denied) &&
      (!surface.readOnly || tool.annotations.readOnlyHint),
  );
}

/** Entries of `patterns` that match none of `tools` (a typo, or a request trying to widen the bound). */
export function unmatchedPatterns(tools: readonly AnyForgeTool[], patterns: readonly string[]): string[] {
  return patterns.filter((p) => !tools.some((t) => matchesTool(t, [globRegExp(p)])));
}

/** What a request asks for, before it is checked against the bound. */
export interface SurfaceRequest {
  toolsets?: readonly string[];
  tools?: readonly string[];
  exclude?: readonly string[];
  readOnly: boolean;
}

/**
 * The request's narrowing applied to the operator's tools (`bound`, already selected). Returns the tools, or
 * the reason the request is refused: a malformed value, or a toolset or tool outside the bound.
 */
export function narrowTools(bound: readonly AnyForgeTool[], request: SurfaceRequest): { tools: AnyForgeTool[] } | { error: string } {
  const toolsets = request.toolsets;
  if (toolsets !== undefined) {
    const available = new Set<string>(bound.map((t) => t.toolset));
    const outside = toolsets.filter((s) => !available.has(s));
    if (outside.length > 0)
      return { error: `Toolsets not available on this server: ${outside.join(', ')} (available: ${[...available].join(', ') || 'none'}).` };
  }
  for (const [what, list] of [
    ['X-MCP-Tools', request.tools],
    ['X-MCP-Exclude-Tools', request.exclude],
  ] as const) {
    const bad = (list ?? []).filter((p) => !isToolPattern(p));
    if (bad.length > 0) return { error: `${what}: not tool names or globs: ${bad.map((b) => b.slice(0, 64)).join(', ')}.` };
  }
  if (request.tools !== undefined) {
    const outside = unmatchedPatterns(bound, request.tools);
    if (outside.length > 0) return { error: `Tools not available on this server: ${outside.join(', ')}.` };
  }
  return {
    tools: selectTools(bound, {
      ...(toolsets !== undefined ? { toolsets } : {}),
      ...(request.tools !== undefined ? { tools: request.tools } : {}),
      denied: request.exclude ?? [],
      readOnly: request.readOnly,
    }),
  };
}
