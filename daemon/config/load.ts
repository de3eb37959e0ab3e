// lvsd.yaml → normalised Config, or EVERY problem at once as `FILE:LINE:COL: path: message`:
// YAML syntax errors, then schema errors, then semantic errors (each stage needs the previous one
// to be clean to say anything meaningful, so a stage with errors stops the pipeline there).
import { isScalar, LineCounter, visit, type Document } from 'yaml';
import { readCapped } from '../read-capped.js';
import { parseBounded, tooDeepMessage, tooDeepPath } from './depth.js';
import { duplicateKeys } from './duplicate-keys.js';
import { validateShape } from './validate.js';
import { checkSemantics } from './semantic.js';
import { normalise } from './normalise.js';
import { locate } from './positions.js';
import { bounded, ConfigInvalid, MAX_CONFIG_BYTES, renderPath, tooBig, type ConfigError, type Issue, type PathSegment } from './errors.js';
import type { ConfigFile } from './schema.js';
import type { Config } from './types.js';

export type LoadResult =
  | { ok: true; config: Config; warnings: ConfigError[]; /** The text it was parsed from. */ text: string }
  | { ok: false; errors: ConfigError[]; warnings: ConfigError[] };

function placed(doc: Document, lc: LineCounter, file: string, issues: Issue[]): ConfigError[] {
  return issues
    .map((i) => {
      const { line, col } = locate(doc, lc, i.path, i.at);
      return { file, line, col, path: i.path.length ? renderPath(i.path) : '(top level)', message: i.message };
    })
    .sort((a, b) => a.line - b.line || a.col - b.col);
}

function isPrefix(a: readonly PathSegment[], b: readonly PathSegment[]): boolean {
  return a.length <= b.length && a.every((s, i) => s === b[i]);
}

/** Deletes the object key at `path` (not array items: that would shift the indices). */
function dropKey(root: unknown, path: readonly PathSegment[]): boolean {
  const last = path[path.length - 1];
  if (typeof last !== 'string') return false;
  let cur = root;
  for (const seg of path.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return false;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return false;
  const parent = cur as Record<string, unknown>;
  if (!(last in parent)) return false;
  Reflect.deleteProperty(parent, last);
  return true;
}

/**
 * Parses and checks config text; `file` is only used in the messages. What the errors quote from the
 * text is escaped and cut, and at most MAX_ERRORS are reported (errors.ts: `bounded`).
 */
export function loadConfigText(text: string, file = '<inline>'): LoadResult {
  // Checked before anything is parsed: the size is what the parse costs in time and memory. A string of
  // n UTF-16 units is at most 3n bytes, so short strings skip the count.
  if (text.length * 3 > MAX_CONFIG_BYTES) {
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_CONFIG_BYTES) return { ok: false, errors: [tooBig(file, bytes)], warnings: [] };
  }
  const r = checkText(text, file);
  return r.ok ? { ...r, warnings: bounded(r.warnings) } : { ok: false, errors: bounded(r.errors), warnings: bounded(r.warnings) };
}

