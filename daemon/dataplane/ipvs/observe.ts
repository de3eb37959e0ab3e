// The kernel's dump replies straight into the observed form the reconciler compares: one walk over each
// reply's attributes, no intermediate codec object, no per-attribute allocation, the counters never read.
// What a restart adopting its table spends most of its JavaScript on (bench/ipvs-adopt-cpu.ts); it gives
// exactly what fromIpvs(decodeService/decodeDest with stats: false) gives (test/unit/ipvs-observe.test.ts),
// and refuses the same malformed replies.
import { bytesToIp } from '../../ipvs/addr.js';
import { AF_INET, AF_INET6, CmdAttr, DestAttr, Fwd, FWD_MASK, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP, SvcAttr, SvcFlag, TunFlag, TunType } from '../../ipvs/constants.js';
import { NLA_TYPE_MASK } from '../../net/nlattr.js';
import type { ObservedRealServer, ObservedService, Protocol, SchedulerFlag, ServiceSpec, TunnelSpec } from '../types.js';

type Family = 4 | 6;

function familyOf(af: number, what: string): Family {
  if (af === AF_INET) return 4;
  if (af === AF_INET6) return 6;
  throw new Error(`${what}: unknown address family ${af}`);
}

/** The value length of the attribute at `off`, checked to hold at least n bytes (as Attrs does). */
function sized(buf: Buffer, off: number, n: number, type: number, what: string): number {
  const len = u16(buf, off) - 4;
  if (len < n) throw new Error(`${what}: attribute ${type} is ${len} bytes, expected ${n}`);
  return off + 4;
}

/** Refuses an attribute that runs past its run (buf[start..end)), as Attrs.parse does. */
function truncated(buf: Buffer, off: number, start: number, end: number, what: string): never {
  throw new Error(`${what}: attribute ${u16(buf, off + 2) & NLA_TYPE_MASK} at offset ${off - start} has length ${u16(buf, off)}, only ${end - off} bytes left`);
}

// Run once per restart, this code is mostly interpreted (cold): the walk is one loop of byte reads storing each
// attribute's offset by type (no switch, no callback, no Buffer read method, no allocation: one scratch table),
// and the values are read afterwards. The caller has checked the bounds (offsets, sized).
const scratch = new Int32Array(16);

/**
 * The offset of each attribute of buf[start..end) by type, -1 where absent (types past 15: none here is read);
 * the last one of a type wins, as in the kernel's nla_parse. Refuses a truncated run as Attrs.parse does. The
 * table is reused by the next call: read it first.
 */
function offsets(buf: Buffer, start: number, end: number, what: string): Int32Array {
  scratch.fill(-1);
  for (let off = start, len = 0; off + 4 <= end; off += (len + 3) & ~3) {
    len = (buf[off] ?? 0) | ((buf[off + 1] ?? 0) << 8);
    if (len < 4 || off + len > end) truncated(buf, off, start, end, what);
    const type = ((buf[off + 2] ?? 0) | ((buf[off + 3] ?? 0) << 8)) & NLA_TYPE_MASK;
    if (type < 16) scratch[type] = off;
  }
  return scratch;
}
const u16 = (b: Buffer, o: number): number => (b[o] ?? 0) | ((b[o + 1] ?? 0) << 8);
const be16 = (b: Buffer, o: number): number => ((b[o] ?? 0) << 8) | (b[o + 1] ?? 0);
const u32 = (b: Buffer, o: number): number => ((b[o] ?? 0) | ((b[o + 1] ?? 0) << 8) | ((b[o + 2] ?? 0) << 16)) + (b[o + 3] ?? 0) * 0x100_0000;
const ipText = (buf: Buffer, off: number, len: number, family: Family): string => {
  if (family === 4 && len >= 4) return `${buf[off]}.${buf[off + 1]}.${buf[off + 2]}.${buf[off + 3]}`;
  return bytesToIp(buf.subarray(off, off + len), family);
};

function str(buf: Buffer, off: number): string {
  const end = off + u16(buf, off);
  const nul = buf.indexOf(0, off + 4);
  return buf.toString('utf8', off + 4, nul < 0 || nul > end ? end : nul);
}

