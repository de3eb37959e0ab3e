// `nft -j list table inet NAME` → the model, plus what is wrong with the table's fixed part. Pure.
// Lenient about the forms nft prints (it folds dependency matches away, prints single slots as numbers
// and ranges as {"range": [a, b]}); strict about what reaches the data path.
import type { Family } from '../types.js';
import { chainName, serviceIdOf, slotChainName, type HashField, type NftDispatch, type NftMatch, type NftService, type NftSlot, type SlotSide } from './model.js';

type J = Record<string, unknown>;

export interface ParsedTable {
  /** The services the vmaps reach, keyed by their chain name (chainName; their slot chains are named after it). */
  services: Map<string, NftService>;
  /** New connections counted per service chain (nat chains see each connection's first packet only). */
  counters: Map<string, { packets: number; bytes: number }>;
  /** The slot chain each service's vmap element reaches (absent: the one-chain layout, or unreadable). */
  live: Map<string, SlotSide>;
  /** Services whose element goes to a chain named chainName, an older lvsd's layout (model.ts, NftTableModel.oldLayout). */
  oldLayout: Set<string>;
  /**
   * Chains of a service that its vmap element does not reach (an update stopped between transactions): a
   * slot chain, or a service chain of the older layout that the element no longer goes to.
   */
  leftovers: string[];
  /** What is wrong with the fixed part (missing maps, chains, rules; orphan chains). Empty = fine. */
  problems: string[];
  /** The names of the table's maps (slot maps among them: render.ts's planUpdate removes those it retires). */
  maps?: Set<string>;
}

