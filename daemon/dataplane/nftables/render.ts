// Model → nft JSON commands. Pure.
//
// The table (family inet, so one table serves IPv4 and IPv6):
//   map svc4/svc6      VIP . l4proto . port → goto the service's live slot chain svc-…-a or svc-…-b
//   map fwmark4/6      packet mark → goto svc-fwmark…-a/-b (looked up first, as IPVS does)
//   chain services     the four vmap lookups
//   chain prerouting   nat hook prerouting (dstnat): jump services
//   chain output       nat hook output (dstnat): jump services (clients on the director itself)
//   chain postrouting  only with masquerade: SNAT what we DNATed (ct original daddr in @vips4/6, mark in @marks4/6)
//   chain svc-…-a/-b   the slot chain: counter; DNAT to numgen/jhash map of slot ranges → real server
//   map svc-…-a/-b     its slot map (named like the chain): slot range → real server
// One chain per service (until stop 29's second session a dispatch chain svc-… sat between the vmap and the slot chain): the
// kernel's commit visits every chain of every table in the namespace to swap its rule generation, ~20–40 ns
// a chain (bench/nft-chain-walk.ts), so a change costs less the fewer chains there are.
//
// Why a change takes three transactions (planUpdate), each of them atomic:
// A rule's DNAT map is an anonymous set that lives and dies with its rule, and the kernel does not keep a
// set lookup in step with the rule generation a packet is walking. Replacing the rule in one transaction
// (flush chain + add rule) left a window at commit where a new connection's map lookup found nothing — in
// the old rule, whose map the transaction had already deactivated, or in the new one, just created — and
// the SYN went on un-NATed to the director itself, which refused it (measured: every stray refusal was a
// SYN that fell through the service chain during a commit; ~1 in 20,000 requests at 50 updates/s).
// So a changed service is written where no packet looks (stage), then reached by replacing its vmap element
// (switch: the same key deleted and added with the new slot chain as its goto, in one transaction; no rule
// and no set created or removed), and only then is the old slot chain with its map, which no packet can
// reach any more, removed (retire). An element of a named set is replaced by generation: a packet looks it
// up in the generation it walks, and exactly one of the two is active in each. Splitting a change any other
// way loses connections by the thousand: new SYNs between two transactions must always find a complete map.
import { slotChainName, type NftService, type NftTableModel, type SlotSide } from './model.js';
import { addsOrRemoves, tableDelta, type SameService, type TableDelta } from './delta.js';

export type NftCommand = Record<string, unknown>;
type Json = Record<string, unknown>;

const FAMILY = 'inet';

export const BASE_CHAINS = ['services', 'prerouting', 'output', 'postrouting'] as const;

function obj(table: string, extra: Json): Json {
  return { family: FAMILY, table, ...extra };
}

function payload(protocol: string, field: string): Json {
  return { payload: { protocol, field } };
}

function meta(key: string): Json {
  return { meta: { key } };
}

function eq(left: Json, right: unknown): Json {
  return { match: { op: '==', left, right } };
}

export function vmapName(svc: NftService): string {
  return svc.match.kind === 'fwmark' ? `fwmark${svc.family}` : `svc${svc.family}`;
}

export function vmapKey(svc: NftService): unknown {
  if (svc.match.kind === 'fwmark') return svc.match.mark;
  return { concat: [svc.match.address, svc.match.protocol, svc.match.port] };
}

/** The top of the slot space: the last range of a slot map runs to it (slotElements says why). */
export const SLOT_TOP = 0xffffffff;

/** The key and data of a slot map as nft's typeof (JSON cannot say it: the key is a plain 32-bit integer). */
export function slotMapTypeof(svc: NftService): string {
  const ip = svc.family === 4 ? 'ip daddr' : 'ip6 daddr';
  // `th dport`, not `tcp dport`: nft checks a typeof against the protocol of the rule before it in the same file.
  return `numgen inc mod 1 : ${svc.slots.some((s) => s.port !== 0) ? `${ip} . th dport` : ip}`;
}

/**
 * The elements of a slot map: one interval per real server, the last one open to SLOT_TOP. A change that
 * shrinks the slot space replaces the rule (its `mod`) and the elements in one transaction; a packet that
 * began walking the old rule just before the commit may compute a slot under the old, larger `mod` and
 * look it up among the new elements. The open end gives it a real server instead of a miss (a miss sends
 * the SYN on un-NATed to the director, which refuses it).
 */
