// keepalived.conf parser: tokens → a tree of directives (keyword, arguments, optional block), each with
// the file:line:col it came from. `include` (and its includer/includem/includew/includeb/includea
// variants) is expanded here, in place, with globs resolved relative to the including file's directory
// as keepalived does. File access goes through SourceLoader so the parser itself stays pure.
import { MAX_CONFIG_BYTES } from '../errors.js';
import { KeepalivedSyntaxError, lex, type LexDiagnostic, type Pos, type Token } from './lexer.js';

export interface Directive {
  keyword: string;
  args: string[];
  /** Whether each argument had a quoted part (the lexer resolves escapes only there). */
  argQuoted?: boolean[];
  pos: Pos;
  /** Present when the directive opens a `{ … }` block (possibly empty). */
  block?: Directive[];
}

export interface SourceLoader {
  read(file: string): string;
  /**
   * The same string for two paths of one file (device and inode on disk): a symbolic link or a `dir -> .`
   * link makes a loop whose paths all differ. Without it, the path is the identity.
   */
  identity?(file: string): string;
  /** Files matching an include pattern (absolute), sorted; [] when nothing matches. */
  glob(pattern: string): string[];
  resolve(baseDir: string, pattern: string): string;
  /** What a path that is there but is no regular file is ("a FIFO (named pipe)"); undefined otherwise. */
  notAFile?(file: string): string | undefined;
  dirname(file: string): string;
}

export interface ParseOptions {
  configId: string;
  /** How a file is named in messages (the path the operator can open); default: as resolved. */
  display?: (file: string) => string;
}

export interface ParseResult {
  directives: Directive[];
  diagnostics: LexDiagnostic[];
  /** Every file read, once each, in the order first read (the main file first). */
  files: string[];
  /** Config ids named by conditional (@ID) lines. */
  conditionalIds: Set<string>;
}

const INCLUDE_KEYWORDS = new Set(['include', 'includer', 'includem', 'includew', 'includeb', 'includea']);
const MAX_INCLUDE_DEPTH = 32;
// keepalived's deepest real nesting is 4 (virtual_server → real_server → HTTP_GET → url); the bound keeps a
// hostile or broken file (10,000 '{') a placed error instead of a stack overflow in this recursive parser.
const MAX_BLOCK_DEPTH = 64;
// Each file is read up to MAX_CONFIG_BYTES (source.ts), but a tree can read many: a file that includes the next
// one twice, 31 deep, reads 2^31 small files. The whole tree is bounded: its bytes (keepalived's syntax is
// wordier than lvsd's YAML, so four times lvsd's own limit) and the files read (one include of a file counts
// once per time it is read).
export const MAX_IMPORT_BYTES = 4 * MAX_CONFIG_BYTES;
export const MAX_IMPORT_FILES = 4096;

export function parseKeepalived(file: string, loader: SourceLoader, opts: ParseOptions): ParseResult {
  const state: State = { loader, opts, params: new Map(), diagnostics: [], files: [], stack: [], conditionalIds: new Set(), depth: 0, bytes: 0, reads: 0 };
  const directives = parseFile(file, state, undefined);
  return { directives, diagnostics: state.diagnostics, files: [...new Set(state.files)], conditionalIds: state.conditionalIds };
}

interface State {
  loader: SourceLoader;
  opts: ParseOptions;
  params: Map<string, string>;
  diagnostics: LexDiagnostic[];
  files: string[];
  /** The files being read, outermost first: their paths and identities (a loop is an identity seen again). */
  stack: { file: string; id: string }[];
  conditionalIds: Set<string>;
  /** How many blocks are open where the parser is, across included files. */
  depth: number;
  /** Bytes and files read so far, every read counted (MAX_IMPORT_BYTES, MAX_IMPORT_FILES). */
  bytes: number;
  reads: number;
}

