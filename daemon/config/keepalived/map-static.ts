// static_ipaddress / static_routes / static_rules (top-level blocks) → vrrp.staticIpaddresses / staticRoutes /
// staticRules. Their lines are written as virtual_ipaddress / virtual_routes / virtual_rules lines are; a static
// address names its interface (keepalived 2.2.7 refuses one without dev: "no interface specified").
import type { Directive } from './parser.js';
import type { VipOut, VirtualRouteOut, VirtualRuleOut } from './lvsd-shape.js';
import type { Context } from './reader.js';
import { mapVip } from './map-vrrp.js';
import { parseRoute, parseRule, words } from './map-routes.js';

export interface StaticsOut {
  staticIpaddresses?: VipOut[];
  staticRoutes?: VirtualRouteOut[];
  staticRules?: VirtualRuleOut[];
}

export const STATIC_BLOCKS = ['static_ipaddress', 'static_routes', 'static_rules'];

export function mapStatics(ctx: Context, blocks: Directive[]): StaticsOut {
  const out: StaticsOut = {};
  const addresses: VipOut[] = [];
  const routes: VirtualRouteOut[] = [];
  const rules: VirtualRuleOut[] = [];
  for (const b of blocks) {
    for (const line of b.block ?? []) {
      if (b.keyword === 'static_ipaddress') {
        const v = mapVip(ctx, line);
        if (v === undefined) continue;
        if (typeof v === 'string' || v.dev === undefined) ctx.reportDirective(line, 'a static address needs its interface (dev IF): keepalived puts it on default_interface (eth0 unless set), which lvsd does not carry; not carried over');
        else {
          ctx.source.self(v, line.pos);
          addresses.push(v);
        }
      } else {
        const p = b.keyword === 'static_routes' ? parseRoute(words(line)) : parseRule(words(line));
        if (typeof p === 'string') ctx.reportDirective(line, `${p}; not carried over`);
        else if (b.keyword === 'static_routes') {
          const r = p as VirtualRouteOut;
          if ((r.type ?? 'unicast') === 'unicast' && r.via === undefined && r.dev === undefined) ctx.reportDirective(line, 'a static route needs a via or a dev (no instance interface to fall back on); not carried over');
          else routes.push(r);
        } else {
          ctx.source.self(p, line.pos);
          rules.push(p as VirtualRuleOut);
        }
      }
    }
  }
  if (addresses.length > 0) out.staticIpaddresses = addresses;
  if (routes.length > 0) out.staticRoutes = routes;
  if (rules.length > 0) out.staticRules = rules;
  return out;
}
