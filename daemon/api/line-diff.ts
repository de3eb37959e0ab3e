// A line diff of two config texts, for the panel's diff view: Myers' greedy shortest edit script, whose
// work grows with the texts' length times the number of changed lines, not with the product of the two
// lengths. A 15,000-line config (1,000 services) with a weight changed in two services far apart is two
// changed lines, found in milliseconds; the table of every line pair a longest-common-subsequence diff needs
// was 225 million cells there, so such a diff used to fall back to thousands of lines shown as replaced.

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

/**
 * Diagonals visited and lines compared before the texts count as too different to align (their middle is then
 * shown as replaced): tens of ms of the event loop at most, and the frontiers kept for the walk back (fewer
 * numbers than steps) stay below 16 MB.
 */
const MAX_STEPS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.at(-1) === '') a.pop();
  if (b.at(-1) === '') b.pop();
  // trim the common head and tail first: most edits touch a few lines
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: ' ', text }));
  const middle = editScript(am, bm);
  if (middle === undefined) {
    for (const text of am) out.push({ op: '-', text });
    for (const text of bm) out.push({ op: '+', text });
  } else {
    out.push(...middle);
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: ' ', text });
  return out;
}

/** Each distinct line as a small integer: the search compares numbers, not strings. */
function intern(a: readonly string[], b: readonly string[]): [Int32Array, Int32Array] {
  const ids = new Map<string, number>();
  const of = (lines: readonly string[]): Int32Array =>
    Int32Array.from(lines, (l) => {
      let id = ids.get(l);
      if (id === undefined) ids.set(l, (id = ids.size));
      return id;
    });
  return [of(a), of(b)];
}

/** The shortest edit script from `a` to `b`, or undefined past MAX_STEPS. */
function editScript(a: readonly string[], b: readonly string[]): DiffLine[] | undefined {
  const n = a.length;
  const m = b.length;
  // Every edit is one diagonal further from the first: the length difference alone may be past the budget.
  if ((n - m) ** 2 / 2 > MAX_STEPS) return undefined;
  const [x0, y0] = intern(a, b);
  // v[k + off]: the furthest line of `a` reached on diagonal k (x - y = k). frontiers[d]: what edit d starts
  // from, v on the diagonals edit d - 1 reached (k = -(d-1), -(d-1)+2, … d-1), kept for the walk back.
  const off = n + m + 1;
  const v = new Int32Array(2 * off + 1);
  const frontiers: Int32Array[] = [];
  let steps = 0;
  let found = -1;
  for (let d = 0; d <= n + m && found < 0; d++) {
    const f = new Int32Array(d);
    for (let i = 0; i < d; i++) f[i] = v[off - d + 1 + 2 * i] ?? 0;
    frontiers.push(f);
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[off + k - 1] ?? 0) < (v[off + k + 1] ?? 0)) ? (v[off + k + 1] ?? 0) : (v[off + k - 1] ?? 0) + 1;
      const from = x;
      while (x < n && x - k < m && x0[x] === y0[x - k]) x++;
      steps += 1 + x - from;
      v[off + k] = x;
      if (x >= n && x - k >= m) {
        found = d;
        break;
      }
    }
    if (steps > MAX_STEPS) return undefined;
  }
  // Walk back from the end through the frontiers: the run of equal lines after each edit, then the edit.
  const out: DiffLine[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const f = frontiers[d] as Int32Array;
    const at = (k: number): number => f[(k + d - 1) >> 1] ?? 0;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    const editX = down ? prevX : prevX + 1;
    while (x > editX) {
      y--;
      out.push({ op: ' ', text: a[--x] ?? '' });
    }
    if (down) out.push({ op: '+', text: b[prevY] ?? '' });
    else out.push({ op: '-', text: a[prevX] ?? '' });
    x = prevX;
    y = prevY;
  }
  while (x > 0) out.push({ op: ' ', text: a[--x] ?? '' });
  return out.reverse();
}