function parseFile(file: string, state: State, from: Pos | undefined): Directive[] {
  const name = state.opts.display ?? ((f: string): string => f);
  const at = from ?? { file, line: 1, col: 1 };
  const id = identity(file, state.loader);
  if (state.stack.some((s) => s.id === id)) {
    const chain = [...state.stack.map((s) => s.file), file].map(name).join(' → ');
    const same = state.stack.find((s) => s.id === id)?.file;
    const alias = same !== undefined && same !== file ? ` (${name(file)} is ${name(same)})` : '';
    throw new KeepalivedSyntaxError(at, `include loop: ${chain}${alias}`);
  }
  if (state.stack.length >= MAX_INCLUDE_DEPTH) {
    throw new KeepalivedSyntaxError(at, `includes nested deeper than ${MAX_INCLUDE_DEPTH} files`);
  }
  if (++state.reads > MAX_IMPORT_FILES) {
    throw new KeepalivedSyntaxError(at, `includes read more than ${MAX_IMPORT_FILES} files in all (a file included again counts again); not imported`);
  }
  let text: string;
  try {
    text = state.loader.read(file);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    // a file over the size limit was read, and its message says why it stops there
    const tooBig = (e as { code?: unknown }).code === 'EFBIG';
    if (from) throw new KeepalivedSyntaxError(from, tooBig ? `included file ${name(file)}: ${why}` : `cannot read included file ${name(file)}: ${why}`);
    throw new KeepalivedSyntaxError({ file, line: 0, col: 0 }, tooBig ? why : `cannot read: ${why}`);
  }
  state.bytes += Buffer.byteLength(text);
  if (state.bytes > MAX_IMPORT_BYTES) {
    throw new KeepalivedSyntaxError(at, `the files read reach ${state.bytes} bytes in all with ${name(file)} (a file included again counts again); the importer reads at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB — not imported`);
  }
  // A NUL byte: a binary file, not a keepalived.conf (lvsd's own loader says the same of its config);
  // lexing one only gives an error about a "quoted string" somewhere in it.
  const nul = text.indexOf('\0');
  if (nul >= 0) {
    const before = text.slice(0, nul);
    const pos = { file, line: before.split('\n').length, col: nul - before.lastIndexOf('\n') };
    throw new KeepalivedSyntaxError(pos, 'not a text file (a NUL byte here); a keepalived.conf is text');
  }
  state.files.push(file);
  state.stack.push({ file, id });
  const lexed = lex(text, file, { configId: state.opts.configId, params: state.params, dir: state.loader.dirname(file), conditionalIds: state.conditionalIds });
  state.diagnostics.push(...lexed.diagnostics);
  const cursor = { tokens: lexed.tokens, i: 0 };
  const directives = parseBlock(cursor, state, undefined);
  state.stack.pop();
  return directives;
}

interface Cursor {
  tokens: Token[];
  i: number;
}

/** Parses statements until the matching '}' (when `opener` is set) or the end of the file. */
function parseBlock(cur: Cursor, state: State, opener: Pos | undefined): Directive[] {
  const out: Directive[] = [];
  let words: { text: string; quoted: boolean; pos: Pos }[] = [];

  const finish = (): Directive | undefined => {
    const first = words[0];
    if (!first) return undefined;
    const d: Directive = { keyword: first.text, args: words.slice(1).map((w) => w.text), argQuoted: words.slice(1).map((w) => w.quoted), pos: first.pos };
    words = [];
    out.push(d);
    return d;
  };

  for (;;) {
    const t = cur.tokens[cur.i++];
    if (t === undefined) {
      if (opener) throw new KeepalivedSyntaxError(opener, "block opened here is never closed (missing '}')");
      finish();
      return expandIncludes(out, state);
    }
    switch (t.kind) {
      case 'word':
        words.push({ text: t.text, quoted: t.quoted, pos: t.pos });
        break;
      case 'eol':
        finish();
        break;
      case 'open': {
        let owner = finish();
        if (!owner) {
          // A '{' alone on its line belongs to the statement on the previous line.
          const prev = out[out.length - 1];
          if (!prev || prev.block || prev.pos.file !== t.pos.file) {
            throw new KeepalivedSyntaxError(t.pos, "'{' without a keyword before it");
          }
          owner = prev;
        }
        if (state.depth >= MAX_BLOCK_DEPTH) throw new KeepalivedSyntaxError(t.pos, `blocks nested deeper than ${MAX_BLOCK_DEPTH}`);
        state.depth++;
        owner.block = parseBlock(cur, state, t.pos);
        state.depth--;
        break;
      }
      case 'close':
        if (!opener) {
          // keepalived 2.2.7 logs "(FILE: Line N) Extra '}' found" and goes on (measured: keepalived -t).
          finish();
          state.diagnostics.push({ pos: t.pos, directive: '}', why: "warning: extra '}' without a matching '{'; ignored, as keepalived does", warning: true });
          break;
        }
        finish();
        return expandIncludes(out, state);
    }
  }
}

function expandIncludes(list: Directive[], state: State): Directive[] {
  if (!list.some((d) => INCLUDE_KEYWORDS.has(d.keyword) && !d.block)) return list;
  const out: Directive[] = [];
  for (const d of list) {
    if (!INCLUDE_KEYWORDS.has(d.keyword) || d.block) {
      out.push(d);
      continue;
    }
    const pattern = d.args.join(' ');
    if (pattern === '') {
      throw new KeepalivedSyntaxError(d.pos, `${d.keyword}: missing file name`);
    }
    const abs = state.loader.resolve(state.loader.dirname(d.pos.file), pattern);
    let files: string[];
    try {
      files = state.loader.glob(abs);
    } catch (e) {
      throw new KeepalivedSyntaxError(d.pos, `${d.keyword} ${pattern}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (files.length === 0) {
      // "no file matches" of a FIFO or a device that is right there sends the operator looking for a typo
      const what = state.loader.notAFile?.(abs);
      state.diagnostics.push({ pos: d.pos, directive: d.keyword, why: what === undefined ? `no file matches ${pattern}` : `${pattern} is ${what}, not a file; not included` });
      continue;
    }
    for (const f of files) out.push(...parseFile(f, state, d.pos));
  }
  return out;
}

function identity(file: string, loader: SourceLoader): string {
  try {
    return loader.identity?.(file) ?? file;
  } catch {
    // not there: the read says so, with its errno
    return file;
  }
}
