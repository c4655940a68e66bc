/**
 * The toolsets, in the order `tools/list` shows them (issue 18 item 1). One line per toolset module: adding a
 * toolset is writing `<name>.tools.ts` (a {@link ToolsetDefinition}) and listing it here. The order is part of the
 * contract (deterministic lists), so new toolsets go where they belong, not necessarily last.
 */
import { coreToolset } from './core.tools.ts';
import { issuesToolset } from './issues.tools.ts';
import { mergeRequestsToolset } from './merge-requests.tools.ts';
import { ciToolset } from './ci.tools.ts';
import { releasesToolset } from './releases.tools.ts';
import { repositoryToolset } from './repository.tools.ts';
import { wikiToolset } from './wiki.tools.ts';
import { adminToolset } from './admin.tools.ts';
import type { AnyForgeTool, ToolsetDefinition } from './tool.contract.ts';

export const TOOLSETS: readonly ToolsetDefinition[] = [
  coreToolset,
  issuesToolset,
  mergeRequestsToolset,
  repositoryToolset,
  ciToolset,
  // opt-in
  releasesToolset,
  wikiToolset,
  adminToolset,
];

/** Every declared tool, toolset by toolset. A tool whose `toolset` is not the module's own is a bug caught here. */
export function toolsetTools(): AnyForgeTool[] {
  return TOOLSETS.flatMap((set) =>
    set.tools().map((tool) => {
      if (tool.toolset !== set.name) throw new Error(`tool ${tool.name} declares toolset ${tool.toolset} but is listed in ${set.name}`);
      return tool;
    }),
  );
}

/** The toolset names, in order. */
export function toolsetNames(): string[] {
  return TOOLSETS.map((t) => t.name);
}

/** The toolsets served when the operator names none (`FORGE_TOOLSETS` unset). */
export function defaultToolsetNames(): string[] {
  return TOOLSETS.filter((t) => t.default).map((t) => t.name);
}

/** The toolsets of `tools`, in registry order (what a server built for them carries). */
export function toolsetsOf(tools: readonly AnyForgeTool[]): string[] {
  const present = new Set(tools.map((t) => t.toolset));
  return TOOLSETS.map((t) => t.name).filter((name) => present.has(name));
}
