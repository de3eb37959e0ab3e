// keepalived's virtual_routes and virtual_rules (no I/O): checked and normalised once, then turned into
// rtnetlink route and rule messages. They are added on becoming MASTER (after the VIPs, so a route's
// `src` exists) and removed on leaving it (before the VIPs), in keepalived 2.2.7's order, measured:
// "setting VIPs / setting Virtual Routes / setting Virtual Rules", and the reverse on the way down.
// keepalived marks them `proto keepalived` (18); lvsd does the same, so either one recognises them.
import { familyOf, parseCidr, parseIP, type Family } from '../net/addr.js';

export const RTPROT_KEEPALIVED = 18;

export type RouteType = 'unicast' | 'blackhole' | 'unreachable' | 'prohibit' | 'throw';
export type RouteScopeName = 'global' | 'site' | 'link' | 'host';

export interface VirtualRouteOptions {
  /** Destination in CIDR form, or "default". */
  to: string;
  via?: string;
  /** Interface; default the instance's for a unicast route without `via`. */
  dev?: string;
  /** Preferred source (often a VIP). */
  src?: string;
  /** Table id 1..2^32-1; default main (254). */
  table?: number;
  metric?: number;
  scope?: RouteScopeName;
  /** Default unicast. */
  type?: RouteType;
}

export interface VirtualRuleOptions {
  from?: string;
  to?: string;
  /** Table to look up; needed unless `type` says otherwise. */
  table?: number;
  priority?: number;
  fwmark?: number;
  fwmask?: number;
  iif?: string;
  oif?: string;
  /** Default table (lookup). */
  type?: 'table' | 'blackhole' | 'unreachable' | 'prohibit';
}

export interface NormalizedRoute {
  family: Family;
  to: { address: string; prefixLength: number };
  type: RouteType;
  via?: string;
  dev?: string;
  src?: string;
  table: number;
  metric?: number;
  scope: RouteScopeName;
}

export interface NormalizedRule {
  family: Family;
  from?: { address: string; prefixLength: number };
  to?: { address: string; prefixLength: number };
  type: 'table' | 'blackhole' | 'unreachable' | 'prohibit';
  table?: number;
  priority?: number;
  fwmark?: number;
  fwmask?: number;
  iif?: string;
  oif?: string;
}

const MAIN = 254;
const SCOPES: Record<RouteScopeName, number> = { global: 0, site: 200, link: 253, host: 254 };
const ROUTE_TYPES: Record<RouteType, number> = { unicast: 1, blackhole: 6, unreachable: 7, prohibit: 8, throw: 9 };
const RULE_ACTIONS = { table: 1, blackhole: 6, unreachable: 7, prohibit: 8 } as const;

const cidrOf = (text: string): { address: string; prefixLength: number; family: Family } => {
  const c = parseCidr(text);
  return { address: c.address, prefixLength: c.prefixLength, family: c.family };
};

const u32ok = (v: number | undefined, min = 0): boolean => v === undefined || (Number.isInteger(v) && v >= min && v <= 0xffffffff);

/** Checks and fills one instance's routes; `err(field, msg)` names what is wrong. */
export function normalizeRoutes(list: readonly VirtualRouteOptions[], err: (field: string, msg: string) => void): NormalizedRoute[] {
  const out: NormalizedRoute[] = [];
  for (const [i, r] of list.entries()) {
    const f = (k: string): string => `virtualRoutes[${i}]${k === '' ? '' : `.${k}`}`;
    let to: { address: string; prefixLength: number; family: Family };
    try {
      to = r.to === 'default' ? { address: '0.0.0.0', prefixLength: 0, family: r.via !== undefined && familyOf(r.via) === 6 ? 6 : 4 } : cidrOf(r.to);
    } catch (e) {
      err(f('to'), e instanceof Error ? e.message : String(e));
      continue;
    }
    if (r.to === 'default' && to.family === 6) to = { address: '::', prefixLength: 0, family: 6 };
    for (const k of ['via', 'src'] as const) {
      const v = r[k];
      if (v !== undefined && familyOf(v) !== to.family) err(f(k), `${v} is not an IPv${to.family} address like ${r.to}`);
    }
    const type = r.type ?? 'unicast';
    if (type !== 'unicast' && (r.via !== undefined || r.dev !== undefined)) err(f('type'), `a ${type} route has no via or dev`);
    if (!u32ok(r.table, 1)) err(f('table'), `${r.table} is not a table id 1..4294967295`);
    if (!u32ok(r.metric)) err(f('metric'), `${r.metric} is not 0..4294967295`);
    const n: NormalizedRoute = { family: to.family, to: { address: to.address, prefixLength: to.prefixLength }, type, table: r.table ?? MAIN, scope: r.scope ?? (type === 'unicast' && r.via === undefined ? 'link' : 'global') };
    if (r.via !== undefined) n.via = r.via;
    if (r.dev !== undefined) n.dev = r.dev;
    if (r.src !== undefined) n.src = r.src;
    if (r.metric !== undefined) n.metric = r.metric;
    out.push(n);
  }
  return out;
}

