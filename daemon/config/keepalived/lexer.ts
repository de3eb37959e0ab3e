// keepalived.conf lexer: one file's text → tokens with file:line:col positions.
//
// keepalived's syntax (keepalived.conf(5)) is line oriented: a statement is the words on one line, and
// '{' / '}' delimit blocks. Comments start with '#' or '!' anywhere outside quotes. Quoted strings use
// " or ', are concatenated with adjacent unquoted text (`abcd" efg "h` is one word) and understand the
// shell-like escapes \n \t \xHH \nnn \cC. The line-level "advanced" features are handled here too,
// before splitting into words, because keepalived also applies them to raw lines:
//   @ID / @^ID            conditional lines, compared with the config id (keepalived -i)
//   $NAME=VALUE           parameter definitions, substituted as $NAME (followed by blank) or ${NAME}
//   ~SEQ(...) ~LST(...)   generated lines — not supported: reported, the line is dropped
// Pure: no I/O. Everything that is dropped is returned as a diagnostic, never silently lost.

export interface Pos {
  file: string;
  line: number;
  col: number;
}

export type Token =
  | { kind: 'word'; text: string; quoted: boolean; pos: Pos }
  | { kind: 'open'; pos: Pos }
  | { kind: 'close'; pos: Pos }
  | { kind: 'eol'; pos: Pos };

export interface LexDiagnostic {
  pos: Pos;
  directive: string;
  why: string;
  /** keepalived only warns and goes on; nothing is lost (see Diagnostic.warning). */
  warning?: true;
}

/** A syntax error keepalived itself would not recover from sensibly: the import stops here. */
export class KeepalivedSyntaxError extends Error {
  constructor(
    readonly pos: Pos,
    readonly detail: string,
  ) {
    super(`${pos.file}:${pos.line}:${pos.col}: ${detail}`);
    this.name = 'KeepalivedSyntaxError';
  }
}

export interface LexOptions {
  /** keepalived's config id (-i); conditional `@ID` lines are kept only when ID matches. */
  configId: string;
  /** Parameters defined so far ($NAME=VALUE); shared across included files, as in keepalived. */
  params: Map<string, string>;
  /** Directory of the file, for ${_PWD}. */
  dir: string;
  /** Collects the ids named by @ID / @^ID lines, so the caller can say which ones were skipped. */
  conditionalIds?: Set<string>;
}

export interface LexResult {
  tokens: Token[];
  diagnostics: LexDiagnostic[];
}