function checkText(text: string, file: string): LoadResult {
  // YAML has no NUL (YAML 1.2 §5.1): a file with one is not a config, and parsing a binary blob only
  // yields thousands of errors about its "lines".
  const nul = text.indexOf('\0');
  if (nul >= 0) {
    const before = text.slice(0, nul);
    const line = before.split('\n').length;
    const col = nul - before.lastIndexOf('\n');
    return { ok: false, errors: [{ file, line, col, path: '', message: 'not a text file (a NUL byte here); a config is YAML text' }], warnings: [] };
  }
  const lc = new LineCounter();
  // Duplicate keys are found in one pass of our own (duplicate-keys.ts): the yaml package's check compares
  // each key with every earlier one of its map, which took 31 s for a 256 KiB map of keys.
  // Bounded in depth while it is parsed (depth.ts): the parse and every check after it recurse.
  const parsed = parseBounded(text, lc, { prettyErrors: false, uniqueKeys: false, merge: true, strict: true });
  if (!parsed.ok) return { ok: false, errors: [{ file, ...lc.linePos(parsed.offset), path: '', message: tooDeepMessage() }], warnings: [] };
  const doc = parsed.doc;
  const syntax: ConfigError[] = [
    ...doc.errors.map((e) => ({ offset: e.pos[0], message: `YAML: ${e.message.split('\n')[0] ?? e.message}` })),
    ...duplicateKeys(doc).map((offset) => ({ offset, message: 'YAML: Map keys must be unique' })),
  ]
    .sort((a, b) => a.offset - b.offset)
    .map(({ offset, message }) => ({ file, ...lc.linePos(offset), path: '', message }));
  if (syntax.length) return { ok: false, errors: syntax, warnings: [] };

  // Nothing but whitespace and comments: a truncated or wrongly copied file, not a wish for a director
  // with no VRRP instance and no virtual server — that is written `{}`.
  const top = doc.contents;
  if (top === null || (isScalar(top) && top.value === null && top.range[0] === top.range[1])) {
    return { ok: false, errors: [{ file, line: 1, col: 1, path: '', message: 'the file is empty (no settings at all); write {} for a config with every default' }], warnings: [] };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 1000 }) ?? {};
  } catch (e) {
    // Unresolvable aliases and alias bombs surface only here; point at the first bad alias.
    let offset = 0;
    visit(doc, {
      Alias(_key, node) {
        if (node.resolve(doc) === undefined) {
          offset = node.range?.[0] ?? 0;
          return visit.BREAK;
        }
        return undefined;
      },
    });
    const { line, col } = lc.linePos(offset);
    return { ok: false, errors: [{ file, line, col, path: '', message: `YAML: ${(e as Error).message}` }], warnings: [] };
  }
  // aliases can nest anchored structures deeper than the text does
  const deep = tooDeepPath(value);
  if (deep !== undefined) return { ok: false, errors: placed(doc, lc, file, [{ path: deep, message: tooDeepMessage() }]), warnings: [] };
  const shape = validateShape(value);
  if (shape.length === 0) {
    const cfgFile = value as ConfigFile;
    const sem = checkSemantics(cfgFile);
    const warnings = placed(doc, lc, file, sem.warnings);
    if (sem.errors.length) return { ok: false, errors: placed(doc, lc, file, sem.errors), warnings };
    return { ok: true, config: normalise(cfgFile, file), warnings, text };
  }
  // Shape errors: still report the semantic errors of the rest of the file, so the operator sees
  // every problem in one run. Drop the offending optional keys; if what is left has the right
  // shape, check it, ignoring findings about the dropped places (they would be artefacts).
  const pruned = structuredClone(value);
  const dropped: PathSegment[][] = [];
  let remaining = shape;
  for (let round = 0; round < 5 && remaining.length > 0; round++) {
    for (const issue of remaining) {
      // The key itself, else the nearest enclosing key (a bad item of a list drops the list).
      for (let n = issue.path.length; n > 0; n--) {
        const p = issue.path.slice(0, n);
        if (dropKey(pruned, p)) {
          dropped.push(p);
          break;
        }
      }
    }
    remaining = validateShape(pruned);
  }
  let semantic: Issue[] = [];
  if (remaining.length === 0) {
    const related = (p: readonly PathSegment[]) => dropped.some((d) => isPrefix(d, p) || isPrefix(p, d));
    semantic = checkSemantics(pruned as ConfigFile).errors.filter((i) => !related(i.path));
  }
  return { ok: false, errors: placed(doc, lc, file, [...shape, ...semantic]), warnings: [] };
}

/** Reads and checks a config file; I/O errors become one error line naming the file. */
/** The text of a config file, read within MAX_CONFIG_BYTES, or the one error saying why not (FILE:1:1). */
export async function readConfigText(path: string): Promise<{ ok: true; text: string } | { ok: false; error: ConfigError }> {
  try {
    const r = await readCapped(path, { max: MAX_CONFIG_BYTES });
    return r.ok ? r : { ok: false, error: tooBig(path, r.bytes, r.endless) };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // node's message starts with the code already ("ENOENT: no such file…"): say it once
    const why = err.code === undefined || err.message.startsWith(`${err.code}:`) ? err.message : `${err.code} ${err.message}`;
    return { ok: false, error: { file: path, line: 1, col: 1, path: '', message: `cannot read: ${why}` } };
  }
}

export async function loadConfig(path: string): Promise<LoadResult> {
  const r = await readConfigText(path);
  return r.ok ? loadConfigText(r.text, path) : { ok: false, errors: [r.error], warnings: [] };
}

/** loadConfig that throws ConfigInvalid (message = all the error lines) instead of returning them. */
export async function loadConfigOrThrow(path: string): Promise<Config> {
  const r = await loadConfig(path);
  if (!r.ok) throw new ConfigInvalid(r.errors);
  return r.config;
}
