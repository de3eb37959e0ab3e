// keepalived's static_ipaddress / static_routes / static_rules: addresses, routes and rules the VRRP engine
// sets at start whatever the instances' states, and removes at stop. Measured on keepalived 2.2.7: added
// while every instance is still BACKUP, routes and rules with protocol keepalived, all gone after a stop.
// A reload adds and removes only what changed. The delta is pure; applying it is the I/O edge.
import { applyRoutes, type RouteIo } from './route-apply.js';
import { describeRoute, describeRule } from './virtual-routes.js';
import type { NormalizedVip, StaticSet } from './options.js';
import type { LogLevel } from './protocol.js';
import type { AddressOptions } from '../net/addr-request.js';

export const NO_STATICS: StaticSet = { addresses: [], routes: [], rules: [] };

/** What to take away and what to put in, to go from `before` to `after` (an entry is its whole content). */
export function staticDelta(before: StaticSet, after: StaticSet): { remove: StaticSet; add: StaticSet } {
  const minus = <T>(a: T[], b: T[]): T[] => {
    const keep = new Set(b.map((x) => JSON.stringify(x)));
    return a.filter((x) => !keep.has(JSON.stringify(x)));
  };
  return {
    remove: { addresses: minus(before.addresses, after.addresses), routes: minus(before.routes, after.routes), rules: minus(before.rules, after.rules) },
    add: { addresses: minus(after.addresses, before.addresses), routes: minus(after.routes, before.routes), rules: minus(after.rules, before.rules) },
  };
}

export interface StaticIo extends RouteIo {
  addAddress(ifindex: number, cidr: string, o?: AddressOptions): Promise<boolean>;
  delAddress(ifindex: number, cidr: string, o?: Pick<AddressOptions, 'peer'>): Promise<boolean>;
}

type Log = (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;

/** Removes (rules, routes, then addresses) and adds (the other way round); one failure is logged and the rest go on. */
export async function applyStaticDelta(io: StaticIo, delta: { remove: StaticSet; add: StaticSet }, ifindexOf: (name: string) => number, log: Log): Promise<void> {
  const { remove, add } = delta;
  if (remove.routes.length + remove.rules.length > 0) await applyRoutes(io, { interface: '', virtualRoutes: remove.routes, virtualRules: remove.rules }, false, ifindexOf, log, { announce: false });
  await addresses(io, remove.addresses, false, ifindexOf, log);
  await addresses(io, add.addresses, true, ifindexOf, log);
  if (add.routes.length + add.rules.length > 0) await applyRoutes(io, { interface: '', virtualRoutes: add.routes, virtualRules: add.rules }, true, ifindexOf, log, { announce: false });
  if ([add, remove].some((x) => x.addresses.length + x.routes.length + x.rules.length > 0)) {
    log('info', 'static addresses, routes and rules set', {
      added: [...add.addresses.map((a) => a.cidr), ...add.routes.map(describeRoute), ...add.rules.map(describeRule)],
      removed: [...remove.addresses.map((a) => a.cidr), ...remove.routes.map(describeRoute), ...remove.rules.map(describeRule)],
    });
  }
}

async function addresses(io: StaticIo, list: NormalizedVip[], add: boolean, ifindexOf: (name: string) => number, log: Log): Promise<void> {
  for (const v of list) {
    const ifindex = ifindexOf(v.dev);
    if (ifindex === 0) {
      log('error', `static address ${v.cidr}: no interface ${v.dev}`, {});
      continue;
    }
    const { address: _a, prefixLength: _p, cidr: _c, dev: _d, ...o } = v;
    try {
      if (add) await io.addAddress(ifindex, v.cidr, o);
      else await io.delAddress(ifindex, v.cidr, v.peer === undefined ? {} : { peer: v.peer });
    } catch (e) {
      log('error', `${add ? 'adding' : 'removing'} static address ${v.cidr} on ${v.dev} failed`, { err: e instanceof Error ? e.message : String(e) });
    }
  }
}