export function slotElements(svc: NftService): unknown[] {
  return svc.slots.map((s, i) => {
    const last = i === svc.slots.length - 1;
    const key = last ? { range: [s.from, SLOT_TOP] } : s.from === s.to ? s.from : { range: [s.from, s.to] };
    return [key, s.port === 0 ? s.address : { concat: [s.address, s.port] }];
  });
}

/**
 * A slot chain's contents: the named slot map (same name as the chain; it must not exist yet) and the one rule: count new connections, then DNAT by the map (no map when nothing is
 * dispatched). The map is named, not an anonymous set of the rule, so that a later change can rewrite its
 * elements in place, in one netlink transaction (nl-codec.ts); the chain must already be flushed.
 */
export function serviceCommands(table: string, svc: NftService, chain = slotChainName(svc.chain, 'a')): NftCommand[] {
  if (svc.slots.length === 0) return [serviceRule(table, svc, chain)];
  const map = obj(table, { name: chain });
  return [
    { add: { map: { ...map, typeof: slotMapTypeof(svc), flags: ['interval'] } } },
    elementCmd('add', table, chain, slotElements(svc)),
    serviceRule(table, svc, chain),
  ];
}

/** Whether a slot rule needs `meta l4proto` first: a port mapping (and hashing a port) needs a transport match. */
export function slotRuleNeedsL4(svc: NftService): boolean {
  return svc.slots.some((s) => s.port !== 0) || (svc.dispatch.kind === 'jhash' && svc.dispatch.fields.includes('sport'));
}

/** The rule of a slot chain (default: side a): count new connections, then DNAT by its slot map (none when empty). */
export function serviceRule(table: string, svc: NftService, chain = slotChainName(svc.chain, 'a')): NftCommand {
  const expr: Json[] = [{ counter: { packets: 0, bytes: 0 } }];
  if (svc.slots.length > 0) {
    const ipName = svc.family === 4 ? 'ip' : 'ip6';
    if (slotRuleNeedsL4(svc)) {
      expr.push(eq(meta('l4proto'), svc.match.kind === 'tuple' ? svc.match.protocol : { set: ['tcp', 'udp', 'sctp'] }));
    }
    let key: Json;
    if (svc.dispatch.kind === 'numgen') {
      key = { numgen: { mode: 'inc', mod: svc.mod, offset: 0 } };
    } else {
      const parts = svc.dispatch.fields.map((f) => (f === 'sport' ? payload('th', 'sport') : payload(ipName, f)));
      key = { jhash: { mod: svc.mod, seed: svc.dispatch.seed, offset: 0, expr: parts.length === 1 ? parts[0] : { concat: parts } } };
    }
    expr.push({ dnat: { family: ipName, addr: { map: { key, data: `@${chain}` } } } });
  }
  return { add: { rule: obj(table, { chain, expr }) } };
}

function vmapRule(table: string, family: 4 | 6, kind: 'tuple' | 'fwmark'): NftCommand {
  const ipName = family === 4 ? 'ip' : 'ip6';
  const expr: Json[] =
    kind === 'fwmark'
      ? [eq(meta('nfproto'), family === 4 ? 'ipv4' : 'ipv6'), { vmap: { key: meta('mark'), data: `@fwmark${family}` } }]
      : [{ vmap: { key: { concat: [payload(ipName, 'daddr'), meta('l4proto'), payload('th', 'dport')] }, data: `@svc${family}` } }];
  return { add: { rule: obj(table, { chain: 'services', expr }) } };
}

function masqRules(table: string): NftCommand[] {
  const dnat = { match: { op: 'in', left: { ct: { key: 'status' } }, right: 'dnat' } };
  const rules: Json[][] = [];
  for (const f of [4, 6] as const) {
    rules.push([dnat, eq({ ct: { key: f === 4 ? 'ip daddr' : 'ip6 daddr', dir: 'original' } }, `@vips${f}`), { masquerade: null }]);
    rules.push([dnat, eq(meta('nfproto'), f === 4 ? 'ipv4' : 'ipv6'), eq(meta('mark'), `@marks${f}`), { masquerade: null }]);
  }
  return rules.map((expr) => ({ add: { rule: obj(table, { chain: 'postrouting', expr }) } }));
}