export function normalizeRules(list: readonly VirtualRuleOptions[], err: (field: string, msg: string) => void): NormalizedRule[] {
  const out: NormalizedRule[] = [];
  for (const [i, r] of list.entries()) {
    const f = (k: string): string => `virtualRules[${i}]${k === '' ? '' : `.${k}`}`;
    const ends: Partial<Record<'from' | 'to', { address: string; prefixLength: number; family: Family }>> = {};
    for (const k of ['from', 'to'] as const) {
      const v = r[k];
      if (v === undefined) continue;
      try {
        ends[k] = cidrOf(v);
      } catch (e) {
        err(f(k), e instanceof Error ? e.message : String(e));
      }
    }
    const family = ends.from?.family ?? ends.to?.family ?? 4;
    if (ends.from !== undefined && ends.to !== undefined && ends.from.family !== ends.to.family) err(f('to'), 'from and to are of different address families');
    const type = r.type ?? 'table';
    if (type === 'table' && r.table === undefined) err(f('table'), 'a rule needs a table to look up (or a type: blackhole, unreachable, prohibit)');
    if (!u32ok(r.table, 1)) err(f('table'), `${r.table} is not a table id 1..4294967295`);
    for (const k of ['priority', 'fwmark', 'fwmask'] as const) if (!u32ok(r[k])) err(f(k), `${r[k]} is not 0..4294967295`);
    const n: NormalizedRule = { family, type };
    if (ends.from !== undefined) n.from = { address: ends.from.address, prefixLength: ends.from.prefixLength };
    if (ends.to !== undefined) n.to = { address: ends.to.address, prefixLength: ends.to.prefixLength };
    for (const k of ['table', 'priority', 'fwmark', 'fwmask'] as const) if (r[k] !== undefined) n[k] = r[k];
    if (r.iif !== undefined) n.iif = r.iif;
    if (r.oif !== undefined) n.oif = r.oif;
    out.push(n);
  }
  return out;
}

const AF = { 4: 2, 6: 10 } as const;

/** The header and attributes of RTM_NEWROUTE / RTM_DELROUTE; `oif` resolves the device (0 = none). */
export interface RouteMessage {
  data: { family: number; dstLen: number; table: number; protocol: number; scope: number; type: number };
  attrs: { dst?: Buffer; gateway?: Buffer; oif?: number; prefsrc?: Buffer; priority?: number; table: number };
}

export function routeMessage(r: NormalizedRoute, oif: number): RouteMessage {
  const attrs: RouteMessage['attrs'] = { table: r.table };
  if (r.to.prefixLength > 0) attrs.dst = parseIP(r.to.address);
  if (r.via !== undefined) attrs.gateway = parseIP(r.via);
  if (oif > 0) attrs.oif = oif;
  if (r.src !== undefined) attrs.prefsrc = parseIP(r.src);
  if (r.metric !== undefined) attrs.priority = r.metric;
  // The header's table is one byte: ids above 255 travel in RTA_TABLE alone (the header says 252, RT_TABLE_COMPAT).
  return { data: { family: AF[r.family], dstLen: r.to.prefixLength, table: r.table > 255 ? 252 : r.table, protocol: RTPROT_KEEPALIVED, scope: SCOPES[r.scope], type: ROUTE_TYPES[r.type] }, attrs };
}

export interface RuleMessage {
  data: { family: number; dstLen: number; srcLen: number; table: number; action: number };
  attrs: { src?: Buffer; dst?: Buffer; table?: number; priority?: number; fwmark?: number; fwmask?: number; iifname?: string; oifname?: string; protocol: number };
}

export function ruleMessage(r: NormalizedRule): RuleMessage {
  const attrs: RuleMessage['attrs'] = { protocol: RTPROT_KEEPALIVED };
  if (r.from !== undefined) attrs.src = parseIP(r.from.address);
  if (r.to !== undefined) attrs.dst = parseIP(r.to.address);
  if (r.table !== undefined) attrs.table = r.table;
  if (r.priority !== undefined) attrs.priority = r.priority;
  if (r.fwmark !== undefined) attrs.fwmark = r.fwmark;
  if (r.fwmask !== undefined) attrs.fwmask = r.fwmask;
  if (r.iif !== undefined) attrs.iifname = r.iif;
  if (r.oif !== undefined) attrs.oifname = r.oif;
  const table = r.table ?? 0;
  return { data: { family: AF[r.family], dstLen: r.to?.prefixLength ?? 0, srcLen: r.from?.prefixLength ?? 0, table: table > 255 ? 252 : table, action: RULE_ACTIONS[r.type] }, attrs };
}

/** How a route or rule is named in the log: close to `ip route` / `ip rule`. */
export function describeRoute(r: NormalizedRoute): string {
  const to = r.to.prefixLength === 0 ? 'default' : `${r.to.address}/${r.to.prefixLength}`;
  return [r.type === 'unicast' ? '' : r.type, to, r.via && `via ${r.via}`, r.dev && `dev ${r.dev}`, r.src && `src ${r.src}`, r.table !== MAIN && `table ${r.table}`, r.metric !== undefined && `metric ${r.metric}`].filter(Boolean).join(' ');
}

export function describeRule(r: NormalizedRule): string {
  const p = (x: { address: string; prefixLength: number } | undefined): string => (x === undefined ? 'all' : `${x.address}/${x.prefixLength}`);
  return [r.priority !== undefined && `${r.priority}:`, `from ${p(r.from)}`, r.to && `to ${p(r.to)}`, r.fwmark !== undefined && `fwmark ${r.fwmark}`, r.iif && `iif ${r.iif}`, r.oif && `oif ${r.oif}`, r.type === 'table' ? `lookup ${r.table ?? ''}` : r.type].filter(Boolean).join(' ');
}
