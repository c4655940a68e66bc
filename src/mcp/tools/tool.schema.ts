/**
 * The JSON Schemas a `tools/list` advertises, made compact (issue 17 item 4: the default list stays under 32 KB).
 * zod's conversion writes what the MCP default already says or what a JSON number cannot exceed anyway:
 *
 * - `$schema` on every schema (2020-12 is MCP's default dialect when it is absent);
 * - `minimum`/`maximum` of ±(2^53 − 1) on every integer (zod's safe-integer bounds).
 *
 * Validation does not change: zod still validates arguments and results on the server, and the advertised
 * schemas accept exactly what they accepted before.
 */

const SAFE_BOUND = Number.MAX_SAFE_INTEGER;

/** `schema` without the redundant keywords above, at every depth. */
export function compactJsonSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => compactJsonSchema(item)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema') continue;
    if ((key === 'minimum' && value === -SAFE_BOUND) || (key === 'maximum' && value === SAFE_BOUND)) continue;
    out[key] = compactJsonSchema(value);
  }
  return out as T;
}

/** Keywords kept when an output schema's nested object or array is outlined to its type. */
const OUTLINE_KEEP = new Set(['type', 'anyOf', 'enum', 'const']);

/**
 * An output schema as advertised: the value's fields two levels deep (a result's top-level fields, and the fields
 * of the objects and list items directly inside them) with their types; deeper objects and arrays are outlined to
 * their type, and output descriptions are left out (a result is self-describing JSON, and its text rendering says
 * what came from the forge). The server still validates every result against the whole zod schema; the outline
 * accepts everything the whole schema accepts. Inputs keep their descriptions: a model needs them to call a tool.
 */
export function outlineOutputSchema(schema: Record<string, unknown>, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description') continue;
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Record<string, unknown>>).map(([name, property]) => [
          name,
          outlineProperty(property, depth + 1),
        ]),
      );
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map((branch: Record<string, unknown>) => outlineOutputSchema(branch, depth));
    } else if (key === 'items' && value !== null && typeof value === 'object') {
      out.items = outlineProperty(value as Record<string, unknown>, depth + 1);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function outlineProperty(property: Record<string, unknown>, depth: number): Record<string, unknown> {
  if (depth < 3) return outlineOutputSchema(property, depth);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(property))
    if (OUTLINE_KEEP.has(key))
      out[key] = key === 'anyOf' && Array.isArray(value) ? value.map((b: Record<string, unknown>) => outlineProperty(b, depth)) : value;
  return out;
}
