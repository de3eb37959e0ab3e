// Maps a path in the parsed document back to a line and column in the YAML text, using the node
// ranges the `yaml` package keeps. A path that leads nowhere (a missing key) resolves to the
// deepest node that exists, which is where the operator has to add it.
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Pair, type YAMLMap } from 'yaml';
import type { PathSegment } from './errors.js';

export interface Position {
  line: number;
  col: number;
}

function startOf(node: unknown): number | undefined {
  if (node !== null && typeof node === 'object' && 'range' in node) {
    const r = (node as { range?: [number, number, number] | null }).range;
    if (r) return r[0];
  }
  return undefined;
}

// Each map's pairs by key, built once per map: a file with thousands of errors in one big map would
// otherwise search that map once per error.
const indexes = new WeakMap<YAMLMap, Map<string, Pair>>();

function pairOf(map: YAMLMap, seg: PathSegment | undefined): Pair | undefined {
  let index = indexes.get(map);
  if (!index) {
    index = new Map();
    for (const p of map.items) {
      const k: unknown = p.key;
      const name = isScalar(k) ? String(k.value) : String(k);
      if (!index.has(name)) index.set(name, p);
    }
    indexes.set(map, index);
  }
  return index.get(String(seg));
}

export function locate(doc: Document, lc: LineCounter, path: readonly PathSegment[], at: 'key' | 'value' = 'value'): Position {
  let node: unknown = doc.contents;
  let offset = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let keyOffset: number | undefined;
    if (isMap(node)) {
      const pair = pairOf(node, seg);
      if (!pair) break;
      keyOffset = startOf(pair.key);
      next = pair.value;
      if (at === 'key' && i === path.length - 1) {
        offset = keyOffset ?? offset;
        break;
      }
    } else if (isSeq(node) && typeof seg === 'number') {
      next = node.items[seg];
    } else {
      break;
    }
    const o = startOf(next) ?? keyOffset;
    if (o === undefined) break;
    offset = o;
    node = next;
  }
  const { line, col } = lc.linePos(offset);
  return { line, col };
}
