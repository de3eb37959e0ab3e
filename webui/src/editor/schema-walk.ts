// Reads config/lvsd.schema.json (draft-07, no $ref) for the editor: the schema at a key path, the keys a
// mapping may hold, the values a key may take, and the words shown on hover. A path segment "[]" is a
// sequence item. Several schemas can apply at once (anyOf): each answer is their union.

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema | JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  required?: string[];
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
}

/** The schema and every alternative of its anyOf/oneOf/allOf, flattened. */
function branches(s: JsonSchema): JsonSchema[] {
  const alts = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])];
  return [s, ...alts.flatMap(branches)];
}

function child(s: JsonSchema, seg: string): JsonSchema[] {
  if (seg === '[]') {
    if (s.items === undefined) return [];
    return Array.isArray(s.items) ? s.items : [s.items];
  }
  const direct = s.properties?.[seg];
  if (direct !== undefined) return [direct];
  const byPattern = Object.entries(s.patternProperties ?? {}).filter(([p]) => new RegExp(p, 'u').test(seg)).map(([, v]) => v);
  if (byPattern.length > 0) return byPattern;
  return typeof s.additionalProperties === 'object' ? [s.additionalProperties] : [];
}

/** Every schema that may apply at `path` (empty: the path is not in the schema). */
export function schemasAt(root: JsonSchema, path: readonly string[]): JsonSchema[] {
  let here = [root];
  for (const seg of path) here = here.flatMap(branches).flatMap((s) => child(s, seg));
  return here;
}

export interface KeyInfo {
  name: string;
  description: string;
  required: boolean;
}

/** The keys a mapping at `path` may hold, in the schema's order. */
export function keysAt(root: JsonSchema, path: readonly string[]): KeyInfo[] {
  const out = new Map<string, KeyInfo>();
  for (const s of schemasAt(root, path).flatMap(branches)) {
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      if (name === '$schema' || out.has(name)) continue;
      out.set(name, { name, description: describe(p), required: s.required?.includes(name) === true });
    }
  }
  return [...out.values()];
}

/** The values a scalar at `path` may take when the schema lists them (enum, const, boolean). */
export function valuesAt(root: JsonSchema, path: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of schemasAt(root, path).flatMap(branches)) {
    for (const v of [...(s.enum ?? []), ...(s.const === undefined ? [] : [s.const])]) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out.add(String(v));
    }
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes('boolean')) { out.add('true'); out.add('false'); }
  }
  return [...out];
}

function typeText(s: JsonSchema): string {
  const all = branches(s);
  const types = new Set<string>();
  for (const b of all) {
    if (b.enum !== undefined) types.add(b.enum.map((v) => JSON.stringify(v)).join(' | '));
    else if (b.const !== undefined) types.add(JSON.stringify(b.const));
    else if (b.type !== undefined) for (const t of Array.isArray(b.type) ? b.type : [b.type]) types.add(t === 'array' && b.items !== undefined && !Array.isArray(b.items) && typeof b.items.type === 'string' ? `${b.items.type}[]` : t);
  }
  const range = all.find((b) => b.minimum !== undefined || b.maximum !== undefined);
  return [...types].join(' | ') + (range === undefined ? '' : ` (${range.minimum ?? ''}..${range.maximum ?? ''})`);
}

/** One line of text for a key: its description, else its type. */
export function describe(s: JsonSchema): string {
  return branches(s).find((b) => b.description !== undefined)?.description ?? typeText(s);
}

/** What hover shows for the key at `path`: its type and description, or null when the schema has no such key. */
export function hoverAt(root: JsonSchema, path: readonly string[]): { title: string; type: string; description: string } | null {
  const here = schemasAt(root, path);
  const first = here[0];
  if (first === undefined) return null;
  const description = here.map((s) => branches(s).find((b) => b.description !== undefined)?.description).find((d) => d !== undefined) ?? '';
  return { title: path.filter((p) => p !== '[]').join('.'), type: here.map(typeText).filter((t) => t !== '').join(' | '), description };
}