/** A DEST nest's attributes (buf[start..end), by default all of buf) as an observed real server. */
export function observedDestOf(buf: Buffer, serviceFamily: Family, start = 0, end = buf.length): ObservedRealServer {
  const w = 'destination';
  const at = offsets(buf, start, end, w);
  const addr = at[DestAttr.ADDR] ?? -1, port = at[DestAttr.PORT] ?? -1, fwd = at[DestAttr.FWD_METHOD] ?? -1, af = at[DestAttr.ADDR_FAMILY] ?? -1;
  const tunType = at[DestAttr.TUN_TYPE] ?? -1, tunPort = at[DestAttr.TUN_PORT] ?? -1, tunFlags = at[DestAttr.TUN_FLAGS] ?? -1;
  const weight = at[DestAttr.WEIGHT] ?? -1, upper = at[DestAttr.U_THRESH] ?? -1, lower = at[DestAttr.L_THRESH] ?? -1;
  const active = at[DestAttr.ACTIVE_CONNS] ?? -1, inactive = at[DestAttr.INACT_CONNS] ?? -1, persist = at[DestAttr.PERSIST_CONNS] ?? -1;
  const family = af < 0 ? serviceFamily : familyOf(u16(buf, sized(buf, af, 2, DestAttr.ADDR_FAMILY, w)), w);
  if (addr < 0 || port < 0) throw new Error('destination: no address or port');
  const portNum = be16(buf, sized(buf, port, 2, DestAttr.PORT, w));
  const address = ipText(buf, addr + 4, u16(buf, addr) - 4, family);
  const fwdNum = u32At(buf, fwd, DestAttr.FWD_METHOD, w) & FWD_MASK;
  if (fwdNum > Fwd.BYPASS) throw new Error(`destination ${address}: unknown forwarding method ${fwdNum}`);
  const out: ObservedRealServer = {
    id: family === 6 ? `[${address}]:${portNum}` : `${address}:${portNum}`,
    address,
    port: portNum,
    // Local/bypass destinations (which lvsd never creates) show as 'nat', as spec.ts's observedDest has them.
    method: fwdNum === Fwd.DROUTE ? 'dr' : fwdNum === Fwd.TUNNEL ? 'tun' : 'nat',
    weight: u32At(buf, weight, DestAttr.WEIGHT, w),
    activeConns: 0,
    inactiveConns: 0,
    persistConns: 0,
  };
  const upperNum = u32At(buf, upper, DestAttr.U_THRESH, w);
  const lowerNum = u32At(buf, lower, DestAttr.L_THRESH, w);
  const tt = tunType < 0 ? -1 : (buf[sized(buf, tunType, 1, DestAttr.TUN_TYPE, w)] ?? 0);
  const tunnelType = tt < 0 ? undefined : TUN_NAMES[tt];
  if (tt >= 0 && tunnelType === undefined) throw new Error(`destination ${address}: unknown tunnel type ${tt}`);
  const tp = tunPort < 0 ? -1 : be16(buf, sized(buf, tunPort, 2, DestAttr.TUN_PORT, w));
  const tf = tunFlags < 0 ? 0 : u16(buf, sized(buf, tunFlags, 2, DestAttr.TUN_FLAGS, w));
  out.activeConns = u32At(buf, active, DestAttr.ACTIVE_CONNS, w);
  out.inactiveConns = u32At(buf, inactive, DestAttr.INACT_CONNS, w);
  out.persistConns = u32At(buf, persist, DestAttr.PERSIST_CONNS, w);
  if (out.method === 'tun') {
    const type = tunnelType ?? 'ipip';
    const tunnel: TunnelSpec = { type, checksum: tf & TunFlag.REMCSUM ? 'remcsum' : tf & TunFlag.CSUM ? 'csum' : 'none' };
    if (type === 'gue') tunnel.port = tp < 0 ? 0 : tp;
    out.tunnel = tunnel;
  }
  if (upperNum !== 0) out.upperThreshold = upperNum;
  if (lowerNum !== 0) out.lowerThreshold = lowerNum;
  return out;
}

/** The u32 attribute at `off` (0 when absent). */
function u32At(buf: Buffer, off: number, type: number, what: string): number {
  return off < 0 ? 0 : u32(buf, sized(buf, off, 4, type, what));
}

const TUN_NAMES: Record<number, TunnelSpec['type'] | undefined> = { [TunType.IPIP]: 'ipip', [TunType.GUE]: 'gue', [TunType.GRE]: 'gre' };
const PROTO_NAMES: Record<number, Protocol | undefined> = { [IPPROTO_TCP]: 'tcp', [IPPROTO_UDP]: 'udp', [IPPROTO_SCTP]: 'sctp' };

