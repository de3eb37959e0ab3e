// render.ts's commands → nft's own syntax, one command per line; the whole text is one transaction for
// `nft -f`. Pure. Why text and not JSON: a slot map is `typeof numgen inc mod 1 : ip daddr . tcp dport`,
// a map keyed by a plain 32-bit integer, and nft 1.0.6's JSON has no way to say typeof (it refuses
// "type": "integer" as unqualified). The commands stay JSON-shaped objects, so the tests and the parser
// of `nft -j list` speak one shape; only the wire is text.
import type { NftCommand } from './render.js';

type J = Record<string, unknown>;

/** A scalar field as text; anything else is a renderer bug, said loudly rather than written as "[object Object]". */
function str(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number') return `${v}`;
  throw new Error(`nft text: expected a name or number, got ${JSON.stringify(v)}`);
}

function isObj(v: unknown): v is J {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A name as nft reads it (its scanner takes a letter, then letters, digits and _.-/ as one identifier). */
function q(name: unknown): string {
  const s = str(name);
  if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(s)) throw new Error(`nft name ${JSON.stringify(s)}: lvsd writes only a letter, then letters, digits and _.-`);
  return s;
}

function value(v: unknown): string {
  if (typeof v === 'number') return str(v);
  if (typeof v === 'string') return v.startsWith('@') ? `@${q(v.slice(1))}` : v;
  if (Array.isArray(v)) return `${value(v[0])} : ${value(v[1])}`;
  if (!isObj(v)) throw new Error(`nft text: cannot write ${JSON.stringify(v)}`);
  const [kind, body] = Object.entries(v)[0] ?? [];
  switch (kind) {
    case 'range': {
      const [a, b] = body as [unknown, unknown];
      return `${value(a)}-${value(b)}`;
    }
    case 'concat':
      return (body as unknown[]).map(value).join(' . ');
    case 'set':
      return `{ ${(body as unknown[]).map(value).join(', ')} }`;
    case 'goto':
    case 'jump':
      return `${kind} ${q((body as J).target)}`;
    case 'meta':
      return `meta ${str((body as J).key)}`;
    case 'payload':
      return `${str((body as J).protocol)} ${str((body as J).field)}`;
    case 'ct': {
      const b = body as J;
      return b.dir === undefined ? `ct ${str(b.key)}` : `ct ${str(b.dir)} ${str(b.key)}`;
    }
    case 'numgen': {
      const b = body as J;
      return `numgen ${str(b.mode)} mod ${str(b.mod)}`;
    }
    case 'jhash': {
      const b = body as J;
      return `jhash ${value(b.expr)} mod ${str(b.mod)} seed 0x${Number(b.seed).toString(16)}`;
    }
    default:
      throw new Error(`nft text: no writer for ${kind ?? '(nothing)'}`);
  }
}

function statement(e: unknown): string {
  if (!isObj(e)) throw new Error(`nft text: cannot write statement ${JSON.stringify(e)}`);
  const [kind, body] = Object.entries(e)[0] ?? [];
  const b = (body ?? {}) as J;
  switch (kind) {
    case 'counter':
      return 'counter';
    case 'masquerade':
      return 'masquerade';
    case 'match':
      // `==` and `in` (a flag test such as `ct status dnat`) are both written as a bare pair.
      return `${value(b.left)} ${value(b.right)}`;
    case 'vmap':
      return `${value(b.key)} vmap ${value(b.data)}`;
    case 'dnat': {
      const map = (b.addr as J).map as J;
      return `dnat ${str(b.family)} to ${value(map.key)} map ${value(map.data)}`;
    }
    case 'goto':
    case 'jump':
      return value(e);
    default:
      throw new Error(`nft text: no writer for statement ${kind ?? '(nothing)'}`);
  }
}

function object(verb: string, kind: string, b: J): string {
  const where = kind === 'table' ? `inet ${q(b.name)}` : `inet ${q(b.table)}`;
  switch (kind) {
    case 'table':
      return `${verb} table ${where}`;
    case 'chain': {
      const head = `${verb} chain ${where} ${q(b.name)}`;
      if (verb !== 'add' || b.hook === undefined) return head;
      return `${head} { type ${str(b.type)} hook ${str(b.hook)} priority ${str(b.prio)}; policy ${str(b.policy)}; }`;
    }
    case 'map':
    case 'set': {
      const head = `${verb} ${kind} ${where} ${q(b.name)}`;
      if (verb !== 'add') return head;
      const type = (t: unknown): string => (Array.isArray(t) ? t.map(String).join(' . ') : str(t));
      const decl = b.typeof !== undefined ? `typeof ${str(b.typeof)}` : `type ${type(b.type)}${b.map === undefined ? '' : ` : ${type(b.map)}`}`;
      const flags = Array.isArray(b.flags) && b.flags.length > 0 ? ` flags ${b.flags.map(String).join(', ')};` : '';
      return `${head} { ${decl};${flags} }`;
    }
    case 'element':
      return `${verb} element ${where} ${q(b.name)} { ${(b.elem as unknown[]).map(value).join(', ')} }`;
    case 'rule':
      return `${verb} rule ${where} ${q(b.chain)} ${(b.expr as unknown[]).map(statement).join(' ')}`;
    default:
      throw new Error(`nft text: no writer for ${kind}`);
  }
}

/** The commands as nft text, one per line (for `nft -f`: one transaction). */
export function nftText(cmds: readonly NftCommand[]): string {
  const lines: string[] = [];
  for (const cmd of cmds) {
    const [verb, inner] = Object.entries(cmd)[0] ?? [];
    if (verb === undefined || !isObj(inner)) throw new Error(`nft text: malformed command ${JSON.stringify(cmd)}`);
    const [kind, body] = Object.entries(inner)[0] ?? [];
    if (kind === undefined || !isObj(body)) throw new Error(`nft text: malformed command ${JSON.stringify(cmd)}`);
    lines.push(object(verb, kind, body));
  }
  return `${lines.join('\n')}\n`;
}
