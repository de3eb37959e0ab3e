// A reload to "nothing": a truncated or wrongly copied lvsd.yaml can still be a valid config — `{}`, or
// only `node:` and `api:` — and applying it would release every VIP and empty the virtual server table
// of a director that carries traffic. `lvsd reload` / SIGHUP / the panel's apply refuse such a step
// unless the operator asks for it explicitly; this is the rule, kept pure so the reload path (and its
// tests) can ask it without I/O.
import type { Config } from './types.js';

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Why going from `prev` to `next` would empty the director — `next` has no VRRP instance and no
 * virtual server while `prev` had at least one of either — or null when it would not.
 */
export function emptiesDirector(prev: Config, next: Config): string | null {
  const had = { vrrp: prev.vrrp.instances.length, vs: prev.virtualServers.length };
  if (had.vrrp + had.vs === 0) return null; // nothing to lose
  if (next.vrrp.instances.length + next.virtualServers.length > 0) return null;
  return (
    `${next.source} has no VRRP instance and no virtual server, while the running config has ` +
    `${count(had.vrrp, 'VRRP instance', 'VRRP instances')} and ${count(had.vs, 'virtual server', 'virtual servers')}: ` +
    'applying it would release every VIP and empty the virtual server table (a truncated file?). ' +
    'Not applied; the running config stays. To empty this director on purpose, ask for it explicitly.'
  );
}
