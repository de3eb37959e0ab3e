// The include globbing keepalived gets from glob(3) with GLOB_BRACE: csh-style braces {a,b}, then
// '*', '?' and '[...]' per path component; a leading '.' is only matched explicitly. Node 20 has no
// fs.glob, and this is small. Directory access goes through DirReader so it can be tested in memory.
import * as path from 'node:path';

export interface DirReader {
  /** Entry names of a directory, or undefined when it cannot be listed. */
  list(dir: string): string[] | undefined;
  isFile(file: string): boolean;
}

// Braces multiply: "{a,b}" 30 times is 2^30 patterns. No include tree needs more than a few; past this
// the include is refused (the parser names it) instead of taking the memory and the minutes.
export const MAX_BRACE_PATTERNS = 1024;

/** "{a,b{c,d}}x" → ["ax", "bcx", "bdx"]; unbalanced braces are left as literal text. */
export function expandBraces(pattern: string): string[] {
  const open = findBrace(pattern);
  if (!open) return [pattern];
  const { start, end, alternatives } = open;
  const head = pattern.slice(0, start);
  const tails = expandBraces(pattern.slice(end + 1));
  const out: string[] = [];
  for (const alt of alternatives) {
    for (const a of expandBraces(alt)) {
      for (const t of tails) {
        if (out.length === MAX_BRACE_PATTERNS) throw new Error(`its braces expand to more than ${MAX_BRACE_PATTERNS} patterns`);
        out.push(head + a + t);
      }
    }
  }
  return out;
}

function findBrace(p: string): { start: number; end: number; alternatives: string[] } | undefined {
  for (let s = 0; s < p.length; s++) {
    if (p[s] !== '{') continue;
    let depth = 0;
    const alts: string[] = [];
    let from = s + 1;
    for (let i = s; i < p.length; i++) {
      const c = p[i];
      if (c === '{') depth++;
      else if (c === '}') {
        depth--;
        if (depth === 0) {
          alts.push(p.slice(from, i));
          // "{x}" with one alternative is literal in csh too only when empty; treat one alternative as literal.
          if (alts.length < 2) break;
          return { start: s, end: i, alternatives: alts };
        }
      } else if (c === ',' && depth === 1) {
        alts.push(p.slice(from, i));
        from = i + 1;
      }
    }
  }
  return undefined;
}

function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

// One path component's pattern, matched in linear passes rather than as one regular expression: as a
// RegExp, `*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b` against a 60-letter name backtracked for minutes (found while
// hardening the importer). A [class] is still a one-character RegExp, which cannot backtrack.
type GlobToken = { kind: 'star' } | { kind: 'one'; test: (c: string) => boolean };

/** The tokens of a segment, or undefined when a [class] cannot be compiled (it matches no file then). */
function segmentTokens(segment: string): GlobToken[] | undefined {
  const out: GlobToken[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] ?? '';
    if (c === '*') out.push({ kind: 'star' });
    else if (c === '?') out.push({ kind: 'one', test: () => true });
    else if (c === '[' && classEnd(segment, i) >= 0) {
      const close = classEnd(segment, i);
      let body = segment.slice(i + 1, close);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      let re: RegExp;
      try {
        // a ']' first in the class is one of its characters (glob(3)); JavaScript reads "[]" as an empty class
        re = new RegExp('^[' + body.replace(/[\\\]]/g, '\\$&') + ']$');
      } catch {
        // a class JavaScript refuses, as [z-a]: glob(3) matches no file with it (keepalived 2.2.7 -t, measured)
        return undefined;
      }
      out.push({ kind: 'one', test: (x) => re.test(x) });
      i = close;
    } else out.push({ kind: 'one', test: (x) => x === c });
  }
  return out;
}

/** Index of the ']' closing the class opened at `open` ("[]…]" and "[!]…]" hold a ']'), or -1. */
function classEnd(segment: string, open: number): number {
  return segment.indexOf(']', open + (segment[open + 1] === '!' ? 3 : 2));
}

/** Wildcard matching that goes back only to the last '*': at most name × pattern steps. */
function matches(tokens: GlobToken[], name: string): boolean {
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const tok = tokens[t];
    if (tok?.kind === 'star') {
      starT = t++;
      starN = n;
    } else if (tok?.kind === 'one' && tok.test(name[n] ?? '')) {
      t++;
      n++;
    } else if (starT >= 0) {
      t = starT + 1;
      n = ++starN;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

/** Absolute pattern → matching regular files, sorted per brace alternative (as glob(3) does). */
export function globFiles(pattern: string, fs: DirReader): string[] {
  const out: string[] = [];
  for (const p of expandBraces(pattern)) {
    const matches = globOne(path.resolve(p), fs).sort();
    for (const m of matches) if (!out.includes(m)) out.push(m);
  }
  return out;
}

function globOne(abs: string, fs: DirReader): string[] {
  const segments = abs.split('/').filter((s) => s !== '');
  let current = ['/'];
  for (const seg of segments) {
    const next: string[] = [];
    for (const dir of current) {
      if (!hasMagic(seg)) {
        next.push(path.join(dir, seg));
        continue;
      }
      const tokens = segmentTokens(seg);
      if (tokens === undefined) continue;
      for (const name of fs.list(dir) ?? []) {
        if (name.startsWith('.') && !seg.startsWith('.')) continue;
        if (matches(tokens, name)) next.push(path.join(dir, name));
      }
    }
    current = next;
  }
  return current.filter((f) => fs.isFile(f));
}
