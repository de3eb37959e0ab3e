// The dataplane contract's backend-neutral specs (dataplane/types.ts) ↔ the kernel's IPVS objects.
// Also canonicalises a desired table the way the kernel will report it back, so the reconciler
// compares like with like (canonical ids and addresses, DR/TUN ports, default netmasks, tunnels).
import type {
  Counters, DesiredTable, ObservedRealServer, ObservedService, RealServerSpec, SchedulerFlag, ServiceSpec, TunnelChecksum,
} from '../types.js';
import { canonicalIp, ipFamily } from '../../ipvs/addr.js';
import type { IpvsServiceWithDests } from '../../ipvs/client.js';
import { defaultNetmask, destText, serviceKeyText, type IpvsDest, type IpvsService, type ServiceKey, type Stats } from '../../ipvs/codec.js';
import { SvcFlag, TunFlag } from '../../ipvs/constants.js';

const CSUM_NUM: Record<TunnelChecksum, number> = { none: TunFlag.NOCSUM, csum: TunFlag.CSUM, remcsum: TunFlag.REMCSUM };

export class InvalidServiceSpec extends Error {
  override readonly name = 'InvalidServiceSpec';
  constructor(
    readonly object: string,
    reason: string,
  ) {
    super(`${object}: ${reason}`);
  }
}

export function serviceKeyOf(s: ServiceSpec): ServiceKey {
  if (s.fwmark !== undefined) return { family: s.family, fwmark: s.fwmark };
  if (s.address === undefined || s.port === undefined) throw new InvalidServiceSpec(s.id, 'needs address and port, or a fwmark');
  return { family: s.family, protocol: s.protocol, address: s.address, port: s.port };
}

/** Canonical form + validation; throws InvalidServiceSpec naming the service / real server. */
export function canonicalizeDesired(t: DesiredTable): DesiredTable {
  return { services: t.services.map(canonicalServiceMemo) };
}

// A director that keeps unchanged service objects between applies (structural sharing) pays nothing
// to re-canonicalise them: a weight change then costs work for one service, not for the table.
const canonicalMemo = new WeakMap<ServiceSpec, { json: string; canonical: ServiceSpec }>();
function canonicalServiceMemo(s: ServiceSpec): ServiceSpec {
  const hit = canonicalMemo.get(s);
  const json = JSON.stringify(s); // guards against the same object mutated in place
  if (hit?.json === json) return hit.canonical;
  const canonical = canonicalService(s);
  canonicalMemo.set(s, { json, canonical });
  return canonical;
}

/** One service's canonical form, computed afresh (canonicalizeDesired memoises it by object and content). */
export function canonicalService(s: ServiceSpec): ServiceSpec {
  const out: ServiceSpec = { ...s, realServers: [] };
  if (s.fwmark !== undefined) {
    if (!Number.isInteger(s.fwmark) || s.fwmark < 1 || s.fwmark > 0xffffffff) throw new InvalidServiceSpec(s.id, `fwmark ${s.fwmark} is not 1..4294967295`);
    out.protocol = 'tcp'; // the kernel treats every fwmark service as TCP
    delete out.address;
    delete out.port;
  } else {
    if (s.address === undefined || s.port === undefined) throw new InvalidServiceSpec(s.id, 'needs address and port, or a fwmark');
    let fam: 4 | 6;
    try {
      fam = ipFamily(s.address);
    } catch (e) {
      throw new InvalidServiceSpec(s.id, (e as Error).message);
    }
    if (fam !== s.family) throw new InvalidServiceSpec(s.id, `address ${s.address} is not IPv${s.family}`);
    out.address = canonicalIp(s.address);
  }
  const key = serviceKeyOf(out);
  out.id = serviceKeyText(key);
  for (const f of s.schedulerFlags ?? []) {
    if (!f.startsWith(`${s.scheduler}-`)) throw new InvalidServiceSpec(out.id, `scheduler flag ${f} does not apply to scheduler ${s.scheduler}`);
  }
  if (s.schedulerFlags !== undefined) out.schedulerFlags = [...new Set(s.schedulerFlags)].sort();
  if (out.schedulerFlags?.length === 0) delete out.schedulerFlags;
  if (s.persistence !== undefined) {
    const nm = s.persistence.netmask === '' ? defaultNetmask(s.family) : s.persistence.netmask;
    out.persistence = { timeoutSec: s.persistence.timeoutSec, netmask: s.family === 4 ? canonicalIp(nm) : String(Number(nm)) };
    if (s.persistence.engine !== undefined) out.persistence.engine = s.persistence.engine;
  }
  if (s.onePacket !== true) delete out.onePacket;
  out.realServers = s.realServers.map((r) => canonicalRealServer(out, r));
  return out;
}

