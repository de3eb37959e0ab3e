// Config problems as operators read them: `FILE:LINE:COL: path: message`, like compilers do, so
// editors and terminals can jump to the place.

export type PathSegment = string | number;

/** A problem found in the parsed document, before it is given a line and column. */
export interface Issue {
  path: PathSegment[];
  message: string;
  /** Point at the key of the last path segment rather than its value (unknown keys). */
  at?: 'key' | 'value';
}

export interface ConfigError {
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  col: number;
  /** "vrrp.instances[0].priority"; "" for YAML syntax errors. */
  path: string;
  message: string;
  /** Only on the last line of a cut list (errors.ts: `bounded`): how many errors it stands for. */
  notShown?: number;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** ["vrrp","instances",0,"priority"] → "vrrp.instances[0].priority". */
export function renderPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (IDENT.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

// ---- what an error may echo from the file ------------------------------------------------------
// A config error quotes the file back (a key, a value, the YAML parser's view of a line). The file may
// be anything — a binary blob, a key full of terminal escapes, a 4 MB line — and the quote lands in a
// terminal, the journal and the panel. So every quote is escaped and cut, and a file with thousands of
// problems shows the first MAX_ERRORS and a count of the rest.

/**
 * The largest config lvsd parses, in bytes of UTF-8. Parsing costs about 0.6 s and 60 MB of memory per
 * 100 KiB here (YAML nodes, then the checks): a 4 MB file held the event loop 2.5 s and took 850 MB. 1,000
 * virtual servers of 10 real servers each are 0.6 MiB, so 1 MiB leaves room and bounds the cost.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;

/**
 * Why a config over MAX_CONFIG_BYTES is not parsed: its size and the limit. `endless`: the size is unknown
 * (a device, a pipe) and reading stopped one byte past the limit.
 */
export function tooBigMessage(bytes: number, endless = false): string {
  const size = endless ? `more than ${mib(MAX_CONFIG_BYTES)} (reading stopped at ${bytes} bytes)` : `${mib(bytes)} (${bytes} bytes)`;
  return `the config is ${size}; lvsd parses at most ${mib(MAX_CONFIG_BYTES)} — not parsed`;
}

/** The one error of a config over MAX_CONFIG_BYTES: names the file, its size and the limit. */
export function tooBig(file: string, bytes: number, endless = false): ConfigError {
  return { file, line: 1, col: 1, path: '', message: tooBigMessage(bytes, endless) };
}

/** Errors a load reports at most; the rest are counted in one last line. */
export const MAX_ERRORS = 100;
/** Characters of one message at most (a YAML parser message can quote a whole line). */
export const MAX_MESSAGE = 300;

// C0 and C1 controls, DEL, zero-width and bidi controls, line/paragraph separators, BOM, lone surrogates:
// anything that can move the cursor, recolour a terminal or reorder what a reader sees.
const UNSAFE_CHAR = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;

/** Text from the file as safe to print: unsafe characters as \uXXXX, at most `max` characters ("…" ends a cut). */
export function echo(text: string, max = 60): string {
  const escaped = text.replace(UNSAFE_CHAR, (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
  if (escaped.length <= max) return escaped;
  // cut on a code point, and never inside an escape we just made
  let cut = '';
  for (const c of escaped) {
    if (cut.length + c.length > max - 1) break;
    cut += c;
  }
  cut = cut.replace(/\\u[0-9a-f]{0,3}$/, '');
  return `${cut}…`;
}

/** The errors as they may be shown: messages and paths escaped and bounded, at most MAX_ERRORS and a count of the rest. */
export function bounded(errors: readonly ConfigError[]): ConfigError[] {
  const out = errors.slice(0, MAX_ERRORS).map((e) => ({ ...e, path: echo(e.path, 200), message: echo(e.message, MAX_MESSAGE) }));
  const rest = errors.length - out.length;
  const last = errors[MAX_ERRORS];
  if (rest > 0 && last !== undefined) {
    out.push({ file: last.file, line: last.line, col: last.col, path: '', message: `${rest} more error${rest === 1 ? '' : 's'} not shown (the first ${MAX_ERRORS} are above)`, notShown: rest });
  }
  return out;
}

/**
 * How many errors a (possibly cut) list stands for, as a count line says it: "1 error", "7 errors", or
 * "2600 errors (the first 100 shown)" — the line that counts the rest is not itself an error.
 */
export function errorCount(errors: readonly ConfigError[]): string {
  let shown = 0;
  let hidden = 0;
  for (const e of errors) {
    if (e.notShown === undefined) shown++;
    else hidden += e.notShown;
  }
  const total = shown + hidden;
  const word = `${total} error${total === 1 ? '' : 's'}`;
  return hidden === 0 ? word : `${word} (the first ${shown} shown)`;
}

export function formatError(e: ConfigError): string {
  const where = `${e.file}:${e.line}:${e.col}`;
  return e.path === '' ? `${where}: ${e.message}` : `${where}: ${e.path}: ${e.message}`;
}

/** Thrown by loadConfigFile when the file is not a valid config; carries every problem. */
export class ConfigInvalid extends Error {
  constructor(readonly errors: readonly ConfigError[]) {
    super(errors.map(formatError).join('\n'));
    this.name = 'ConfigInvalid';
  }
}
