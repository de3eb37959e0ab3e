// A line diff (longest common subsequence) of two config texts, for the panel's diff view.
// Configs are a few hundred lines; the O(n·m) table is fine and the code stays obvious.

export interface DiffLine {
  op: ' ' | '+' | '-';
  text: string;
}

const MAX_CELLS = 4_000_000;

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
  if (am.length * bm.length > MAX_CELLS) {
    // too big to align: show it as a replacement
    for (const text of am) out.push({ op: '-', text });
    for (const text of bm) out.push({ op: '+', text });
  } else {
    const n = am.length;
    const m = bm.length;
    const w = m + 1;
    const lcs = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = am[i] === bm[j] ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        out.push({ op: ' ', text: am[i] ?? '' });
        i++;
        j++;
      } else if (i < n && (j === m || (lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0))) {
        out.push({ op: '-', text: am[i] ?? '' });
        i++;
      } else {
        out.push({ op: '+', text: bm[j] ?? '' });
        j++;
      }
    }
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: ' ', text });
  return out;
}
