// Schema validation with messages an operator can act on. TypeBox reports raw JSON Schema errors
// (every failed anyOf branch, "schema is false", …); this turns them into one clear Issue per
// problem: unknown keys named (with a "did you mean"), enums listed, ranges spelled out, and for a
// union (duration, VIP, status code) the errors of the branch that matches the value's JSON type.
import { Compile, type Validator } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { Settings } from 'typebox/system';
import { ConfigFile } from './schema.js';
import { FORMAT_MESSAGES, registerFormats, type FormatName } from './formats.js';
import { echo, type Issue, type PathSegment } from './errors.js';

interface RawError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

type SchemaNode = Record<string, unknown>;

const NAME_PATTERN = '^[A-Za-z0-9_.:@-]+$';

const compiled = new Map<unknown, Validator>();
function validatorFor(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (!v) {
    registerFormats();
    v = Compile(schema);
    compiled.set(schema, v);
  }
  return v;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '#') return [];
  return pointer
    .replace(/^#?\//, '')
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function instancePath(pointer: string, value: unknown): PathSegment[] {
  const out: PathSegment[] = [];
  let cur = value;
  for (const seg of pointerSegments(pointer)) {
    if (Array.isArray(cur) && /^\d+$/.test(seg)) {
      out.push(Number(seg));
      cur = cur[Number(seg)];
    } else {
      out.push(seg);
      cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[seg] : undefined;
    }
  }
  return out;
}

function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let cur = value;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

function schemaAt(root: unknown, pointer: string): SchemaNode | undefined {
  let cur = root;
  for (const seg of pointerSegments(pointer)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur !== null && typeof cur === 'object' ? (cur as SchemaNode) : undefined;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function show(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (typeof v === 'object') return Array.isArray(v) ? 'a list' : 'a map';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v); // JSON would say null for 1e999 or .inf
  return echo(JSON.stringify(v));
}

/**
 * Keys whose values are secrets (the VRRP password, keepalived's auth_pass). An error about one names
 * the place and what kind of value is there, never the value: errors reach the journal, `lvsd
 * check-config` output, and `status.config.lastReload`, which viewers can read.
 */
const SECRET_KEYS: ReadonlySet<string> = new Set(['password']);

export function isSecretPath(path: readonly PathSegment[]): boolean {
  return path.some((seg) => typeof seg === 'string' && SECRET_KEYS.has(seg));
}

/** What an error may say about the value at `path`: the value itself (escaped, cut), or for a secret only its kind. */
function shown(path: readonly PathSegment[], v: unknown): string {
  if (!isSecretPath(path)) return show(v);
  const kind = jsonType(v);
  return `${kind === 'integer' || kind === 'number' ? 'a number' : kind === 'string' ? 'a string' : show(v)} (not shown: a secret)`;
}

const TYPE_WORDS: Record<string, string> = {
  object: 'a map (key: value)',
  array: 'a list',
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
};

function branchAccepts(branch: SchemaNode, v: unknown): boolean {
  const t = jsonType(v);
  if ('const' in branch) return branch.const === v;
  if (branch.type === 'number') return t === 'number' || t === 'integer';
  return branch.type === t;
}

function describeUnion(u: SchemaNode): string {
  if (u['x-lvsd-type'] === 'duration') return `must be a duration like "250ms", "1s", "1.5s", "2m" or a number of seconds, at most ${String(u['x-lvsd-max-days'])}d`;
  const branches = (u.anyOf as SchemaNode[] | undefined) ?? [];
  if (branches.every((b) => 'const' in b)) return `must be one of: ${branches.map((b) => JSON.stringify(b.const)).join(', ')}`;
  return `must be ${branches.map((b) => TYPE_WORDS[String(b.type)] ?? String(b.type)).join(' or ')}`;
}

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const d: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0] ?? 0;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j] ?? 0;
      d[j] = Math.min((d[j] ?? 0) + 1, (d[j - 1] ?? 0) + 1, prev + (a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1));
      prev = tmp;
    }
  }
  return d[b.length] ?? 0;
}

