// keepalived.conf → lvsd.yaml. `importKeepalived` is the library entry; `importKeepalivedCommand` is
// the `lvsd import-keepalived FILE` handler (YAML on stdout, `FILE:LINE: directive: why` on stderr,
// exit 0 = complete, 2 = incomplete, 1 = error).
import * as os from 'node:os';
import * as path from 'node:path';
import { toAst } from './ast.js';
import { emitYaml } from './emit.js';
import { KeepalivedSyntaxError } from './lexer.js';
import type { ConfigOut } from './lvsd-shape.js';
import { mapKeepalived } from './mapper.js';
import { parseKeepalived, type SourceLoader } from './parser.js';
import { shown, type Diagnostic } from './reader.js';
import { diskLoader } from './source.js';

export type { Diagnostic } from './reader.js';
export type { ConfigOut } from './lvsd-shape.js';

export interface ImportOptions {
  /** keepalived's config id for `@ID` lines (keepalived -i). Default: the short host name, as keepalived. */
  configId?: string;
  loader?: SourceLoader;
}

export interface ImportResult {
  yaml: string;
  config: ConfigOut;
  diagnostics: Diagnostic[];
  /** True when every directive was carried over (warnings aside). */
  complete: boolean;
  /** Every file read, the main one first. */
  files: string[];
}

/** A keepalived.conf that cannot be read or parsed; the message is `FILE:LINE:COL: what`. */
export class KeepalivedImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeepalivedImportError';
  }
}

export function defaultConfigId(): string {
  return os.hostname().split('.')[0] ?? '';
}

export function importKeepalived(file: string, opts: ImportOptions = {}): ImportResult {
  const main = path.resolve(file);
  const baseDir = path.dirname(main);
  // Files are named as the operator finds them from where the command ran: the main file as given, a file
  // beside or below it by the same way in (`conf.d/web.conf` for `keepalived.conf`, `/etc/keepalived/conf.d/
  // web.conf` for `/etc/keepalived/keepalived.conf`), any other by its absolute path. Names relative to the
  // main file's folder read as relative to the working directory, which they were not.
  const display = (f: string): string => {
    if (f === main) return file;
    const rel = path.relative(baseDir, f);
    return rel.startsWith('..') || path.isAbsolute(rel) ? f : path.join(path.dirname(file), rel);
  };
  const configId = opts.configId ?? defaultConfigId();
  let parsed;
  try {
    parsed = parseKeepalived(main, opts.loader ?? diskLoader, { configId, display });
  } catch (e) {
    if (e instanceof KeepalivedSyntaxError) {
      const where = e.pos.line > 0 ? `${display(e.pos.file)}:${e.pos.line}:${e.pos.col}` : display(e.pos.file);
      throw new KeepalivedImportError(shown(`${where}: ${e.detail}`));
    }
    throw e;
  }
  const { config, ctx } = mapKeepalived(toAst(parsed.directives), display);
  const lexDiagnostics: Diagnostic[] = parsed.diagnostics.map((d) => ({
    file: shown(display(d.pos.file)), line: d.pos.line, directive: shown(d.directive), why: shown(d.why), ...(d.warning === true ? { warning: true as const } : {}),
  }));
  const order = new Map(parsed.files.map((f, i) => [shown(display(f)), i]));
  const diagnostics = [...lexDiagnostics, ...ctx.diagnostics].sort((a, b) => (a.file === b.file ? a.line - b.line : (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0)));
  const header = [
    `lvsd configuration imported from ${parsed.files.map((f) => shown(display(f))).join(', ')} by \`lvsd import-keepalived\`.`,
    'Comments "from FILE:LINE" point at the keepalived directive each value came from.',
  ];
  if (parsed.conditionalIds.size > 0) {
    header.push(shown(`Conditional lines kept for config id "${configId}" (ids in the file: ${[...parsed.conditionalIds].sort().join(', ')}); use --config-id for another director.`));
  }
  const yaml = emitYaml(config, ctx, header, diagnostics);
  return { yaml, config, diagnostics, complete: diagnostics.every((d) => d.warning === true), files: parsed.files };
}

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const processIo: CommandIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
};

const USAGE = `usage: lvsd import-keepalived [--config-id ID] FILE

Prints an lvsd configuration equivalent to the keepalived.conf FILE on stdout. Every directive that
cannot be carried over is reported on stderr as FILE:LINE: directive: why.
  --config-id ID   keep the '@ID' conditional lines of this director (keepalived -i); default: hostname
Exit status: 0 complete, 2 incomplete (see stderr), 1 error.
`;

export function importKeepalivedCommand(argv: string[], io: CommandIo = processIo): Promise<number> {
  let file: string | undefined;
  let configId: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '-h' || a === '--help') {
      io.stdout(USAGE);
      return Promise.resolve(0);
    }
    if (a === '--config-id' || a === '-i') {
      configId = argv[++i];
      if (configId === undefined) {
        io.stderr(`lvsd import-keepalived: ${a} needs a value\n${USAGE}`);
        return Promise.resolve(1);
      }
    } else if (a.startsWith('--config-id=')) configId = a.slice('--config-id='.length);
    else if (a.startsWith('-') && a !== '-') {
      io.stderr(`lvsd import-keepalived: unknown option ${a}\n${USAGE}`);
      return Promise.resolve(1);
    } else if (file === undefined) file = a;
    else {
      io.stderr(`lvsd import-keepalived: one FILE only\n${USAGE}`);
      return Promise.resolve(1);
    }
  }
  if (file === undefined) {
    io.stderr(USAGE);
    return Promise.resolve(1);
  }
  let result: ImportResult;
  try {
    result = importKeepalived(file, configId === undefined ? {} : { configId });
  } catch (e) {
    io.stderr(`lvsd import-keepalived: ${e instanceof Error ? e.message : String(e)}\n`);
    return Promise.resolve(1);
  }
  io.stdout(result.yaml);
  for (const d of result.diagnostics) io.stderr(`${d.file}:${d.line}: ${d.directive}: ${d.why}\n`);
  if (!result.complete) {
    io.stderr(`lvsd import-keepalived: incomplete: ${result.diagnostics.filter((d) => d.warning !== true).length} directive(s) not carried over\n`);
    return Promise.resolve(2);
  }
  return Promise.resolve(0);
}
