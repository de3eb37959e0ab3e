// Carries out a master's addresses: the VIPs (and excluded VIPs) with the virtual routes and rules in
// keepalived's order, chained per instance so a quick MASTER → BACKUP → MASTER applies in order; and, at
// an instance's start, the removal of what an earlier crash of this node left behind.
import type { AddressOptions } from '../net/addr-request.js';
import { applyRoutes, type RouteIo } from './route-apply.js';
import { addressOptions, held, peerOf, type Inst } from './instance.js';
import type { NormalizedInstance } from './options.js';
import type { LogLevel } from './protocol.js';

export interface VipIo extends RouteIo {
  addAddress(ifindex: number, cidr: string, o?: AddressOptions): Promise<boolean>;
  delAddress(ifindex: number, cidr: string, o?: Pick<AddressOptions, 'peer'>): Promise<boolean>;
}

type Log = (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;

/** Adds (removes) the instance's VIPs after its earlier changes; sets inst.vipsHeld when done. */
export function changeVips(io: VipIo, inst: Inst, add: boolean, indexOf: (ifname: string) => number, log: Log): void {
  inst.vipChain = inst.vipChain.then(async () => {
    // Virtual routes and rules go before the VIPs on the way down, after them on the way up (keepalived's order).
    const routes = (): Promise<number> => applyRoutes(io, inst.o, add, indexOf, log);
    if (!add) await routes();
    for (const v of held(inst.o)) {
      const dev = v.dev === inst.o.interface ? inst.ifindex : indexOf(v.dev);
      if (dev === 0) {
        log('error', `VIP ${v.cidr}: no interface ${v.dev}`, {});
        continue;
      }
      try {
        if (add) await io.addAddress(dev, v.cidr, addressOptions(v));
        else await io.delAddress(dev, v.cidr, peerOf(v));
      } catch (e) {
        log('error', `${add ? 'adding' : 'removing'} VIP failed`, { vip: v.cidr, err: e instanceof Error ? e.message : String(e) });
      }
    }
    if (add) await routes();
    inst.vipsHeld = add;
    log('info', add ? 'setting VIPs' : 'removing VIPs', { vips: inst.o.vips.map((v) => v.cidr), ...(inst.o.excludedVips.length > 0 ? { excludedVips: inst.o.excludedVips.map((v) => v.cidr) } : {}) });
  });
}

/**
 * A VIP left behind by an earlier crash of this node must not stay up while we start as Backup; nor its
 * virtual routes and rules. keepalived 2.2.7 tries the same at start ("removing Virtual Routes"), and
 * measured here removes the rules but leaves the routes of a crashed master in place.
 */
export async function removeStale(io: VipIo, o: NormalizedInstance, ifindex: number, indexOf: (ifname: string) => number, log: Log): Promise<void> {
  for (const v of held(o)) {
    const dev = indexOf(v.dev) || ifindex;
    if (await io.delAddress(dev, v.cidr, peerOf(v))) log('info', 'removed a stale VIP left from an earlier run', { vip: v.cidr });
  }
  const stale = await applyRoutes(io, o, false, indexOf, log, { announce: false });
  if (stale > 0) log('info', 'removed stale virtual routes and rules left from an earlier run', { count: stale });
}
