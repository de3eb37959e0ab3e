// Where the cursor is in a block-style YAML document, read from indentation alone: the key path of the
// mapping it is in ("[]" for a sequence item) and whether it is on a key or on a value. No parser: the text
// being edited is often not valid YAML, and completion must still work on a half-typed line.

export interface CursorPlace {
  /** Keys from the root to the mapping the cursor is in; "[]" stands for an item of a sequence. */
  path: string[];
  /** 'key': typing a key of that mapping; 'value': typing the value of `key`. */
  kind: 'key' | 'value';
  /** For 'value': the key whose value is typed. */
  key?: string;
  /** The word typed so far, and the offset where it starts (what a completion replaces). */
  prefix: string;
  from: number;
}

/** A line's nesting marks: the column of each "- " and of its key, left to right. */
interface Mark {
  col: number;
  key: string | null; // null: a "- " sequence item
}

const KEY = /^([A-Za-z0-9_$.-]+|"[^"]*"|'[^']*'):(?:\s|$)/;

function marksOf(line: string): Mark[] {
  const marks: Mark[] = [];
  let i = line.length - line.trimStart().length;
  for (;;) {
    const rest = line.slice(i);
    if (rest.startsWith('- ') || rest === '-') {
      marks.push({ col: i, key: null });
      i += 1;
      while (line[i] === ' ') i++;
      continue;
    }
    const m = KEY.exec(rest);
    if (m?.[1] !== undefined) marks.push({ col: i, key: m[1].replace(/^["']|["']$/g, '') });
    return marks;
  }
}

/** The parents of a key (or "- " item) at column `col` on line `lineNo`, read from the lines above it. */
function parentsOf(lines: string[], lineNo: number, col: number, before: Mark[]): string[] {
  const path: string[] = [];
  let target = col;
  const take = (marks: Mark[]): void => {
    for (let k = marks.length - 1; k >= 0; k--) {
      const m = marks[k];
      if (m === undefined || m.col >= target) continue;
      path.push(m.key ?? '[]');
      target = m.col;
    }
  };
  take(before);
  for (let n = lineNo - 1; n >= 0 && target > 0; n--) {
    const line = lines[n] ?? '';
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    take(marksOf(line));
  }
  return path.reverse();
}

/** The place of the cursor at `offset` in `text`. */
export function placeAt(text: string, offset: number): CursorPlace {
  const head = text.slice(0, offset);
  const lines = head.split('\n');
  const lineNo = lines.length - 1;
  const lineStart = offset - (lines[lineNo]?.length ?? 0);
  const upto = lines[lineNo] ?? '';
  const all = text.split('\n');

  // on a value: "  key: val|"
  const ind = upto.length - upto.trimStart().length;
  const marks = marksOf(upto);
  const last = marks[marks.length - 1];
  if (last?.key !== undefined && last.key !== null) {
    const after = upto.slice(last.col).replace(/^[^:]*:\s*/, '');
    if (!/[\s,[\]{}]/.test(after)) {
      return { path: parentsOf(all, lineNo, last.col, marks.slice(0, -1)), kind: 'value', key: last.key, prefix: after, from: offset - after.length };
    }
  }
  // on a key: "  - ke|" or "    |"
  const m = /^(\s*(?:-\s+)*)([A-Za-z0-9_$.-]*)$/.exec(upto);
  if (m?.[1] !== undefined && m[2] !== undefined) {
    const col = m[1].length;
    const dashes = marksOf(m[1] + 'x:').filter((k) => k.key === null);
    return { path: parentsOf(all, lineNo, col, dashes), kind: 'key', prefix: m[2], from: lineStart + col };
  }
  // anywhere else (inside a flow collection, a comment…): the mapping of the line's indentation, no prefix
  return { path: parentsOf(all, lineNo, ind, []), kind: 'key', prefix: '', from: offset };
}

/** The key path of the key that spans `offset`, with the key itself last, or null when it is no key. */
export function keyPathAt(text: string, offset: number): string[] | null {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const lineEnd = text.indexOf('\n', offset);
  const line = text.slice(lineStart, lineEnd === -1 ? text.length : lineEnd);
  const marks = marksOf(line);
  const last = marks[marks.length - 1];
  if (last?.key === undefined || last.key === null) return null;
  const col = offset - lineStart;
  if (col < last.col || col > last.col + last.key.length) return null;
  const lineNo = text.slice(0, lineStart).split('\n').length - 1;
  return [...parentsOf(text.split('\n'), lineNo, last.col, marks.slice(0, -1)), last.key];
}
