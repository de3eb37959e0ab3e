// A virtual server defined twice (the same address, port and protocol, or the same fwmark). keepalived
// 2.2.7 loads both blocks (`keepalived -n -C` in a namespace shuts down the real servers of both under
// one VS name) and programs IPVS from both: the second "add service" fails because the service exists,
// which init_service_vs ignores, and the second block's real servers are then added to the service the
// first block created, so the kernel runs the first block's settings with the real servers of both (a
// real server in both keeps the first one's entry: its add fails too). lvsd holds a service once
// (check-config refuses a duplicate), so the importer merges the second block into the first the same
// way and reports what of it was not carried over.
import type { Pos } from './lexer.js';
import type { RealServerOut, VirtualServerOut } from './lvsd-shape.js';
import type { Context } from './reader.js';
import { hoistHealthCheck } from './map-lvs.js';
import { realServerKey, serviceKey } from '../semantic.js';

export interface MappedServer {
  out: VirtualServerOut;
  /** Where its virtual_server line (or group member) is. */
  pos: Pos;
}

/** The canonical id lvsd's check-config uses for a virtual server. */
export function serviceId(vs: VirtualServerOut): string {
  if (vs.fwmark !== undefined) return `fwmark:${vs.family === 'ipv6' ? 6 : 4}:${vs.fwmark}`;
  return serviceKey(vs.protocol ?? 'tcp', vs.address ?? '', vs.port ?? 0);
}

/** Keys of a virtual server that are service settings (not its real servers or their checks). */
const SERVICE_KEYS = [
  'name', 'scheduler', 'schedulerFlags', 'method', 'persistence', 'onePacket', 'quorum', 'hysteresis', 'inhibitOnFailure', 'alpha', 'haSuspend', 'omega',
  'notify', 'sorryServer',
] as const;

export function mergeDuplicateServers(ctx: Context, servers: MappedServer[]): VirtualServerOut[] {
  const byId = new Map<string, MappedServer>();
  const out: VirtualServerOut[] = [];
  for (const s of servers) {
    const id = serviceId(s.out);
    const first = byId.get(id);
    if (first === undefined) {
      byId.set(id, s);
      out.push(s.out);
      continue;
    }
    const { kept, differing } = merge(first.out, s.out);
    const parts = [`virtual server ${id} is defined again (first at ${ctx.displayPos(first.pos)}); keepalived 2.2.7 keeps the first one's service settings and adds this block's real servers to it: merged into the first`];
    if (kept.length > 0) parts.push(`real servers in both keep the first one's entry (${kept.join(', ')})`);
    if (differing.length > 0) parts.push(`this block's ${differing.join(', ')} not carried over`);
    ctx.report(s.pos, 'virtual_server', parts.join('; '));
  }
  return out;
}

/** Moves the real servers of `dup` that `first` does not have into `first`, each keeping its own checks. */
function merge(first: VirtualServerOut, dup: VirtualServerOut): { kept: string[]; differing: string[] } {
  const differing = SERVICE_KEYS.filter((k) => JSON.stringify(first[k]) !== JSON.stringify(dup[k]));
  // The service-level checks are the defaults of that block's real servers only: write them on each.
  unhoist(first);
  unhoist(dup);
  const have = new Set(first.realServers.map((rs) => realServerKey(rs.address, rs.port ?? first.port ?? 0)));
  const kept: string[] = [];
  for (const rs of dup.realServers) {
    const key = realServerKey(rs.address, rs.port ?? dup.port ?? 0);
    if (have.has(key)) {
      kept.push(key);
      continue;
    }
    have.add(key);
    if (rs.method === undefined && dup.method !== first.method) rs.method = dup.method;
    first.realServers.push(rs);
  }
  hoistHealthCheck(first);
  return { kept, differing };
}

/** Writes a virtual server's healthCheck / moreChecks onto each of its real servers (the first keeps the original object). */
function unhoist(vs: VirtualServerOut): void {
  const give = (rs: RealServerOut, i: number): void => {
    if (vs.healthCheck !== undefined && rs.healthCheck === undefined) rs.healthCheck = i === 0 ? vs.healthCheck : structuredClone(vs.healthCheck);
    if (vs.moreChecks !== undefined && rs.moreChecks === undefined) rs.moreChecks = i === 0 ? vs.moreChecks : structuredClone(vs.moreChecks);
  };
  vs.realServers.forEach(give);
  delete vs.healthCheck;
  delete vs.moreChecks;
}
