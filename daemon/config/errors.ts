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