function isObj(v: unknown): v is J {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function get(v: unknown, ...path: string[]): unknown {
  let cur = v;
  for (const p of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[p];
  }
  return cur;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

interface Items {
  tables: J[];
  chains: J[];
  rules: J[];
  maps: J[];
  sets: J[];
}

function collect(doc: unknown): Items {
  const items: Items = { tables: [], chains: [], rules: [], maps: [], sets: [] };
  const list = get(doc, 'nftables');
  if (!Array.isArray(list)) throw new Error('nft output: no "nftables" array');
  for (const item of list) {
    if (!isObj(item)) continue;
    const [kind] = Object.keys(item);
    const body = kind === undefined ? undefined : item[kind];
    if (!isObj(body)) continue;
    if (kind === 'table') items.tables.push(body);
    else if (kind === 'chain') items.chains.push(body);
    else if (kind === 'rule') items.rules.push(body);
    else if (kind === 'map') items.maps.push(body);
    else if (kind === 'set') items.sets.push(body);
  }
  return items;
}

function slotRange(key: unknown): [number, number] | undefined {
  const n = num(key);
  if (n !== undefined) return [n, n];
  const r = get(key, 'range');
  if (Array.isArray(r) && typeof r[0] === 'number' && typeof r[1] === 'number') return [r[0], r[1]];
  return undefined;
}

function slotTarget(data: unknown): { address: string; port: number } | undefined {
  if (typeof data === 'string') return { address: data, port: 0 };
  const c = get(data, 'concat');
  if (Array.isArray(c) && typeof c[0] === 'string' && typeof c[1] === 'number') return { address: c[0], port: c[1] };
  return undefined;
}

function hashFields(expr: unknown): HashField[] | undefined {
  const parts = get(expr, 'concat');
  const list = Array.isArray(parts) ? parts : [expr];
  const fields: HashField[] = [];
  for (const p of list) {
    const field = get(p, 'payload', 'field');
    if (field !== 'saddr' && field !== 'sport' && field !== 'daddr') return undefined;
    fields.push(field);
  }
  return fields;
}

/** The DNAT part of a service chain's rules. */
function parseChainRules(rules: J[], maps: ReadonlyMap<string, J>): { dispatch: NftDispatch; mod: number; slots: NftSlot[]; counter?: { packets: number; bytes: number } } | string {
  let counter: { packets: number; bytes: number } | undefined;
  let result: { dispatch: NftDispatch; mod: number; slots: NftSlot[] } | undefined;
  if (rules.length > 1) return `${rules.length} rules where lvsd keeps one`;
  for (const rule of rules) {
    const expr = rule.expr;
    if (!Array.isArray(expr)) continue;
    for (const e of expr) {
      const c = get(e, 'counter');
      if (isObj(c)) counter = { packets: num(c.packets) ?? 0, bytes: num(c.bytes) ?? 0 };
      const map = get(e, 'dnat', 'addr', 'map');
      if (!isObj(map)) continue;
      const numgen = get(map, 'key', 'numgen');
      const jhash = get(map, 'key', 'jhash');
      let dispatch: NftDispatch;
      let mod: number | undefined;
      if (isObj(numgen) && numgen.mode === 'inc') {
        dispatch = { kind: 'numgen' };
        mod = num(numgen.mod);
      } else if (isObj(jhash)) {
        const fields = hashFields(jhash.expr);
        if (fields === undefined) return 'a hash over fields lvsd does not use';
        dispatch = { kind: 'jhash', fields, seed: num(jhash.seed) ?? 0 };
        mod = num(jhash.mod);
      } else {
        return 'a DNAT map keyed by something other than numgen inc or jhash';
      }
      // A named slot map (`@svc-…-a`, what lvsd writes now) or an anonymous one in the rule (older tables).
      const data = get(map, 'data');
      const named = typeof data === 'string' && data.startsWith('@') ? maps.get(data.slice(1)) : undefined;
      if (typeof data === 'string' && named === undefined) return `a DNAT map ${data} that the table does not hold`;
      const elems = named !== undefined ? (named.elem ?? []) : get(map, 'data', 'set');
      if (mod === undefined || !Array.isArray(elems)) return 'a DNAT map without a modulus or elements';
      const slots: NftSlot[] = [];
      for (const el of elems) {
        if (!Array.isArray(el)) return 'a malformed DNAT map element';
        const range = slotRange(el[0]);
        const target = slotTarget(el[1]);
        if (range === undefined || target === undefined) return 'a malformed DNAT map element';
        slots.push({ from: range[0], to: range[1], ...target });
      }
      slots.sort((a, b) => a.from - b.from);
      // The last interval of a slot map runs to the top of the slot space (render.ts, slotElements): the
      // model's last slot ends at mod - 1.
      const last = slots[slots.length - 1];
      if (last !== undefined && last.to >= mod) last.to = mod - 1;
      result = { dispatch, mod, slots };
    }
  }
  const base = result ?? { dispatch: { kind: 'numgen' } as NftDispatch, mod: 0, slots: [] };
  return counter === undefined ? base : { ...base, counter };
}

/** The slot side an older layout's dispatch chain's one rule goes to; undefined for anything else (e.g. the one-chain layout, DNAT in the chain itself). */
function dispatchSide(chain: string, rules: J[], chains: Map<string, J>): SlotSide | undefined {
  const expr = rules.length === 1 ? rules[0]?.expr : undefined;
  if (!Array.isArray(expr) || expr.length !== 1) return undefined;
  const target = get(expr[0], 'goto', 'target');
  for (const side of ['a', 'b'] as const) {
    if (target === slotChainName(chain, side) && chains.has(target)) return side;
  }
  return undefined;
}

function matchOf(mapName: string, key: unknown): { match: NftMatch; family: Family } | undefined {
  const m = /^(svc|fwmark)([46])$/.exec(mapName);
  if (m === null) return undefined;
  const family: Family = m[2] === '4' ? 4 : 6;
  if (m[1] === 'fwmark') {
    const mark = num(key);
    return mark === undefined ? undefined : { match: { kind: 'fwmark', mark }, family };
  }
  const c = get(key, 'concat');
  if (!Array.isArray(c)) return undefined;
  const [address, protocol, port] = c as unknown[];
  if (typeof address !== 'string' || typeof port !== 'number') return undefined;
  if (protocol !== 'tcp' && protocol !== 'udp' && protocol !== 'sctp') return undefined;
  return { match: { kind: 'tuple', address, protocol, port }, family };
}

function ruleMentions(rule: J, needle: string): boolean {
  return JSON.stringify(rule.expr).includes(needle);
}

/** Parses the listing of lvsd's table. `masquerade` says whether the fixed part should carry SNAT. */
export function parseTable(doc: unknown, table: string, masquerade: boolean): ParsedTable {
  const items = collect(doc);
  const problems: string[] = [];
  const services = new Map<string, NftService>();
  const counters = new Map<string, { packets: number; bytes: number }>();
  const live = new Map<string, SlotSide>();
  const oldLayout = new Set<string>();
  const leftovers: string[] = [];
  if (!items.tables.some((t) => t.name === table)) {
    return { services, counters, live, oldLayout, leftovers, problems: [`table inet ${table} missing`] };
  }
  const rulesOf = new Map<string, J[]>();
  for (const r of items.rules) {
    const chain = String(r.chain);
    const list = rulesOf.get(chain) ?? [];
    list.push(r);
    rulesOf.set(chain, list);
  }
  const chains = new Map(items.chains.map((c) => [String(c.name), c]));
  const hooks: [string, string, number][] = [['prerouting', 'prerouting', -100], ['output', 'output', -100]];
  if (masquerade) hooks.push(['postrouting', 'postrouting', 100]);
  for (const [name, hook, prio] of hooks) {
    const c = chains.get(name);
    if (c?.hook !== hook || c.type !== 'nat' || c.prio !== prio) problems.push(`chain ${name} missing or not hooked at nat ${hook} ${prio}`);
  }
  if (!masquerade && chains.has('postrouting')) problems.push('chain postrouting present while masquerade is off');
  for (const name of ['prerouting', 'output']) {
    const rules = rulesOf.get(name) ?? [];
    if (rules.length !== 1 || !ruleMentions(rules[0] ?? {}, '"services"')) problems.push(`chain ${name} does not jump to services`);
  }
  const svcRules = rulesOf.get('services') ?? [];
  const wanted = ['@fwmark4', '@fwmark6', '@svc4', '@svc6'];
  if (svcRules.length !== wanted.length || !wanted.every((w, i) => ruleMentions(svcRules[i] ?? {}, `"${w}"`))) {
    problems.push('chain services does not hold the four map lookups');
  }
  if (masquerade) {
    const post = rulesOf.get('postrouting') ?? [];
    const sets = ['@vips4', '@marks4', '@vips6', '@marks6'];
    if (post.length !== sets.length || !sets.every((s, i) => ruleMentions(post[i] ?? {}, `"${s}"`) && ruleMentions(post[i] ?? {}, 'masquerade'))) {
      problems.push('chain postrouting does not hold the four masquerade rules');
    }
  }
  const maps = new Map(items.maps.map((m) => [String(m.name), m]));
  const referenced = new Set<string>();
  for (const name of ['svc4', 'svc6', 'fwmark4', 'fwmark6']) {
    const map = maps.get(name);
    if (map === undefined) {
      problems.push(`map ${name} missing`);
      continue;
    }
    const elems = Array.isArray(map.elem) ? (map.elem as unknown[]) : [];
    for (const el of elems) {
      if (!Array.isArray(el)) continue;
      const m = matchOf(name, el[0]);
      const target = get(el[1], 'goto', 'target');
      if (m === undefined || typeof target !== 'string') {
        problems.push(`map ${name} holds an element lvsd did not write`);
        continue;
      }
      // The element goes to a slot chain (this layout) or to the service's own chain (an older one).
      const chain = chainName(m.match, m.family);
      const direct = (['a', 'b'] as const).find((s) => target === slotChainName(chain, s));
      if ((direct === undefined && target !== chain) || !chains.has(target)) {
        problems.push(`map ${name} sends ${serviceIdOf(m.match, m.family)} to chain ${target}`);
        continue;
      }
      referenced.add(target);
      const side = direct ?? dispatchSide(chain, rulesOf.get(chain) ?? [], chains);
      if (direct === undefined) oldLayout.add(chain);
      else if (chains.has(chain)) {
        // The older layout's dispatch chain, left by an upgrade stopped after its switch: first among the
        // leftovers, since its goto may hold the other slot chain.
        referenced.add(chain);
        leftovers.push(chain);
      }
      for (const other of ['a', 'b'] as const) {
        const name = slotChainName(chain, other);
        if (other === side) referenced.add(name);
        else if (chains.has(name)) {
          referenced.add(name);
          leftovers.push(name);
        }
      }
      if (side !== undefined) live.set(chain, side);
      const parsed = parseChainRules(rulesOf.get(side === undefined ? chain : slotChainName(chain, side)) ?? [], maps);
      if (typeof parsed === 'string') {
        // A service chain lvsd cannot read is rewritten as a changed service: model it as empty + unknown seed.
        services.set(chain, { id: serviceIdOf(m.match, m.family), chain, family: m.family, match: m.match, dispatch: { kind: 'jhash', fields: [], seed: -1 }, mod: -1, slots: [] });
        continue;
      }
      if (parsed.counter !== undefined) counters.set(chain, parsed.counter);
      services.set(chain, { id: serviceIdOf(m.match, m.family), chain, family: m.family, match: m.match, dispatch: parsed.dispatch, mod: parsed.mod, slots: parsed.slots });
    }
  }
  for (const name of chains.keys()) {
    if (name.startsWith('svc-') && !referenced.has(name)) problems.push(`chain ${name} is not reached from any map`);
  }
  if (masquerade) {
    const expected = new Map<string, Set<string>>([['vips4', new Set()], ['vips6', new Set()], ['marks4', new Set()], ['marks6', new Set()]]);
    for (const svc of services.values()) {
      const key = svc.match.kind === 'tuple' ? `vips${svc.family}` : `marks${svc.family}`;
      expected.get(key)?.add(String(svc.match.kind === 'tuple' ? svc.match.address : svc.match.mark));
    }
    const setsByName = new Map(items.sets.map((s) => [String(s.name), s]));
    for (const [name, want] of expected) {
      const s = setsByName.get(name);
      if (s === undefined) {
        problems.push(`set ${name} missing`);
        continue;
      }
      const have = new Set((Array.isArray(s.elem) ? (s.elem as unknown[]) : []).map(String));
      if (have.size !== want.size || [...want].some((w) => !have.has(w))) problems.push(`set ${name} does not match the services`);
    }
  }
  return { services, counters, live, oldLayout, leftovers, problems, maps: new Set(maps.keys()) };
}
