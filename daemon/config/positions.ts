// Maps a path in the parsed document back to a line and column in the YAML text, using the node
// ranges the `yaml` package keeps. A path that leads nowhere (a missing key) resolves to the
// deepest node that exists, which is where the operator has to add it.
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter } from 'yaml';
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

export function locate(doc: Document, lc: LineCounter, path: readonly PathSegment[], at: 'key' | 'value' = 'value'): Position {
  let node: unknown = doc.contents;
  let offset = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isAlias(node)) node = node.resolve(doc);
    let next: unknown;
    let keyOffset: number | undefined;
    if (isMap(node)) {
      const pair = node.items.find((p) => {
        const k: unknown = p.key;
        return (isScalar(k) ? String(k.value) : String(k)) === String(seg);
      });
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