/** The table's fixed part: maps, sets, the chain of lookups, the hooked chains, and each service's slot chain a. */
export function baseCommands(m: NftTableModel): NftCommand[] {
  const t = m.table;
  const cmds: NftCommand[] = [{ add: { table: { family: FAMILY, name: t } } }];
  const tuple = (f: 4 | 6): string[] => [f === 4 ? 'ipv4_addr' : 'ipv6_addr', 'inet_proto', 'inet_service'];
  for (const f of [4, 6] as const) {
    cmds.push({ add: { map: obj(t, { name: `svc${f}`, type: tuple(f), map: 'verdict' }) } });
    cmds.push({ add: { map: obj(t, { name: `fwmark${f}`, type: 'mark', map: 'verdict' }) } });
  }
  if (m.masquerade) {
    for (const f of [4, 6] as const) {
      cmds.push({ add: { set: obj(t, { name: `vips${f}`, type: f === 4 ? 'ipv4_addr' : 'ipv6_addr' }) } });
      cmds.push({ add: { set: obj(t, { name: `marks${f}`, type: 'mark' }) } });
    }
  }
  cmds.push({ add: { chain: obj(t, { name: 'services' }) } });
  for (const svc of m.services.values()) {
    cmds.push({ add: { chain: obj(t, { name: slotChainName(svc.chain, 'a') }) } });
  }
  cmds.push({ add: { chain: obj(t, { name: 'prerouting', type: 'nat', hook: 'prerouting', prio: -100, policy: 'accept' }) } });
  cmds.push({ add: { chain: obj(t, { name: 'output', type: 'nat', hook: 'output', prio: -100, policy: 'accept' }) } });
  if (m.masquerade) {
    cmds.push({ add: { chain: obj(t, { name: 'postrouting', type: 'nat', hook: 'postrouting', prio: 100, policy: 'accept' }) } });
  }
  // Marks first: IPVS also looks fwmark services up before address/port ones.
  cmds.push(vmapRule(t, 4, 'fwmark'), vmapRule(t, 6, 'fwmark'), vmapRule(t, 4, 'tuple'), vmapRule(t, 6, 'tuple'));
  for (const chain of ['prerouting', 'output']) {
    cmds.push({ add: { rule: obj(t, { chain, expr: [{ jump: { target: 'services' } }] }) } });
  }
  if (m.masquerade) cmds.push(...masqRules(t));
  return cmds;
}

function masqElements(m: NftTableModel): Map<string, Set<string | number>> {
  const out = new Map<string, Set<string | number>>();
  for (const name of ['vips4', 'vips6', 'marks4', 'marks6']) out.set(name, new Set());
  for (const svc of m.services.values()) {
    if (svc.match.kind === 'tuple') out.get(`vips${svc.family}`)?.add(svc.match.address);
    else out.get(`marks${svc.family}`)?.add(svc.match.mark);
  }
  return out;
}

function elementCmd(verb: 'add' | 'delete', table: string, set: string, elem: unknown[]): NftCommand {
  return { [verb]: { element: obj(table, { name: set, elem }) } };
}

function chainCmd(verb: 'add' | 'flush' | 'delete', table: string, name: string): NftCommand {
  return { [verb]: { chain: obj(table, { name }) } };
}

/** The service's vmap element: added with a goto to its slot chain of `side`, or deleted (no side). */
function vmapElement(verb: 'add' | 'delete', t: string, svc: NftService, side?: SlotSide): NftCommand {
  if (verb === 'delete' || side === undefined) return elementCmd('delete', t, vmapName(svc), [vmapKey(svc)]);
  return elementCmd('add', t, vmapName(svc), [[vmapKey(svc), { goto: { target: slotChainName(svc.chain, side) } }]]);
}

/** The switch of a service that stays: its vmap element replaced in one transaction, now going to the slot chain of `side`. */
function vmapRepoint(t: string, svc: NftService, side: SlotSide): NftCommand[] {
  return [vmapElement('delete', t, svc), vmapElement('add', t, svc, side)];
}

