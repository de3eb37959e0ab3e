// Carries out an instance's virtual routes and rules (virtual-routes.ts decides their messages): added
// in order after the VIPs on becoming MASTER, removed in reverse order before the VIPs on leaving it.
// A failure is logged per route and does not stop the others (keepalived alike: one bad route must
// not keep the VIPs or the other routes away).
import { describeRoute, describeRule, routeMessage, ruleMessage, type NormalizedRoute, type NormalizedRule, type RouteMessage, type RuleMessage } from './virtual-routes.js';
import type { LogLevel } from './protocol.js';

export interface RouteIo {
  addRoute?: (m: RouteMessage) => Promise<boolean>;
  delRoute?: (m: RouteMessage) => Promise<boolean>;
  addRule?: (m: RuleMessage) => Promise<boolean>;
  delRule?: (m: RuleMessage) => Promise<boolean>;
}

export interface RouteSet {
  interface: string;
  virtualRoutes?: NormalizedRoute[];
  virtualRules?: NormalizedRule[];
}

type Log = (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;

/**
 * Routes first, then rules, when adding; rules first, then routes, when removing. Returns how many the kernel
 * changed (one already there, or already gone, is not counted). `announce: false` leaves out the info line.
 */
export async function applyRoutes(io: RouteIo, s: RouteSet, add: boolean, ifindexOf: (name: string) => number, log: Log, o: { announce?: boolean } = {}): Promise<number> {
  const routes = s.virtualRoutes ?? [];
  const rules = s.virtualRules ?? [];
  if (routes.length === 0 && rules.length === 0) return 0;
  let changed = 0;
  const doRoutes = async (): Promise<void> => {
    for (const r of add ? routes : [...routes].reverse()) {
      // A unicast route without a gateway goes out of the instance's interface unless it names one.
      const dev = r.dev ?? (r.type === 'unicast' && r.via === undefined ? s.interface : undefined);
      const oif = dev === undefined ? 0 : ifindexOf(dev);
      if (dev !== undefined && oif === 0) {
        log('error', `virtual route ${describeRoute(r)}: no interface ${dev}`, {});
        continue;
      }
      const f = add ? io.addRoute : io.delRoute;
      if (f === undefined) throw new Error('this host cannot change routes');
      try {
        if (await f(routeMessage(r, oif))) changed++;
      } catch (e) {
        log('error', `${add ? 'adding' : 'removing'} virtual route ${describeRoute(r)} failed`, { err: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  const doRules = async (): Promise<void> => {
    for (const r of add ? rules : [...rules].reverse()) {
      const f = add ? io.addRule : io.delRule;
      if (f === undefined) throw new Error('this host cannot change policy rules');
      try {
        if (await f(ruleMessage(r))) changed++;
      } catch (e) {
        log('error', `${add ? 'adding' : 'removing'} virtual rule ${describeRule(r)} failed`, { err: e instanceof Error ? e.message : String(e) });
      }
    }
  };
  if (add) {
    await doRoutes();
    await doRules();
  } else {
    await doRules();
    await doRoutes();
  }
  if (o.announce !== false) log('info', add ? 'setting virtual routes and rules' : 'removing virtual routes and rules', { routes: routes.map(describeRoute), rules: rules.map(describeRule) });
  return changed;
}