/**
 * One GET_SERVICE reply's SERVICE nest (its attributes: buf[start..end), by default all of buf) as an observed
 * service holding `realServers`.
 */
export function observedServiceOf(buf: Buffer, realServers: ObservedRealServer[], start = 0, end = buf.length): ObservedService {
  const w = 'service';
  const at = offsets(buf, start, end, w);
  const af = at[SvcAttr.AF] ?? -1, proto = at[SvcAttr.PROTOCOL] ?? -1, addr = at[SvcAttr.ADDR] ?? -1, port = at[SvcAttr.PORT] ?? -1;
  const fwmark = at[SvcAttr.FWMARK] ?? -1, sched = at[SvcAttr.SCHED_NAME] ?? -1, flagsAt = at[SvcAttr.FLAGS] ?? -1;
  const timeoutAt = at[SvcAttr.TIMEOUT] ?? -1, netmask = at[SvcAttr.NETMASK] ?? -1, pe = at[SvcAttr.PE_NAME] ?? -1;
  if (af < 0) throw new Error('service: no address family (IPVS_SVC_ATTR_AF)');
  const family = familyOf(u16(buf, sized(buf, af, 2, SvcAttr.AF, w)), w);
  const mark = u32At(buf, fwmark, SvcAttr.FWMARK, w);
  const scheduler = (sched < 0 ? '' : str(buf, sched)) as ServiceSpec['scheduler'];
  let out: ObservedService;
  if (mark !== 0) {
    out = { id: `fwmark:${family}:${mark}`, family, protocol: 'tcp', scheduler, realServers, fwmark: mark };
  } else {
    const protoNum = proto < 0 ? -1 : u16(buf, sized(buf, proto, 2, SvcAttr.PROTOCOL, w));
    const portNum = port < 0 ? -1 : be16(buf, sized(buf, port, 2, SvcAttr.PORT, w));
    if (protoNum < 0 || addr < 0 || portNum < 0) throw new Error('service: neither a fwmark nor protocol+address+port');
    const protocol = PROTO_NAMES[protoNum];
    if (protocol === undefined) throw new Error(`service: unknown protocol ${protoNum}`);
    const address = ipText(buf, addr + 4, u16(buf, addr) - 4, family);
    out = { id: `${protocol}:${family === 6 ? `[${address}]` : address}:${portNum}`, family, protocol, scheduler, realServers, address, port: portNum };
  }
  const flags = flagsAt >= 0 && u16(buf, flagsAt) >= 8 ? u32(buf, flagsAt + 4) : 0;
  const timeout = u32At(buf, timeoutAt, SvcAttr.TIMEOUT, w);
  if (scheduler === 'sh' || scheduler === 'mh') {
    const sf: SchedulerFlag[] = [];
    if (flags & SvcFlag.SCHED1) sf.push(`${scheduler}-fallback`);
    if (flags & SvcFlag.SCHED2) sf.push(`${scheduler}-port`);
    if (sf.length > 0) out.schedulerFlags = sf;
  }
  if (flags & SvcFlag.PERSISTENT) {
    let mask: string;
    if (netmask < 0 || u16(buf, netmask) < 8) mask = family === 4 ? '255.255.255.255' : '128';
    else if (family === 4) mask = `${buf[netmask + 4]}.${buf[netmask + 5]}.${buf[netmask + 6]}.${buf[netmask + 7]}`;
    else mask = String(LITTLE_ENDIAN ? u32(buf, netmask + 4) : buf.readUInt32BE(netmask + 4));
    out.persistence = { timeoutSec: timeout, netmask: mask };
    const engine = pe < 0 ? '' : str(buf, pe);
    if (engine !== '') out.persistence.engine = engine;
  }
  if (flags & SvcFlag.ONEPACKET) out.onePacket = true;
  return out;
}

/**
 * A dumpTable() entry as an observed service: its SERVICE nest, and its GET_DEST replies, each read where its
 * DEST nest lies (no view of it made). Destinations are of the service's family unless they say.
 */