/** Everything, from nothing, every service on slot side a: `replace` deletes the old table in the same transaction. */
export function fullCommands(m: NftTableModel, replace: boolean): NftCommand[] {
  const cmds: NftCommand[] = [];
  if (replace) {
    // add-then-delete makes the delete safe whether or not the table still exists.
    cmds.push({ add: { table: { family: FAMILY, name: m.table } } }, { delete: { table: { family: FAMILY, name: m.table } } });
  }
  cmds.push(...baseCommands(m));
  for (const svc of m.services.values()) {
    cmds.push(...serviceCommands(m.table, svc), vmapElement('add', m.table, svc, 'a'));
  }
  cmds.push(...masqCommands(m));
  return cmds;
}

/** The masquerade sets' elements of a full program (none without masquerade). */
export function masqCommands(m: NftTableModel): NftCommand[] {
  const cmds: NftCommand[] = [];
  if (m.masquerade) {
    for (const [set, elems] of masqElements(m)) {
      if (elems.size > 0) cmds.push(elementCmd('add', m.table, set, [...elems]));
    }
  }
  return cmds;
}

/** The slot side of every service once fullCommands(m) is in the kernel. */
export function fullLive(m: NftTableModel): Map<string, SlotSide> {
  return new Map([...m.services.keys()].map((chain) => [chain, 'a' as const]));
}

/** Removes a slot chain, and its slot map when it has one (after the rule that used it). */
function retireSlot(t: string, slot: string, maps: SlotMaps): NftCommand[] {
  const out = [chainCmd('flush', t, slot), chainCmd('delete', t, slot)];
  if (maps.has(slot)) out.push({ delete: { map: obj(t, { name: slot }) } });
  return out;
}

/** The slot maps a table written by lvsd holds: one per live slot chain that dispatches. */
export function slotMapsOf(m: NftTableModel): Set<string> {
  const out = new Set<string>();
  for (const [chain, svc] of m.services) {
    const side = m.live.get(chain);
    if (side !== undefined && svc.slots.length > 0) out.add(slotChainName(chain, side));
  }
  return out;
}

/** Which slot maps a table holds; asked only about the slot chains a plan touches. */
export interface SlotMaps {
  has(name: string): boolean;
}

/** slotMapsOf(m) as a question about one name, so that a plan for one service does not list them all. */
export function slotMapsIn(m: NftTableModel): SlotMaps {
  return {
    has: (name) => {
      for (const side of ['a', 'b'] as const) {
        const chain = name.slice(0, -2);
        if (name !== slotChainName(chain, side)) continue;
        return m.live.get(chain) === side && (m.services.get(chain)?.slots.length ?? 0) > 0;
      }
      return false;
    },
  };
}

/** One change as three transactions, sent in this order; an empty one is skipped. */
export interface UpdatePlan {
  /** Fills slot chains no packet reaches yet. */
  stage: NftCommand[];
  /** The step packets see: vmap elements added, removed, and replaced to go to the staged slot chains. */
  switch: NftCommand[];
  /** Removes what the switch left unreachable: old slot chains, an older layout's service chains, `leftovers`. */
  retire: NftCommand[];
  /** The slot side of every service once the plan is through. */
  live: Map<string, SlotSide>;
}

export function planPhases(plan: UpdatePlan): NftCommand[][] {
  return [plan.stage, plan.switch, plan.retire].filter((p) => p.length > 0);
}

/**
 * The plan that turns table `from` into table `to`, both with the same fixed part. A service keeps its
 * slot chain only when it is unchanged and on a known side; a service of an older layout (`from.oldLayout`)
 * has its element pointed at its slot chain and its old chain removed. `leftovers` are chains nothing
 * reaches (a plan interrupted between its transactions: slot chains, an older layout's service chain); they
 * are removed unless staging reuses them. `maps` are
 * the slot maps the table holds (default: those of `from`'s live slot chains). `delta` is what differs
 * (default: tableDelta); the plan looks at no other service, so it costs what the change costs.
 */
