// Model → nft JSON commands. Pure. Every change the backend makes is one list of commands sent as ONE
// transaction: new SYNs between two separate nft commands would miss the map and be reset.
//
// The table (family inet, so one table serves IPv4 and IPv6):
//   map svc4/svc6      VIP . l4proto . port → goto svc-… chain
//   map fwmark4/6      packet mark → goto svc-fwmark… chain (looked up first, as IPVS does)
//   chain services     the four vmap lookups
//   chain prerouting   nat hook prerouting (dstnat): jump services
//   chain output       nat hook output (dstnat): jump services (clients on the director itself)
//   chain postrouting  only with masquerade: SNAT what we DNATed (ct original daddr in @vips4/6, mark in @marks4/6)
//   chain svc-…        counter; DNAT to numgen/jhash map of slot ranges → real server
import type { NftService, NftTableModel } from './model.js';

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

/** The rule of a service chain: count new connections, then DNAT by the slot map (none when empty). */
export function serviceRule(table: string, svc: NftService): NftCommand {
  const expr: Json[] = [{ counter: { packets: 0, bytes: 0 } }];
  if (svc.slots.length > 0) {
    const ipName = svc.family === 4 ? 'ip' : 'ip6';
    const withPort = svc.slots.some((s) => s.port !== 0);
    // A port mapping (and hashing a port) needs a transport-protocol match first.
    const needsL4 = withPort || (svc.dispatch.kind === 'jhash' && svc.dispatch.fields.includes('sport'));
    if (needsL4) {
      expr.push(eq(meta('l4proto'), svc.match.kind === 'tuple' ? svc.match.protocol : { set: ['tcp', 'udp', 'sctp'] }));
    }
    let key: Json;
    if (svc.dispatch.kind === 'numgen') {
      key = { numgen: { mode: 'inc', mod: svc.mod, offset: 0 } };
    } else {
      const parts = svc.dispatch.fields.map((f) => (f === 'sport' ? payload('th', 'sport') : payload(ipName, f)));
      key = { jhash: { mod: svc.mod, seed: svc.dispatch.seed, offset: 0, expr: parts.length === 1 ? parts[0] : { concat: parts } } };
    }
    const elems = svc.slots.map((s) => [
      s.from === s.to ? s.from : { range: [s.from, s.to] },
      s.port === 0 ? s.address : { concat: [s.address, s.port] },
    ]);
    expr.push({ dnat: { family: ipName, addr: { map: { key, data: { set: elems } } } } });
  }
  return { add: { rule: obj(table, { chain: svc.chain, expr }) } };
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

/** The table's fixed part: maps, sets, the dispatch chain and the hooked chains. */
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
  for (const svc of m.services.values()) cmds.push({ add: { chain: obj(t, { name: svc.chain }) } });
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

function addService(t: string, svc: NftService): NftCommand[] {
  return [serviceRule(t, svc), elementCmd('add', t, vmapName(svc), [[vmapKey(svc), { goto: { target: svc.chain } }]])];
}

/** Everything, from nothing: `replace` deletes the old table in the same transaction. */
export function fullCommands(m: NftTableModel, replace: boolean): NftCommand[] {
  const cmds: NftCommand[] = [];
  if (replace) {
    // add-then-delete makes the delete safe whether or not the table still exists.
    cmds.push({ add: { table: { family: FAMILY, name: m.table } } }, { delete: { table: { family: FAMILY, name: m.table } } });
  }
  cmds.push(...baseCommands(m));
  for (const svc of m.services.values()) cmds.push(...addService(m.table, svc));
  if (m.masquerade) {
    for (const [set, elems] of masqElements(m)) {
      if (elems.size > 0) cmds.push(elementCmd('add', m.table, set, [...elems]));
    }
  }
  return cmds;
}

/**
 * The commands that turn table `from` into table `to`, both with the same fixed part. Changed services
 * get their chain flushed and refilled in the same transaction: packets never see a half-built map.
 */
export function diffCommands(from: NftTableModel, to: NftTableModel, same: (a: NftService, b: NftService) => boolean): NftCommand[] {
  const t = to.table;
  const cmds: NftCommand[] = [];
  const removals: NftCommand[] = [];
  for (const [chain, svc] of to.services) {
    const old = from.services.get(chain);
    if (old === undefined) {
      cmds.push({ add: { chain: obj(t, { name: chain }) } }, ...addService(t, svc));
    } else if (!same(old, svc)) {
      cmds.push({ flush: { chain: obj(t, { name: chain }) } }, serviceRule(t, svc));
    }
  }
  for (const [chain, svc] of from.services) {
    if (to.services.has(chain)) continue;
    removals.push(
      elementCmd('delete', t, vmapName(svc), [vmapKey(svc)]),
      { flush: { chain: obj(t, { name: chain }) } },
      { delete: { chain: obj(t, { name: chain }) } },
    );
  }
  if (to.masquerade) {
    const before = masqElements(from);
    for (const [set, elems] of masqElements(to)) {
      const had = before.get(set) ?? new Set();
      const add = [...elems].filter((e) => !had.has(e));
      const del = [...had].filter((e) => !elems.has(e));
      if (add.length > 0) cmds.push(elementCmd('add', t, set, add));
      if (del.length > 0) removals.push(elementCmd('delete', t, set, del));
    }
  }
  return [...removals, ...cmds];
}

export function transaction(cmds: NftCommand[]): string {
  return JSON.stringify({ nftables: cmds });
}