export function readService(service: Buffer, replies: readonly Buffer[]): ObservedService {
  const out = observedServiceOf(service, []);
  for (const r of replies) {
    const at = nestAt(r, CmdAttr.DEST, 'GET_DEST');
    out.realServers.push(observedDestOf(r, out.family, at + 4, at + u16(r, at)));
  }
  return out;
}

/**
 * The native table read (ipvs/native.ts's layout: each SERVICE and DEST nest's attributes, framed) as observed
 * services: the same reading as readService over the transport's replies, from one buffer, no view made. `held(k)`
 * may give the k-th service's form instead (one the kernel holds as desired: heldAs), or null to leave it out (one
 * the caller keeps as its desired spec: view.ts); either way it is not decoded.
 */
export function readPacked(buf: Buffer, held?: (k: number) => ObservedService | null | undefined): ObservedService[] {
  const w = 'native table read';
  const word = (off: number): number => {
    if (off + 4 > buf.length) throw new Error(`${w}: ends at byte ${buf.length}, expected 4 more at ${off}`);
    // Host order, little-endian as every attribute read here (the u16/u32 above).
    return u32(buf, off);
  };
  const blob = (off: number): number => {
    const end = off + 4 + word(off);
    if (end > buf.length) throw new Error(`${w}: a ${word(off)}-byte entry at ${off} runs past the end (${buf.length})`);
    return end;
  };
  const count = word(0);
  const out: ObservedService[] = [];
  let off = 4;
  for (let k = 0; k < count; k++) {
    const svcEnd = blob(off);
    const known = held?.(k);
    const svc = known === undefined ? observedServiceOf(buf, [], off + 4, svcEnd) : known;
    off = (svcEnd + 3) & ~3;
    const dests = word(off);
    off += 4;
    for (let d = 0; d < dests; d++) {
      const end = blob(off);
      if (known === undefined && svc !== null) svc.realServers.push(observedDestOf(buf, svc.family, off + 4, end));
      off = (end + 3) & ~3;
    }
    if (svc !== null) out.push(svc);
  }
  if (off !== buf.length) throw new Error(`${w}: ${buf.length - off} bytes after the last service`);
  return out;
}

/**
 * The observed form of a service the kernel holds exactly as `s` says (the native read's line for it equals
 * reconcile.ts's configText of `s`), made without decoding it. Connection counts are not read (0): the drain reads
 * them only for real servers leaving their service, and a service held as desired has none leaving (and the drain
 * re-reads them before it decides: backend.ts, refreshDrainCandidates).
 */
export function heldAs(s: ServiceSpec): ObservedService {
  const out: ObservedService = { id: s.id, family: s.family, protocol: s.protocol, scheduler: s.scheduler, realServers: [] };
  if (s.address !== undefined) out.address = s.address;
  if (s.port !== undefined) out.port = s.port;
  if (s.fwmark !== undefined) out.fwmark = s.fwmark;
  if (s.schedulerFlags !== undefined && s.schedulerFlags.length > 0) out.schedulerFlags = s.schedulerFlags;
  if (s.persistence !== undefined) out.persistence = s.persistence;
  if (s.onePacket === true) out.onePacket = true;
  // Literals, not spreads: run once per restart this is interpreted, where a spread costs ~10× a literal.
  for (const r of s.realServers) {
    const o: ObservedRealServer = { id: r.id, address: r.address, port: r.port, weight: r.weight, method: r.method, activeConns: 0, inactiveConns: 0, persistConns: 0 };
    if (r.tunnel !== undefined) o.tunnel = r.tunnel;
    if (r.upperThreshold !== undefined) o.upperThreshold = r.upperThreshold;
    if (r.lowerThreshold !== undefined) o.lowerThreshold = r.lowerThreshold;
    out.realServers.push(o);
  }
  return out;
}

/** The offset of the (last) attribute `type` of a reply payload, as codec.ts's replyNest finds it. */
function nestAt(buf: Buffer, type: number, what: string): number {
  let found = -1;
  for (let off = 0, len = 0, end = buf.length; off + 4 <= end; off += (len + 3) & ~3) {
    len = u16(buf, off);
    if (len < 4 || off + len > end) truncated(buf, off, 0, end, what);
    if ((u16(buf, off + 2) & NLA_TYPE_MASK) === type) found = off;
  }
  if (found < 0) throw new Error(`${what}: reply has no attribute ${type}`);
  return found;
}

// The IPv6 persistence prefix length travels in host order (codec.ts, encodeNetmask).
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
