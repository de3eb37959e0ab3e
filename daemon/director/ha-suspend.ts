// keepalived ha_suspend: a virtual server's checks run only while this director holds its address.
// keepalived watches the host's addresses; lvsd decides from the VRRP roles instead, which is where the
// VIPs come from on a director: the address is held while an instance carrying it (as a VIP or an
// excluded VIP) is MASTER here. An address no VRRP instance carries (configured on the host by hand, or
// a VIP of another daemon) is taken as held: lvsd does not watch the host's addresses, and suspending
// checks forever would be worse than running them.
import type { Config } from '../config/types.js';
import { compareIP, parseIP } from '../net/addr.js';
import type { VrrpState } from '../vrrp/index.js';
import type { DirectorEvent } from './snapshot.js';

function sameIP(a: string, b: string): boolean {
  const x = parseIP(a);
  const y = parseIP(b);
  return x.length === y.length && compareIP(x, y) === 0;
}

/** The one place that decides: virtual server id → suspended, for every virtual server with haSuspend. */
export function haSuspended(config: Config, roles: ReadonlyMap<string, VrrpState>): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const vs of config.virtualServers) {
    if (!vs.haSuspend || vs.address === undefined) continue;
    const address = vs.address;
    const carriers = config.vrrp.instances.filter((i) => [...i.virtualIpaddresses, ...i.virtualIpaddressesExcluded].some((v) => sameIP(v.address, address)));
    out.set(vs.id, carriers.length > 0 && !carriers.some((i) => roles.get(i.name) === 'MASTER'));
  }
  return out;
}

export interface HaSuspendDeps {
  config(): Config;
  roles(): ReadonlyMap<string, VrrpState>;
  health: { suspend(service: string, suspended: boolean): void };
  subscribe(fn: (e: DirectorEvent) => void): () => void;
}

/**
 * Applies haSuspended() now and again after every VRRP transition and reload. A service that lost
 * haSuspend by a reload is resumed; the monitor forgets services that left the config on its own.
 */
export function followHaSuspend(d: HaSuspendDeps): () => void {
  let applied = new Set<string>();
  const apply = (): void => {
    const next = haSuspended(d.config(), d.roles());
    for (const id of applied) if (!next.has(id)) d.health.suspend(id, false);
    for (const [id, s] of next) d.health.suspend(id, s);
    applied = new Set(next.keys());
  };
  apply();
  return d.subscribe((e) => {
    if (e.type === 'vrrp.transition' || e.type === 'config.reload') apply();
  });
}
