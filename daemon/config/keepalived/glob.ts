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

function segmentRegExp(segment: string): RegExp {
  let re = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] ?? '';
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      if (body.startsWith('!')) body = '^' + body.slice(1);
      re += '[' + body.replace(/\\/g, '\\\\') + ']';
      i = close;
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  try {
    return new RegExp('^' + re + '$');
  } catch {
    // a class JavaScript refuses, as [z-a]: glob(3) matches no file with it (keepalived 2.2.7 -t, measured)
    return /(?!)/;
  }
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
      const re = segmentRegExp(seg);
      for (const name of fs.list(dir) ?? []) {
        if (name.startsWith('.') && !seg.startsWith('.')) continue;
        if (re.test(name)) next.push(path.join(dir, name));
      }
    }
    current = next;
  }
  return current.filter((f) => fs.isFile(f));
}