const PARAM_DEF = /^\s*\$([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
const MAX_SUBSTITUTIONS = 100;
// A parameter that refers to itself ($A=$A $A) doubles the line on every pass: without a bound, 100
// passes exhaust memory and kill the process (found by test/fuzz/keepalived-import). keepalived 2.2.7
// itself accepts such a file silently (`keepalived -t` exits 0); the importer drops the line and says so.
const MAX_SUBSTITUTED_LINE = 65_536;

export function lex(text: string, file: string, opts: LexOptions): LexResult {
  const tokens: Token[] = [];
  const diagnostics: LexDiagnostic[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    let line = lines[i] ?? '';

    // Conditional configuration: '@ID rest' keeps 'rest' only on the director whose config id is ID.
    const cond = /^(\s*)@(\^?)(\S*)/.exec(line);
    if (cond) {
      const negate = cond[2] === '^';
      const id = cond[3] ?? '';
      opts.conditionalIds?.add(id);
      const matches = id === opts.configId;
      if (matches === negate) continue;
      line = ' '.repeat(cond[0].length) + line.slice(cond[0].length);
    }

    const def = PARAM_DEF.exec(line);
    if (def) {
      const name = def[1] ?? '';
      const value = (def[2] ?? '').trim();
      if (value.endsWith('\\')) {
        // Multi-line definitions are templates for whole blocks; expanding them faithfully needs
        // keepalived's own line machinery. Skip the continuation lines and say so.
        while (i < lines.length && (lines[i] ?? '').trimEnd().endsWith('\\')) i++;
        diagnostics.push({
          pos: { file, line: lineNo, col: 1 },
          directive: `$${name}`,
          why: 'multi-line parameter definitions are not supported by the importer; expand them by hand',
        });
        continue;
      }
      opts.params.set(name, value);
      continue;
    }

    if (/^\s*~(SEQx?|LST)\(/.test(line)) {
      diagnostics.push({
        pos: { file, line: lineNo, col: line.indexOf('~') + 1 },
        directive: line.trim().split(/\s/)[0] ?? '~SEQ',
        why: 'sequence/list blocks are not supported by the importer; expand them by hand',
      });
      continue;
    }

    if (line.includes('$')) {
      const substituted = substitute(line, opts);
      if (substituted === null) {
        diagnostics.push({
          pos: { file, line: lineNo, col: line.indexOf('$') + 1 },
          directive: line.trim().split(/\s/)[0] ?? '$',
          why: `parameter substitution makes this line longer than ${MAX_SUBSTITUTED_LINE} characters (a parameter that refers to itself?); the line is dropped`,
        });
        continue;
      }
      line = substituted;
    }
    tokenizeLine(line, file, lineNo, tokens);
    tokens.push({ kind: 'eol', pos: { file, line: lineNo, col: line.length + 1 } });
  }
  return { tokens, diagnostics };
}

/** The line with its parameters substituted, or null when that grows it past MAX_SUBSTITUTED_LINE. */
function substitute(line: string, opts: LexOptions): string | null {
  const lookup = (name: string): string | undefined => {
    if (name === '_PWD') return opts.dir;
    if (name === '_INSTANCE') return opts.configId;
    if (name === '_HASH') return '#';
    if (name === '_BANG') return '!';
    return opts.params.get(name);
  };
  let out = line;
  for (let n = 0; n < MAX_SUBSTITUTIONS; n++) {
    const before = out;
    // the length is counted while replacing: one pass of many long values must not build the huge line first
    let length = out.length;
    out = out.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)(?=\s|$)/g, (whole, braced?: string, bare?: string) => {
      const value = length > MAX_SUBSTITUTED_LINE ? undefined : lookup(braced ?? bare ?? '');
      if (value === undefined) return whole;
      length += value.length - whole.length;
      return value;
    });
    if (length > MAX_SUBSTITUTED_LINE) return null;
    if (out === before) break;
  }
  return out;
}

function tokenizeLine(line: string, file: string, lineNo: number, out: Token[]): void {
  let i = 0;
  const n = line.length;
  while (i < n) {
    const c = line[i] ?? '';
    if (c === ' ' || c === '\t' || c === '\v' || c === '\f') {
      i++;
      continue;
    }
    if (c === '#' || c === '!') return;
    const pos = { file, line: lineNo, col: i + 1 };
    if (c === '{' && literalBraceEnd(line, i) < 0) {
      out.push({ kind: 'open', pos });
      i++;
      continue;
    }
    if (c === '}') {
      out.push({ kind: 'close', pos });
      i++;
      continue;
    }
    // A word: unquoted characters and quoted sections, glued together until blank, brace or comment.
    let text = '';
    let quoted = false;
    while (i < n) {
      const d = line[i] ?? '';
      if (d === ' ' || d === '\t' || d === '}' || d === '#' || d === '!') break;
      if (d === '{') {
        // Braces inside a word are text (a glob's {a,b}, an undefined ${PARAM}); otherwise a block opens.
        const end = literalBraceEnd(line, i);
        if (end < 0) break;
        text += line.slice(i, end + 1);
        i = end + 1;
        continue;
      }
      if (d === '"' || d === "'") {
        quoted = true;
        const end = readQuoted(line, i, d);
        if (end === null) {
          throw new KeepalivedSyntaxError({ file, line: lineNo, col: i + 1 }, `unterminated quoted string (missing closing ${d})`);
        }
        text += end.text;
        i = end.next;
        continue;
      }
      text += d;
      i++;
    }
    out.push({ kind: 'word', text, quoted, pos });
  }
}

/** Index of the '}' closing a non-empty, blank-free {…} group starting at `start`, or -1. */
function literalBraceEnd(line: string, start: number): number {
  let depth = 0;
  for (let i = start; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t' || c === '#' || c === '!' || c === '"' || c === "'") return -1;
    if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return i - start > 1 ? i : -1;
    }
  }
  return -1;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** The escapes of a quoted string resolved in unquoted text (keepalived does that for a url's regex). */
export function resolveEscapes(text: string): string {
  return readQuoted(`${text}\0`, -1, '\0')?.text ?? text;
}

function readQuoted(line: string, start: number, quote: string): { text: string; next: number } | null {
  let text = '';
  let i = start + 1;
  while (i < line.length) {
    const c = line[i] ?? '';
    if (c === quote) return { text, next: i + 1 };
    if (c !== '\\' || i + 1 >= line.length) {
      text += c;
      i++;
      continue;
    }
    const e = line[i + 1] ?? '';
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      text += simple;
      i += 2;
    } else if (e === 'x') {
      const hex = /^[0-9a-fA-F]+/.exec(line.slice(i + 2))?.[0] ?? '';
      text += hex === '' ? 'x' : String.fromCharCode(parseInt(hex.slice(-2), 16));
      i += 2 + hex.length;
    } else if (/[0-7]/.test(e)) {
      const oct = /^[0-7]{1,3}/.exec(line.slice(i + 1))?.[0] ?? '0';
      text += String.fromCharCode(parseInt(oct, 8) & 0xff);
      i += 1 + oct.length;
    } else if (e === 'c' && i + 2 < line.length) {
      text += String.fromCharCode((line.charCodeAt(i + 2) & 0x1f));
      i += 3;
    } else {
      text += e;
      i += 2;
    }
  }
  return null;
}