export function planUpdate(
  from: NftTableModel,
  to: NftTableModel,
  same: SameService,
  leftovers: readonly string[] = [],
  maps: SlotMaps = slotMapsIn(from),
  delta: TableDelta = tableDelta(from, to, same),
): UpdatePlan {
  const t = to.table;
  // Nothing for nft (e.g. the fast path wrote the whole change): no copy of every service's side either.
  // The sides are then `from`'s own map, shared: no plan or model changes a live map after it is made.
  if (delta.changed.length === 0 && delta.removed.length === 0 && leftovers.length === 0 && from.live.size === to.services.size && from.masquerade === to.masquerade) {
    return { stage: [], switch: [], retire: [], live: from.live };
  }
  const plan: UpdatePlan = { stage: [], switch: [], retire: [], live: new Map(from.live) };
  /** Whether a service of an older layout changes nothing but that: its element then goes to the slot chain it has. */
  const repointOnly = (chain: string, svc: NftService): boolean => {
    const old = from.services.get(chain);
    return from.oldLayout?.has(chain) === true && old !== undefined && from.live.has(chain) && same(old, svc);
  };
  const staged = new Set<string>();
  for (const chain of delta.changed) {
    const svc = to.services.get(chain);
    if (svc !== undefined && !repointOnly(chain, svc)) staged.add(slotChainName(chain, from.live.get(chain) === 'a' ? 'b' : 'a'));
  }
  // Leftovers first: one may be an older layout's service chain whose goto still holds a slot chain retired below.
  for (const chain of leftovers) {
    if (!staged.has(chain)) plan.retire.push(...retireSlot(t, chain, maps));
  }
  for (const chain of delta.changed) {
    const svc = to.services.get(chain);
    if (svc === undefined) continue;
    const old = from.services.get(chain);
    const side = from.live.get(chain);
    const oldChain = from.oldLayout?.has(chain) === true;
    // The old chain leaves in the retire, before the slot chain its goto holds.
    if (oldChain) plan.retire.push(chainCmd('flush', t, chain), chainCmd('delete', t, chain));
    if (side !== undefined && repointOnly(chain, svc)) {
      // An older layout's dispatch chain and nothing else to change: the element goes straight to the live slot chain.
      plan.switch.push(...vmapRepoint(t, svc, side));
      continue;
    }
    const next: SlotSide = side === 'a' ? 'b' : 'a';
    const slot = slotChainName(chain, next);
    plan.stage.push(chainCmd('add', t, slot), chainCmd('flush', t, slot));
    // A leftover's map may have another type: removed (its chain was just flushed) and made anew.
    if (maps.has(slot)) plan.stage.push({ delete: { map: obj(t, { name: slot }) } });
    plan.stage.push(...serviceCommands(t, svc, slot));
    if (old === undefined) plan.switch.push(vmapElement('add', t, svc, next));
    else plan.switch.push(...vmapRepoint(t, svc, next));
    if (old !== undefined && side !== undefined) plan.retire.push(...retireSlot(t, slotChainName(chain, side), maps));
    plan.live.set(chain, next);
  }
  for (const chain of delta.removed) {
    const svc = from.services.get(chain);
    if (svc === undefined) continue;
    plan.switch.push(vmapElement('delete', t, svc));
    if (from.oldLayout?.has(chain) === true) plan.retire.push(chainCmd('flush', t, chain), chainCmd('delete', t, chain));
    const side = from.live.get(chain);
    if (side !== undefined) plan.retire.push(...retireSlot(t, slotChainName(chain, side), maps));
    plan.live.delete(chain);
  }
  // `from.live` may name chains of no service (a table read back half-written): the plan's sides are `to`'s only.
  if (plan.live.size !== to.services.size) {
    for (const chain of plan.live.keys()) if (!to.services.has(chain)) plan.live.delete(chain);
  }
  // The masquerade sets follow the services' addresses and marks: only adding or removing a service moves them.
  if (to.masquerade && (addsOrRemoves(from, delta) || from.masquerade !== to.masquerade)) {
    // Added before the switch and removed after it: SNAT is in place whenever a service is reachable.
    const before = masqElements(from);
    for (const [set, elems] of masqElements(to)) {
      const had = before.get(set) ?? new Set();
      const add = [...elems].filter((e) => !had.has(e));
      const del = [...had].filter((e) => !elems.has(e));
      if (add.length > 0) plan.stage.push(elementCmd('add', t, set, add));
      if (del.length > 0) plan.retire.push(elementCmd('delete', t, set, del));
    }
  }
  return plan;
}
