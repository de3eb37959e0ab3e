// virtual_routes / virtual_rules → virtualRoutes / virtualRules. keepalived's line grammar is ip(8)'s:
// `[src A] [to] PREFIX [via|gw A] [dev IF] [scope S] [table T] [metric N]`, a leading type
// (blackhole, unreachable, prohibit, throw); rules `from P to P [table|lookup T] [priority|pref N]
// [fwmark M[/MASK]] [iif IF] [oif IF]` or an action instead of a table. A line with a word lvsd does not
// carry is reported and left out whole (half a route is a different route).
import { isIP } from 'node:net';
import type { Directive } from './parser.js';
import type { InstanceOut, VirtualRouteOut, VirtualRuleOut } from './lvsd-shape.js';
import type { BlockReader, Context } from './reader.js';

const ROUTE_TYPES = ['blackhole', 'unreachable', 'prohibit', 'throw'] as const;
const RULE_TYPES = ['blackhole', 'unreachable', 'prohibit'] as const;
const SCOPES = ['global', 'site', 'link', 'host'] as const;
/** no_track: keepalived does not watch the route's interface; lvsd never does, so nothing is lost. */
const HARMLESS = new Set(['no_track']);

const cidr = (s: string): string => (s.includes('/') ? s : `${s}/${s.includes(':') ? 128 : 32}`);
/** A well-formed address or prefix (keepalived's own samples have a "192.168.200./24"). */
function badPrefix(s: string): boolean {
  const [a = '', p, more] = s.split('/');
  const fam = isIP(a);
  return fam === 0 || more !== undefined || (p !== undefined && !(/^\d+$/.test(p) && Number(p) <= (fam === 4 ? 32 : 128)));
}

const num = (s: string | undefined): number | undefined => (s !== undefined && /^(0x[0-9a-f]+|\d+)$/i.test(s) ? Number(s) : undefined);
const tableOf = (s: string | undefined): number | undefined => (s === 'main' ? 254 : s === 'local' ? 255 : s === 'default' ? 253 : num(s));

export function words(d: Directive): string[] {
  return [d.keyword, ...d.args];
}

export function parseRoute(w: readonly string[]): VirtualRouteOut | string {
  const out: Partial<VirtualRouteOut> = {};
  for (let i = 0; i < w.length; i++) {
    const k = w[i] ?? '';
    const v = w[i + 1];
    if ((ROUTE_TYPES as readonly string[]).includes(k) && i === 0) out.type = k as VirtualRouteOut['type'];
    else if (HARMLESS.has(k)) continue;
    else if (v === undefined && ['src', 'via', 'gw', 'dev', 'scope', 'table', 'metric', 'to'].includes(k)) return `${k} without a value`;
    else if (k === 'src') {
      out.src = v;
      i++;
    }
    else if (k === 'via' || k === 'gw') {
      out.via = v;
      i++;
    }
    else if (k === 'dev') {
      out.dev = v;
      i++;
    }
    else if (k === 'scope') {
      if (!(SCOPES as readonly string[]).includes(v ?? '')) return `scope ${v ?? ''} is not global, site, link or host`;
      out.scope = v as VirtualRouteOut['scope'];
      i++;
    } else if (k === 'table') {
      const t = tableOf(v);
      if (t === undefined || t < 1) return `table ${v ?? ''} is not a table id`;
      out.table = t;
      i++;
    } else if (k === 'metric' || k === 'preference' || k === 'priority') {
      const m = num(v);
      if (m === undefined) return `${k} ${v ?? ''} is not a number`;
      out.metric = m;
      i++;
    } else if (k === 'to' && out.to === undefined) {
      out.to = v === 'default' ? 'default' : cidr(v ?? '');
      i++;
    }
    else if (out.to === undefined && (k === 'default' || /^[0-9a-f:.]+(\/\d+)?$/i.test(k))) out.to = k === 'default' ? 'default' : cidr(k);
    else return `${k} is not carried by lvsd`;
  }
  if (out.to === undefined) return 'no destination';
  if (out.to !== 'default' && badPrefix(out.to)) return `${out.to} is not an address or prefix`;
  for (const k of ['src', 'via'] as const) {
    const a = out[k];
    if (a !== undefined && isIP(a) === 0) return `${k} ${a} is not an address`;
  }
  // keepalived sends every route with scope universe unless told (measured: "10.71.0.0/16 dev eth0" goes in
  // without scope link); lvsd's own default for a route without a gateway is link, as ip(8)'s.
  if ((out.type ?? 'unicast') === 'unicast' && out.via === undefined && out.scope === undefined) out.scope = 'global';
  const r: VirtualRouteOut = { to: out.to };
  for (const k of ['via', 'dev', 'src', 'table', 'metric', 'scope', 'type'] as const) if (out[k] !== undefined) Object.assign(r, { [k]: out[k] });
  return r;
}

