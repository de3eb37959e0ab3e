// render.ts's commands → nft's own syntax, one command per line; the whole text is one transaction for
// `nft -f`. Pure. Why text and not JSON: a slot map is `typeof numgen inc mod 1 : ip daddr . tcp dport`,
// a map keyed by a plain 32-bit integer, and nft 1.0.6's JSON has no way to say typeof (it refuses
// "type": "integer" as unqualified). The commands stay JSON-shaped objects, so the tests and the parser
// of `nft -j list` speak one shape; only the wire is text.
//
// One exception, fullText: a full program runs once, at start, in code the JIT has not warmed; building its
// ~7,000 JSON commands at 1,000 × 10 and walking them here cost ~100 ms of CPU (measured), a third of the
// program. So its per-service lines are written straight from the model; a unit test holds them equal to
// nftText(fullCommands(m, true)) for every kind of service.
import { baseCommands, masqCommands, slotMapTypeof, slotRuleNeedsL4, SLOT_TOP, type NftCommand } from './render.js';
import { slotChainName, type NftService, type NftTableModel } from './model.js';

type J = Record<string, unknown>;

/** A scalar field as text; anything else is a renderer bug, said loudly rather than written as "[object Object]". */
function str(v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number') return `${v}`;
  throw new Error(`nft text: expected a name or number, got ${JSON.stringify(v)}`);
}

function isObj(v: unknown): v is J {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An object's one key and its value (every command, statement and value here has one): no entries array. */
function only(o: J): [string | undefined, unknown] {
  for (const k in o) return [k, o[k]];
  return [undefined, undefined];
}

/** Names already checked by q(): a full program names each chain and map three or four times. */
const checked = new Set<string>();

/** A name as nft reads it (its scanner takes a letter, then letters, digits and _.-/ as one identifier). */
function q(name: unknown): string {
  const s = str(name);
  if (checked.has(s)) return s;
  if (checked.size > 100_000) checked.clear();
  if (!/^[A-Za-z][A-Za-z0-9_.-]*$/.test(s)) throw new Error(`nft name ${JSON.stringify(s)}: lvsd writes only a letter, then letters, digits and _.-`);
  checked.add(s);
  return s;
}

function value(v: unknown): string {
  if (typeof v === 'number') return str(v);
  if (typeof v === 'string') return v.startsWith('@') ? `@${q(v.slice(1))}` : v;
  if (Array.isArray(v)) return `${value(v[0])} : ${value(v[1])}`;
  if (!isObj(v)) throw new Error(`nft text: cannot write ${JSON.stringify(v)}`);
  const [kind, body] = only(v);
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
  const [kind, body] = only(e);
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
    const [verb, inner] = only(cmd);
    if (verb === undefined || !isObj(inner)) throw new Error(`nft text: malformed command ${JSON.stringify(cmd)}`);
    const [kind, body] = only(inner);
    if (kind === undefined || !isObj(body)) throw new Error(`nft text: malformed command ${JSON.stringify(cmd)}`);
    lines.push(object(verb, kind, body));
  }
  return `${lines.join('\n')}\n`;
}

/** One service's slot rule (render.ts, serviceRule) as nft text. */
function slotRuleText(t: string, svc: NftService, slot: string): string {
  let rule = `add rule inet ${t} ${slot} counter`;
  if (svc.slots.length === 0) return rule;
  const ip = svc.family === 4 ? 'ip' : 'ip6';
  if (slotRuleNeedsL4(svc)) rule += svc.match.kind === 'tuple' ? ` meta l4proto ${svc.match.protocol}` : ' meta l4proto { tcp, udp, sctp }';
  let key: string;
  if (svc.dispatch.kind === 'numgen') {
    key = `numgen inc mod ${svc.mod}`;
  } else {
    const parts = svc.dispatch.fields.map((f) => (f === 'sport' ? 'th sport' : `${ip} ${f}`));
    key = `jhash ${parts.join(' . ')} mod ${svc.mod} seed 0x${svc.dispatch.seed.toString(16)}`;
  }
  return `${rule} dnat ${ip} to ${key} map @${slot}`;
}

/**
 * The full program of `m` (fullCommands(m, true)) as nft text, and how many commands it holds. Without
 * `elements`, the slot maps and the verdict maps are declared empty: their elements go by netlink
 * (fresh.ts says when and why); the masquerade sets keep theirs.
 */
export function fullText(m: NftTableModel, elements = true): { text: string; commands: number } {
  const t = q(m.table);
  const lines = [`add table inet ${t}`, `delete table inet ${t}`];
  // The fixed part and the services' chains, as baseCommands orders them (few lines: the generic path).
  const base = baseCommands(m);
  lines.push(...nftText(base).trimEnd().split('\n'));
  let commands = 2 + base.length;
  for (const svc of m.services.values()) {
    const chain = q(svc.chain);
    const slot = slotChainName(chain, 'a');
    if (svc.slots.length > 0) {
      lines.push(`add map inet ${t} ${slot} { typeof ${slotMapTypeof(svc)}; flags interval; }`);
      commands++;
    }
    if (svc.slots.length > 0 && elements) {
      let elems = '';
      for (let i = 0; i < svc.slots.length; i++) {
        const s = svc.slots[i];
        if (s === undefined) continue;
        const key = i === svc.slots.length - 1 ? `${s.from}-${SLOT_TOP}` : s.from === s.to ? `${s.from}` : `${s.from}-${s.to}`;
        elems += `${i === 0 ? '' : ', '}${key} : ${s.port === 0 ? s.address : `${s.address} . ${s.port}`}`;
      }
      lines.push(`add element inet ${t} ${slot} { ${elems} }`);
      commands++;
    }
    lines.push(slotRuleText(t, svc, slot));
    commands++;
    if (elements) {
      lines.push(svc.match.kind === 'fwmark'
        ? `add element inet ${t} fwmark${svc.family} { ${svc.match.mark} : goto ${slot} }`
        : `add element inet ${t} svc${svc.family} { ${svc.match.address} . ${svc.match.protocol} . ${svc.match.port} : goto ${slot} }`);
      commands++;
    }
  }
  const masq = masqCommands(m);
  if (masq.length > 0) lines.push(nftText(masq).trimEnd());
  return { text: `${lines.join('\n')}\n`, commands: commands + masq.length };
}