export function suggest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = distance(word, c);
    if (dd < bestD) {
      bestD = dd;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function rangeText(s: SchemaNode | undefined): string | undefined {
  if (s && typeof s.minimum === 'number' && typeof s.maximum === 'number') return `${s.minimum}..${s.maximum}`;
  return undefined;
}

/** Translates one raw error; undefined = noise that another error already covers. */
function translate(e: RawError, root: unknown, value: unknown, prefix: readonly PathSegment[]): Issue[] {
  const path = instancePath(e.instancePath, value);
  const full = [...prefix, ...path];
  const v = valueAt(value, path);
  const schema = schemaAt(root, e.schemaPath);
  switch (e.keyword) {
    case 'boolean':
      return []; // "schema is false" for an additional property: reported by additionalProperties
    case 'additionalProperties': {
      const keys = (e.params.additionalProperties as string[] | undefined) ?? [];
      const props = schema?.properties ? Object.keys(schema.properties) : [];
      const patterns = schema?.patternProperties ? Object.keys(schema.patternProperties) : [];
      return keys.map((k) => {
        if (patterns.length > 0) {
          const what = patterns[0] === NAME_PATTERN ? 'a valid name (letters, digits and _ . : @ - only)' : 'a valid HTTP header name';
          return { path: [...path, k], at: 'key' as const, message: `"${echo(k)}" is not ${what}` };
        }
        const near = suggest(k, props);
        return {
          path: [...path, k],
          at: 'key' as const,
          message: `unknown key "${echo(k)}"${near ? ` (did you mean "${near}"?)` : ''}`,
        };
      });
    }
    case 'required': {
      const keys = (e.params.requiredProperties as string[] | undefined) ?? [];
      return keys.map((k) => ({ path, message: `missing required key "${k}"` }));
    }
    case 'type': {
      const want = String(e.params.type);
      return [{ path, message: `must be ${TYPE_WORDS[want] ?? want}, got ${shown(full, v)}` }];
    }
    case 'enum': {
      const allowed = (e.params.allowedValues as unknown[] | undefined) ?? [];
      const near = typeof v === 'string' ? suggest(v, allowed.map(String)) : undefined;
      return [{ path, message: `${shown(full, v)} is not one of: ${allowed.map(String).join(', ')}${near ? ` (did you mean "${near}"?)` : ''}` }];
    }
    case 'const':
      return [{ path, message: `must be ${JSON.stringify(e.params.allowedValue)}, got ${shown(full, v)}` }];
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const range = rangeText(schema);
      return [{ path, message: range ? `${shown(full, v)} is out of range ${range}` : `${e.message}, got ${shown(full, v)}` }];
    }
    case 'format': {
      const f = String(e.params.format) as FormatName;
      return [{ path, message: `${shown(full, v)} ${FORMAT_MESSAGES[f]}` }];
    }
    case 'pattern':
      if (schema?.pattern === NAME_PATTERN) return [{ path, message: `${shown(full, v)} is not a valid name (letters, digits and _ . : @ - only)` }];
      return [{ path, message: `${shown(full, v)} does not match ${String(schema?.pattern)}` }];
    case 'minItems':
      return [{ path, message: `must have at least ${String(e.params.limit)} item${e.params.limit === 1 ? '' : 's'}` }];
    case 'minLength':
      return [{ path, message: e.params.limit === 1 ? 'must not be empty' : `must be at least ${String(e.params.limit)} characters` }];
    case 'maxLength':
      return [{ path, message: `must be at most ${String(e.params.limit)} characters, got ${typeof v === 'string' ? v.length : '?'}` }];
    default:
      return [{ path, message: e.message }];
  }
}

function schemaIssues(schema: TSchema, value: unknown, prefix: PathSegment[]): Issue[] {
  if (validatorFor(schema).Check(value)) return []; // the compiled check is fast; errors are not
  // TypeBox buffers 8 errors by default (a process-wide setting); a config file deserves all of
  // them, so lift the cap for this call only.
  const before = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 10_000 });
  let raw: RawError[];
  try {
    raw = [...validatorFor(schema).Errors(value)] as RawError[];
  } finally {
    Settings.Set({ maxErrors: before });
  }
  // Errors inside a failed anyOf are replaced by one explanation of that anyOf.
  const unions = raw.filter((e) => e.keyword === 'anyOf');
  const insideUnion = (e: RawError) =>
    unions.some((u) => u !== e && e.schemaPath.startsWith(`${u.schemaPath}/anyOf/`) && e.instancePath.startsWith(u.instancePath));
  const out: Issue[] = [];
  for (const e of raw) {
    if (insideUnion(e)) continue;
    if (e.keyword === 'anyOf') {
      const union = schemaAt(schema, e.schemaPath);
      const path = instancePath(e.instancePath, value);
      const v = valueAt(value, path);
      const branches = (union?.anyOf as SchemaNode[] | undefined) ?? [];
      const branch = branches.find((b) => !('const' in b) && branchAccepts(b, v));
      if (union && union['x-lvsd-type'] !== 'duration' && branch) {
        out.push(...schemaIssues(branch, v, [...prefix, ...path]));
      } else {
        out.push({ path: [...prefix, ...path], message: `${union ? describeUnion(union) : 'has the wrong form'}, got ${shown([...prefix, ...path], v)}` });
      }
      continue;
    }
    for (const i of translate(e, schema, value, prefix)) out.push({ ...i, path: [...prefix, ...i.path] });
  }
  // TypeBox lists an object's extra keys one "schema is false" error each, and its additionalProperties
  // error after them: past the cap, only the former are left. A failed check is never reported clean.
  if (out.length === 0) {
    const extra = raw.filter((x) => x.keyword === 'boolean').slice(0, 1000);
    for (const e of extra) {
      const path = instancePath(e.instancePath, value);
      out.push({ path: [...prefix, ...path], at: 'key', message: `unknown key "${echo(String(path[path.length - 1] ?? ''))}"` });
    }
    if (extra.length === 0) out.push({ path: [...prefix], message: 'does not have the form the schema describes' });
  }
  return out;
}

/** Every schema problem of a parsed config document (empty = it has the right shape). */
export function validateShape(value: unknown): Issue[] {
  return schemaIssues(ConfigFile, value, []);
}