export function parseRule(w: readonly string[]): VirtualRuleOut | string {
  const out: VirtualRuleOut = {};
  for (let i = 0; i < w.length; i++) {
    const k = w[i] ?? '';
    const v = w[i + 1];
    if ((RULE_TYPES as readonly string[]).includes(k)) out.type = k as VirtualRuleOut['type'];
    else if (HARMLESS.has(k)) continue;
    else if (v === undefined) return `${k} without a value`;
    else if (k === 'from' || k === 'to') {
      if (v !== 'all') out[k] = cidr(v);
      i++;
    } else if (k === 'table' || k === 'lookup') {
      const t = tableOf(v);
      if (t === undefined || t < 1) return `table ${v} is not a table id`;
      out.table = t;
      i++;
    } else if (k === 'priority' || k === 'preference' || k === 'pref') {
      const p = num(v);
      if (p === undefined) return `${k} ${v} is not a number`;
      out.priority = p;
      i++;
    } else if (k === 'fwmark') {
      const [m, mask] = v.split('/');
      const mv = num(m);
      const mk = mask === undefined ? undefined : num(mask);
      if (mv === undefined || (mask !== undefined && mk === undefined)) return `fwmark ${v} is not a number[/mask]`;
      out.fwmark = mv;
      if (mk !== undefined) out.fwmask = mk;
      i++;
    } else if (k === 'iif' || k === 'oif') {
      out[k] = v;
      i++;
    }
    else return `${k} is not carried by lvsd`;
  }
  if (out.type === undefined && out.table === undefined) return 'no table to look up';
  for (const k of ['from', 'to'] as const) {
    const a = out[k];
    if (a !== undefined && badPrefix(a)) return `${k} ${a} is not an address or prefix`;
  }
  return out;
}

export function mapVirtualRoutes(ctx: Context, r: BlockReader, inst: InstanceOut): void {
  const routes: VirtualRouteOut[] = [];
  for (const block of r.all('virtual_routes')) {
    for (const line of block.block ?? []) {
      const p = parseRoute(words(line));
      if (typeof p === 'string') ctx.reportDirective(line, `${p}; this route is not carried over`);
      else routes.push(p);
    }
  }
  const rules: VirtualRuleOut[] = [];
  for (const block of r.all('virtual_rules')) {
    for (const line of block.block ?? []) {
      const p = parseRule(words(line));
      if (typeof p === 'string') ctx.reportDirective(line, `${p}; this rule is not carried over`);
      else {
        ctx.source.self(p, line.pos);
        rules.push(p);
      }
    }
  }
  if (routes.length > 0) inst.virtualRoutes = routes;
  if (rules.length > 0) inst.virtualRules = rules;
}

/**
 * keepalived 2.2.7 gives a rule written without a preference 16384, then 16383, … in the order it reads
 * them, static_rules and virtual_rules alike, IPv4 and IPv6 counted apart ("Rule has no preference specified
 * - setting to N"; measured: 16384). The importer writes those numbers, so lvsd sets the same rules. Order:
 * each file's rules by line, the files in the order their rules come here (keepalived reads includes in place).
 */
export function keepalivedRulePriorities(ctx: Context, rules: readonly VirtualRuleOut[]): void {
  const files: string[] = [];
  const pending = rules.filter((r) => r.priority === undefined).map((r) => {
    const pos = ctx.source.get(r, '');
    if (pos !== undefined && !files.includes(pos.file)) files.push(pos.file);
    return { r, pos };
  });
  const key = (p: { pos: { file: string; line: number } | undefined }): number => (p.pos === undefined ? 0 : files.indexOf(p.pos.file) * 1e9 + p.pos.line);
  pending.sort((a, b) => key(a) - key(b));
  const next = { 4: 16384, 6: 16384 };
  for (const { r, pos } of pending) {
    const family = [r.from, r.to].some((a) => a?.includes(':') === true) ? 6 : 4;
    r.priority = next[family]--;
    if (pos !== undefined) ctx.source.at(r, 'priority', pos);
    ctx.note(r, `priority ${r.priority}: what keepalived sets for a rule without a preference (it counts down from 16384)`);
  }
}