function canonicalRealServer(s: ServiceSpec, r: RealServerSpec): RealServerSpec {
  let address: string;
  try {
    address = canonicalIp(r.address);
  } catch (e) {
    throw new InvalidServiceSpec(`${s.id} → ${r.id}`, (e as Error).message);
  }
  // DR and TUN cannot rewrite the port: the kernel (and ipvsadm) use the service's port.
  const port = r.method === 'nat' ? r.port : (s.port ?? 0);
  const out: RealServerSpec = { id: destText({ family: ipFamily(address), address, port }), address, port, weight: r.weight, method: r.method };
  if (!Number.isInteger(r.weight) || r.weight < 0) throw new InvalidServiceSpec(`${s.id} → ${out.id}`, `weight ${r.weight} is not a non-negative integer`);
  if (r.method === 'tun') {
    const type = r.tunnel?.type ?? 'ipip';
    out.tunnel = { type, checksum: r.tunnel?.checksum ?? 'none' };
    // Remote checksum offload is a GUE feature (ipvsadm refuses it for other tunnel types).
    if (out.tunnel.checksum === 'remcsum' && type !== 'gue') throw new InvalidServiceSpec(`${s.id} → ${out.id}`, `remcsum needs a gue tunnel, not ${type}`);
    if (type === 'gue') {
      if (r.tunnel?.port === undefined) throw new InvalidServiceSpec(`${s.id} → ${out.id}`, 'a gue tunnel needs a port');
      out.tunnel.port = r.tunnel.port;
    }
  } else if (r.tunnel !== undefined) {
    throw new InvalidServiceSpec(`${s.id} → ${out.id}`, `tunnel settings need method tun, not ${r.method}`);
  }
  if ((r.upperThreshold ?? 0) !== 0) out.upperThreshold = r.upperThreshold;
  if ((r.lowerThreshold ?? 0) !== 0) out.lowerThreshold = r.lowerThreshold;
  return out;
}

export function toIpvsService(s: ServiceSpec): IpvsService {
  let flags = 0;
  if (s.persistence !== undefined) flags |= SvcFlag.PERSISTENT;
  if (s.onePacket === true) flags |= SvcFlag.ONEPACKET;
  for (const f of s.schedulerFlags ?? []) flags |= f.endsWith('-port') ? SvcFlag.SCHED2 : SvcFlag.SCHED1;
  const svc: IpvsService = {
    key: serviceKeyOf(s),
    scheduler: s.scheduler,
    flags,
    timeout: s.persistence?.timeoutSec ?? 0,
    netmask: s.persistence?.netmask ?? defaultNetmask(s.family),
  };
  if (s.persistence?.engine !== undefined) svc.peName = s.persistence.engine;
  return svc;
}

export function toIpvsDest(r: RealServerSpec): IpvsDest {
  const d: IpvsDest = {
    family: ipFamily(r.address),
    address: r.address,
    port: r.port,
    fwd: r.method,
    weight: r.weight,
    upperThreshold: r.upperThreshold ?? 0,
    lowerThreshold: r.lowerThreshold ?? 0,
  };
  if (r.method === 'tun') {
    d.tunType = r.tunnel?.type ?? 'ipip';
    d.tunPort = r.tunnel?.port ?? 0;
    d.tunFlags = CSUM_NUM[r.tunnel?.checksum ?? 'none'];
  }
  return d;
}

function counters(s: Stats | undefined): Counters | undefined {
  return s === undefined ? undefined : { ...s };
}

function schedulerFlagsOf(s: IpvsService): SchedulerFlag[] {
  if (s.scheduler !== 'sh' && s.scheduler !== 'mh') return [];
  const out: SchedulerFlag[] = [];
  if (s.flags & SvcFlag.SCHED1) out.push(`${s.scheduler}-fallback`);
  if (s.flags & SvcFlag.SCHED2) out.push(`${s.scheduler}-port`);
  return out.sort();
}

/**
 * A kernel service as the contract's observed type. Local/bypass destinations (which lvsd never
 * creates) show as 'nat'; a scheduler name is passed through as the kernel reports it.
 */
export function fromIpvs(s: IpvsServiceWithDests): ObservedService {
  const k = s.key;
  const out: ObservedService = {
    id: serviceKeyText(k),
    family: k.family,
    protocol: k.fwmark !== undefined ? 'tcp' : k.protocol,
    scheduler: s.scheduler as ServiceSpec['scheduler'],
    realServers: s.dests.map((d) => observedDest(d)),
  };
  if (k.fwmark !== undefined) out.fwmark = k.fwmark;
  else {
    out.address = k.address;
    out.port = k.port;
  }
  const flags = schedulerFlagsOf(s);
  if (flags.length > 0) out.schedulerFlags = flags;
  if (s.flags & SvcFlag.PERSISTENT) {
    out.persistence = { timeoutSec: s.timeout, netmask: s.netmask };
    if (s.peName !== undefined && s.peName !== '') out.persistence.engine = s.peName;
  }
  if (s.flags & SvcFlag.ONEPACKET) out.onePacket = true;
  const c = counters(s.stats64 ?? s.stats);
  if (c !== undefined) out.counters = c;
  return out;
}

export function observedDest(d: IpvsDest): ObservedRealServer {
  const method = d.fwd === 'nat' || d.fwd === 'dr' || d.fwd === 'tun' ? d.fwd : 'nat';
  const out: ObservedRealServer = {
    id: destText(d),
    address: d.address,
    port: d.port,
    // Local/bypass destinations show as 'nat' with weight as is; lvsd never creates them.
    method,
    weight: d.weight,
    activeConns: d.activeConns ?? 0,
    inactiveConns: d.inactiveConns ?? 0,
    persistConns: d.persistConns ?? 0,
  };
  if (d.fwd === 'tun') {
    const type = d.tunType ?? 'ipip';
    const flags = d.tunFlags ?? 0;
    out.tunnel = { type, checksum: flags & TunFlag.REMCSUM ? 'remcsum' : flags & TunFlag.CSUM ? 'csum' : 'none' };
    if (type === 'gue') out.tunnel.port = d.tunPort ?? 0;
  }
  if (d.upperThreshold !== 0) out.upperThreshold = d.upperThreshold;
  if (d.lowerThreshold !== 0) out.lowerThreshold = d.lowerThreshold;
  const c = counters(d.stats64 ?? d.stats);
  if (c !== undefined) out.counters = c;
  return out;
}
