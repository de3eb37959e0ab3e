// Duplicate keys of the YAML maps of a document, in one pass over each map (a Set of its keys) — the
// check a config needs, since `a: 1` then `a: 2` would otherwise silently keep the last.
import { isScalar, visit, type Document } from 'yaml';

/** The text offsets of every key that repeats an earlier key of the same map (scalar keys). */
export function duplicateKeys(doc: Document): number[] {
  const found: number[] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const k: unknown = pair.key;
        if (!isScalar(k)) continue;
        // `1` and `"1"` are different keys in YAML, as they were for the yaml package's own check
        const id = `${typeof k.value}:${String(k.value)}`;
        if (seen.has(id)) found.push(k.range?.[0] ?? 0);
        else seen.add(id);
      }
      return undefined;
    },
  });
  return found;
}

