import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { composeModel, type ComposedModel } from './catalog.compose.ts';
import { catalogFileSchema, type ModelDefinition, type ProviderDeclaration, type SharedModelDefinition } from './catalog.schemas.ts';
import { WIRES } from './wires.ts';

/** The catalog shipped in the repository: `catalog/` at the package root, whatever the working directory. */
export const DEFAULT_CATALOG_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'catalog');

/** One provider as the deployment declares it. */
interface CatalogProvider {
  id: string;
  /** The file that declares it, for log lines. */
  file: string;
  declaration: ProviderDeclaration;
  /** Authored model entries keyed by the part of the ref after `<provider_id>/`, in file order. */
  models: ReadonlyMap<string, ModelDefinition>;
}

/** The parsed, validated and composed deployment catalog; immutable and cached for the life of the process. */
export interface Catalog {
  dir: string;
  files: readonly string[];
  /** By provider id, in id order. */
  providers: ReadonlyMap<string, CatalogProvider>;
  /** The price-free shared definitions, by name (the valid `inherit` choices). */
  modelDefinitions: Readonly<Record<string, SharedModelDefinition>>;
  /** Every catalog model composed, by ref. */
  composed: ReadonlyMap<string, ComposedModel>;
}

/** A loaded catalog, or why the model plane is unavailable: the file at fault and the reason. */
export type CatalogState = { ok: true; catalog: Catalog } | { ok: false; file: string; reason: string };

const EXTENSIONS = ['.yaml', '.yml', '.json'];

/** Code-unit order, stable across locales and replicas (spec: `GET /models` "ordered by ref"). */
export function compareRefs(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid content';
  const path = issue.path.map(String).join('.');
  // Record keys that fail their pattern report "Invalid key in record"; the nested issue says why.
  const nested = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
  const message = nested ? `invalid key: ${nested}` : issue.message;
  return path ? `${path}: ${message}` : message;
}

function isEmptyMap(value: Record<string, unknown> | undefined | null): boolean {
  return value === undefined || value === null || Object.keys(value).length === 0;
}

function parseFile(path: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    if (path.endsWith('.json')) return { ok: true, value: JSON.parse(text) as unknown };
    return { ok: true, value: parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 }) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { ok: false, reason: `is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${message}` };
  }
}

/**
 * Reads every `*.yaml`, `*.yml` and `*.json` file of `dir` (in name order; other files are ignored), validates them,
 * resolves inheritance and composes every model. Any problem makes the whole catalog unavailable rather than
 * partially loaded: a half catalog would silently hide models (spec: 503 `model_plane_unavailable`, never an
 * empty list).
 */
export function loadCatalog(dir: string): CatalogState {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) return { ok: false, file: root, reason: 'the catalog directory does not exist' };
  const names = readdirSync(root)
    .filter((name) => !name.startsWith('.') && EXTENSIONS.some((ext) => name.endsWith(ext)))
    .sort(compareRefs);
  if (names.length === 0) return { ok: false, file: root, reason: 'the catalog directory holds no catalog file (*.yaml, *.yml, *.json)' };

  const shared: Record<string, SharedModelDefinition> = {};
  const sharedFile: Record<string, string> = {};
  const providers = new Map<string, CatalogProvider>();
  const files: string[] = [];
  for (const name of names) {
    const file = join(root, name);
    if (!statSync(file).isFile()) continue;
    files.push(file);
    const parsed = parseFile(file);
    if (!parsed.ok) return { ok: false, file, reason: parsed.reason };
    // An empty or comment-only file parses to null. It is refused rather than read as "nothing": a file truncated
    // by a failed deploy must not silently take its providers out of the catalog (spec: 503, never an empty list).
    if (parsed.value === null || parsed.value === undefined) return { ok: false, file, reason: 'the file is empty' };
    const checked = catalogFileSchema.safeParse(parsed.value);
    if (!checked.success) return { ok: false, file, reason: describeIssue(checked.error) };
    if (isEmptyMap(checked.data.providers) && isEmptyMap(checked.data.model_definitions)) {
      return { ok: false, file, reason: 'the file is empty: it declares neither providers nor model_definitions' };
    }
    for (const [defName, definition] of Object.entries(checked.data.model_definitions ?? {})) {
      if (Object.hasOwn(shared, defName))
        return { ok: false, file, reason: `model_definitions.${defName} is also defined in ${sharedFile[defName]}` };
      shared[defName] = definition;
      sharedFile[defName] = file;
    }
    for (const [id, entry] of Object.entries(checked.data.providers ?? {})) {
      const existing = providers.get(id);
      if (existing) return { ok: false, file, reason: `providers.${id} is also declared in ${existing.file}` };
      const { models, ...declaration } = entry;
      if (!WIRES[declaration.api_format].credentials.includes(declaration.credentials)) {
        return {
          ok: false,
          file,
          reason: `providers.${id}: the ${declaration.api_format} adapter does not support the ${declaration.credentials} credential lane`,
        };
      }
      providers.set(id, { id, file, declaration, models: new Map(Object.entries(models ?? {})) });
    }
  }

  // A catalog without providers would serve `{"models":[]}`, the empty list the spec forbids in place of 503.
  if (providers.size === 0) {
    return {
      ok: false,
      file: files.length === 1 ? (files[0] ?? root) : root,
      reason: `no provider is declared (files read: ${files.length > 0 ? files.map((f) => basename(f)).join(', ') : 'none'})`,
    };
  }

  const composed = new Map<string, ComposedModel>();
  const sortedProviders = new Map([...providers.entries()].sort(([a], [b]) => compareRefs(a, b)));
  for (const provider of sortedProviders.values()) {
    for (const [modelKey, definition] of provider.models) {
      const result = composeModel({ providerId: provider.id, declaration: provider.declaration, modelKey, definition, shared });
      if (!result.ok) return { ok: false, file: provider.file, reason: `providers.${provider.id}.models.${modelKey}: ${result.reason}` };
      composed.set(result.model.ref, result.model);
    }
  }
  return {
    ok: true,
    catalog: Object.freeze({
      dir: root,
      files,
      providers: sortedProviders,
      modelDefinitions: Object.freeze(shared),
      composed: new Map([...composed.entries()].sort(([a], [b]) => compareRefs(a, b))),
    }),
  };
}
