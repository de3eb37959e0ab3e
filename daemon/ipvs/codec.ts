// Typed IPVS objects ↔ generic-netlink attributes. Pure: no sockets, no clock.
// The wire forms follow the kernel's ip_vs_genl_parse_* / ip_vs_genl_fill_* (include/uapi/linux/ip_vs.h).
import { endianness } from 'node:os';
import { bytesToIp, ipToBytes } from './addr.js';
import {
  AF_INET, AF_INET6, CmdAttr, DaemonAttr, DestAttr, FWD_MASK, Fwd, InfoAttr, IPPROTO_SCTP, IPPROTO_TCP, IPPROTO_UDP,
  NAME_MAXLEN, StatsAttr, SvcAttr, SyncState, TunType,
} from './constants.js';
import { Attrs, attr, be16, nest, NLA_F_NESTED, NLA_TYPE_MASK, str, u16, u32, u64, u8 } from '../net/nlattr.js';

export type Family = 4 | 6;
export type Protocol = 'tcp' | 'udp' | 'sctp';
export type FwdMethod = 'nat' | 'dr' | 'tun' | 'local' | 'bypass';
export type TunnelType = 'ipip' | 'gue' | 'gre';
export type SyncRole = 'master' | 'backup';

/** What identifies a virtual server: protocol + address + port, or a firewall mark. */
export type ServiceKey =
  | { family: Family; protocol: Protocol; address: string; port: number; fwmark?: undefined }
  | { family: Family; fwmark: number; protocol?: undefined; address?: undefined; port?: undefined };

/** IPVS_STATS_ATTR_*: the kernel's counters and its rate estimates (per second). */
export interface Stats {
  conns: number;
  inPackets: number;
  outPackets: number;
  inBytes: number;
  outBytes: number;
  cps: number;
  inPps: number;
  outPps: number;
  inBps: number;
  outBps: number;
}

/** A virtual server as the kernel holds it. */
export interface IpvsService {
  key: ServiceKey;
  scheduler: string;
  /** IP_VS_SVC_F_* bits (PERSISTENT, ONEPACKET, SCHED1..3; HASHED is set by the kernel on read). */
  flags: number;
  /** Persistence timeout in seconds (0 = not persistent). */
  timeout: number;
  /** IPv4: dotted mask; IPv6: prefix length (1..128). */
  netmask: string;
  peName?: string;
  /** Read-only, present in replies. */
  stats?: Stats;
  stats64?: Stats;
}

export interface IpvsDest {
  family: Family;
  address: string;
  port: number;
  fwd: FwdMethod;
  weight: number;
  upperThreshold: number;
  lowerThreshold: number;
  tunType?: TunnelType;
  /** UDP port of a gue tunnel. */
  tunPort?: number;
  /** TunFlag bits: CSUM 1, REMCSUM 2. */
  tunFlags?: number;
  /** Read-only, present in replies. */
  activeConns?: number;
  inactiveConns?: number;
  persistConns?: number;
  stats?: Stats;
  stats64?: Stats;
}

export interface IpvsDaemon {
  role: SyncRole;
  ifname: string;
  syncId: number;
  /** Maximum sync message length (0 = kernel default from the interface MTU). */
  syncMaxLen?: number;
  /** IPv4 or IPv6 multicast group. */
  mcastGroup?: string;
  mcastPort?: number;
  mcastTtl?: number;
}

export interface IpvsTimeouts {
  tcp: number;
  tcpFin: number;
  udp: number;
}

export interface IpvsInfo {
  /** "1.2.1" from IP_VS_VERSION_CODE. */
  version: string;
  versionCode: number;
  connTabSize: number;
}

const PROTO_NUM: Record<Protocol, number> = { tcp: IPPROTO_TCP, udp: IPPROTO_UDP, sctp: IPPROTO_SCTP };
const FWD_NUM: Record<FwdMethod, number> = { nat: Fwd.MASQ, local: Fwd.LOCALNODE, tun: Fwd.TUNNEL, dr: Fwd.DROUTE, bypass: Fwd.BYPASS };
const TUN_NUM: Record<TunnelType, number> = { ipip: TunType.IPIP, gue: TunType.GUE, gre: TunType.GRE };

function invert<K extends string>(m: Record<K, number>): Map<number, K> {
  return new Map(Object.entries(m).map(([k, v]) => [v as number, k as K]));
}
const PROTO_NAME = invert(PROTO_NUM);
const FWD_NAME = invert(FWD_NUM);
const TUN_NAME = invert(TUN_NUM);

export const afOf = (f: Family): number => (f === 4 ? AF_INET : AF_INET6);
function familyOf(af: number, what: string): Family {
  if (af === AF_INET) return 4;
  if (af === AF_INET6) return 6;
  throw new Error(`${what}: unknown address family ${af}`);
}

/** The kernel stores addresses in a 16-byte union nf_inet_addr and sends all 16 bytes back. */
function addrBytes(address: string): Buffer {
  const out = Buffer.alloc(16);
  ipToBytes(address).copy(out);
  return out;
}

function checkName(kind: string, name: string): void {
  if (Buffer.byteLength(name) >= NAME_MAXLEN) throw new Error(`${kind} "${name}" is longer than ${NAME_MAXLEN - 1} bytes`);
}

// IPv4 netmasks travel as the mask's bytes (be32); IPv6 ones as the prefix length in host order.
function encodeNetmask(family: Family, netmask: string): Buffer {
  const b = Buffer.alloc(4);
  if (family === 4) {
    ipToBytes(netmask).copy(b);
  } else {
    const plen = Number(netmask);
    if (!Number.isInteger(plen) || plen < 1 || plen > 128) throw new Error(`IPv6 persistence netmask must be a prefix length 1..128, got "${netmask}"`);
    if (endianness() === 'LE') b.writeUInt32LE(plen);
    else b.writeUInt32BE(plen);
  }
  return b;
}
function decodeNetmask(family: Family, b: Buffer): string {
  if (family === 4) return bytesToIp(b, 4);
  return String(endianness() === 'LE' ? b.readUInt32LE(0) : b.readUInt32BE(0));
}

export function defaultNetmask(family: Family): string {
  return family === 4 ? '255.255.255.255' : '128';
}

/** A service's canonical text: "tcp:10.0.0.1:80", "udp:[fd00::1]:53", "fwmark:4:7". */
export function serviceKeyText(k: ServiceKey): string {
  if (k.fwmark !== undefined) return `fwmark:${k.family}:${k.fwmark}`;
  return `${k.protocol}:${k.family === 6 ? `[${k.address}]` : k.address}:${k.port}`;
}
export function destText(d: { family: Family; address: string; port: number }): string {
  return d.family === 6 ? `[${d.address}]:${d.port}` : `${d.address}:${d.port}`;
}

// ---- service ------------------------------------------------------------------------------------

/** SERVICE nest contents for the key only (DEL_SERVICE, GET_SERVICE, and the service of a DEST command). */
export function encodeServiceKey(k: ServiceKey): Buffer[] {
  const out = [u16(SvcAttr.AF, afOf(k.family))];
  if (k.fwmark !== undefined) {
    out.push(u32(SvcAttr.FWMARK, k.fwmark));
  } else {
    out.push(u16(SvcAttr.PROTOCOL, PROTO_NUM[k.protocol]), attr(SvcAttr.ADDR, addrBytes(k.address)), be16(SvcAttr.PORT, k.port));
  }
  return out;
}

/** SERVICE nest contents for a full entry (NEW_SERVICE, SET_SERVICE). */
export function encodeService(s: IpvsService): Buffer[] {
  checkName('scheduler', s.scheduler);
  const flags = Buffer.alloc(8);
  flags.writeUInt32LE(s.flags >>> 0, 0);
  flags.writeUInt32LE(0xffffffff, 4); // mask: every bit is ours to set
  const out = [
    ...encodeServiceKey(s.key),
    str(SvcAttr.SCHED_NAME, s.scheduler),
    attr(SvcAttr.FLAGS, flags),
    u32(SvcAttr.TIMEOUT, s.timeout),
    attr(SvcAttr.NETMASK, encodeNetmask(s.key.family, s.netmask)),
  ];
  if (s.peName !== undefined) {
    checkName('persistence engine', s.peName);
    out.push(str(SvcAttr.PE_NAME, s.peName));
  }
  if (s.stats !== undefined) out.push(nest(SvcAttr.STATS, encodeStats(s.stats, false)));
  if (s.stats64 !== undefined) out.push(nest(SvcAttr.STATS64, encodeStats(s.stats64, true)));
  return out;
}

/** `stats: false` skips the counters (a reconcile reads only configuration: most of a reply is counters). */
export function decodeService(buf: Buffer, stats = true): IpvsService {
  const w = 'service';
  const a = Attrs.parse(buf, w);
  const af = a.u16(SvcAttr.AF, w);
  if (af === undefined) throw new Error('service: no address family (IPVS_SVC_ATTR_AF)');
  const family = familyOf(af, w);
  const fwmark = a.u32(SvcAttr.FWMARK, w);
  let key: ServiceKey;
  if (fwmark !== undefined && fwmark !== 0) {
    key = { family, fwmark };
  } else {
    const proto = a.u16(SvcAttr.PROTOCOL, w);
    const addr = a.raw(SvcAttr.ADDR);
    const port = a.be16(SvcAttr.PORT, w);
    if (proto === undefined || addr === undefined || port === undefined) throw new Error('service: neither a fwmark nor protocol+address+port');
    const protocol = PROTO_NAME.get(proto);
    if (protocol === undefined) throw new Error(`service: unknown protocol ${proto}`);
    key = { family, protocol, address: bytesToIp(addr, family), port };
  }
  const flagsRaw = a.raw(SvcAttr.FLAGS);
  const netmask = a.raw(SvcAttr.NETMASK);
  const s: IpvsService = {
    key,
    scheduler: a.str(SvcAttr.SCHED_NAME) ?? '',
    flags: flagsRaw !== undefined && flagsRaw.length >= 4 ? flagsRaw.readUInt32LE(0) : 0,
    timeout: a.u32(SvcAttr.TIMEOUT, w) ?? 0,
    netmask: netmask !== undefined && netmask.length >= 4 ? decodeNetmask(family, netmask) : defaultNetmask(family),
  };
  const pe = a.str(SvcAttr.PE_NAME);
  if (pe !== undefined) s.peName = pe;
  if (!stats) return s;
  const st = a.nested(SvcAttr.STATS, 'service stats');
  if (st !== undefined) s.stats = decodeStats(st, false);
  const st64 = a.nested(SvcAttr.STATS64, 'service stats64');
  if (st64 !== undefined) s.stats64 = decodeStats(st64, true);
  return s;
}

// ---- destination --------------------------------------------------------------------------------

/** DEST nest contents; `full` adds what NEW_DEST/SET_DEST need (DEL_DEST needs only address+port). */
export function encodeDest(d: IpvsDest, full = true): Buffer[] {
  const out = [attr(DestAttr.ADDR, addrBytes(d.address)), be16(DestAttr.PORT, d.port), u16(DestAttr.ADDR_FAMILY, afOf(d.family))];
  if (!full) return out;
  out.push(
    u32(DestAttr.FWD_METHOD, FWD_NUM[d.fwd]),
    u32(DestAttr.WEIGHT, d.weight),
    u32(DestAttr.U_THRESH, d.upperThreshold),
    u32(DestAttr.L_THRESH, d.lowerThreshold),
  );
  if (d.tunType !== undefined) out.push(u8(DestAttr.TUN_TYPE, TUN_NUM[d.tunType]));
  if (d.tunPort !== undefined) out.push(be16(DestAttr.TUN_PORT, d.tunPort));
  if (d.tunFlags !== undefined) out.push(u16(DestAttr.TUN_FLAGS, d.tunFlags));
  if (d.activeConns !== undefined) out.push(u32(DestAttr.ACTIVE_CONNS, d.activeConns));
  if (d.inactiveConns !== undefined) out.push(u32(DestAttr.INACT_CONNS, d.inactiveConns));
  if (d.persistConns !== undefined) out.push(u32(DestAttr.PERSIST_CONNS, d.persistConns));
  if (d.stats !== undefined) out.push(nest(DestAttr.STATS, encodeStats(d.stats, false)));
  if (d.stats64 !== undefined) out.push(nest(DestAttr.STATS64, encodeStats(d.stats64, true)));
  return out;
}

/** `serviceFamily` is used when the reply has no ADDR_FAMILY (kernels before 4.x); `stats: false` as decodeService. */
export function decodeDest(buf: Buffer, serviceFamily: Family, stats = true): IpvsDest {
  const w = 'destination';
  const a = Attrs.parse(buf, w);
  const af = a.u16(DestAttr.ADDR_FAMILY, w);
  const family = af === undefined ? serviceFamily : familyOf(af, w);
  const addr = a.raw(DestAttr.ADDR);
  const port = a.be16(DestAttr.PORT, w);
  if (addr === undefined || port === undefined) throw new Error('destination: no address or port');
  const fwdNum = (a.u32(DestAttr.FWD_METHOD, w) ?? 0) & FWD_MASK;
  const fwd = FWD_NAME.get(fwdNum);
  if (fwd === undefined) throw new Error(`destination ${bytesToIp(addr, family)}: unknown forwarding method ${fwdNum}`);
  const d: IpvsDest = {
    family,
    address: bytesToIp(addr, family),
    port,
    fwd,
    weight: a.u32(DestAttr.WEIGHT, w) ?? 0,
    upperThreshold: a.u32(DestAttr.U_THRESH, w) ?? 0,
    lowerThreshold: a.u32(DestAttr.L_THRESH, w) ?? 0,
  };
  const tt = a.u8(DestAttr.TUN_TYPE, w);
  if (tt !== undefined) {
    const name = TUN_NAME.get(tt);
    if (name === undefined) throw new Error(`destination ${d.address}: unknown tunnel type ${tt}`);
    d.tunType = name;
  }
  const tp = a.be16(DestAttr.TUN_PORT, w);
  if (tp !== undefined) d.tunPort = tp;
  const tf = a.u16(DestAttr.TUN_FLAGS, w);
  if (tf !== undefined) d.tunFlags = tf;
  const ac = a.u32(DestAttr.ACTIVE_CONNS, w);
  if (ac !== undefined) d.activeConns = ac;
  const ic = a.u32(DestAttr.INACT_CONNS, w);
  if (ic !== undefined) d.inactiveConns = ic;
  const pc = a.u32(DestAttr.PERSIST_CONNS, w);
  if (pc !== undefined) d.persistConns = pc;
  if (!stats) return d;
  const st = a.nested(DestAttr.STATS, 'destination stats');
  if (st !== undefined) d.stats = decodeStats(st, false);
  const st64 = a.nested(DestAttr.STATS64, 'destination stats64');
  if (st64 !== undefined) d.stats64 = decodeStats(st64, true);
  return d;
}

// ---- stats --------------------------------------------------------------------------------------

const STAT_FIELDS: [keyof Stats, number, boolean][] = [
  // [field, attribute, is u64 even in the 32-bit STATS nest]
  ['conns', StatsAttr.CONNS, false],
  ['inPackets', StatsAttr.INPKTS, false],
  ['outPackets', StatsAttr.OUTPKTS, false],
  ['inBytes', StatsAttr.INBYTES, true],
  ['outBytes', StatsAttr.OUTBYTES, true],
  ['cps', StatsAttr.CPS, false],
  ['inPps', StatsAttr.INPPS, false],
  ['outPps', StatsAttr.OUTPPS, false],
  ['inBps', StatsAttr.INBPS, false],
  ['outBps', StatsAttr.OUTBPS, false],
];

export function encodeStats(s: Stats, is64: boolean): Buffer[] {
  return STAT_FIELDS.map(([f, t, wide]) => (is64 || wide ? u64(t, s[f]) : u32(t, s[f])));
}

export function decodeStats(a: Attrs, is64: boolean): Stats {
  const s = {} as Stats;
  for (const [f, t, wide] of STAT_FIELDS) s[f] = (is64 || wide ? a.u64(t, 'stats') : a.u32(t, 'stats')) ?? 0;
  return s;
}

// ---- sync daemon --------------------------------------------------------------------------------

export function encodeDaemon(d: IpvsDaemon): Buffer[] {
  checkName('interface', d.ifname);
  const out = [u32(DaemonAttr.STATE, d.role === 'master' ? SyncState.MASTER : SyncState.BACKUP), str(DaemonAttr.MCAST_IFN, d.ifname), u32(DaemonAttr.SYNC_ID, d.syncId)];
  if (d.syncMaxLen !== undefined) out.push(u16(DaemonAttr.SYNC_MAXLEN, d.syncMaxLen));
  if (d.mcastGroup !== undefined) {
    const g = ipToBytes(d.mcastGroup);
    out.push(attr(g.length === 4 ? DaemonAttr.MCAST_GROUP : DaemonAttr.MCAST_GROUP6, g));
  }
  if (d.mcastPort !== undefined) out.push(u16(DaemonAttr.MCAST_PORT, d.mcastPort));
  if (d.mcastTtl !== undefined) out.push(u8(DaemonAttr.MCAST_TTL, d.mcastTtl));
  return out;
}

/** DAEMON nest for DEL_DAEMON: only the state says which daemon stops. */
export function encodeDaemonStop(role: SyncRole): Buffer[] {
  return [u32(DaemonAttr.STATE, role === 'master' ? SyncState.MASTER : SyncState.BACKUP)];
}

export function decodeDaemon(buf: Buffer): IpvsDaemon {
  const w = 'sync daemon';
  const a = Attrs.parse(buf, w);
  const state = a.u32(DaemonAttr.STATE, w);
  if (state !== SyncState.MASTER && state !== SyncState.BACKUP) throw new Error(`sync daemon: unknown state ${String(state)}`);
  const d: IpvsDaemon = {
    role: state === SyncState.MASTER ? 'master' : 'backup',
    ifname: a.str(DaemonAttr.MCAST_IFN) ?? '',
    syncId: a.u32(DaemonAttr.SYNC_ID, w) ?? 0,
  };
  const ml = a.u16(DaemonAttr.SYNC_MAXLEN, w);
  if (ml !== undefined) d.syncMaxLen = ml;
  const g4 = a.raw(DaemonAttr.MCAST_GROUP);
  const g6 = a.raw(DaemonAttr.MCAST_GROUP6);
  if (g6 !== undefined) d.mcastGroup = bytesToIp(g6, 6);
  else if (g4 !== undefined) d.mcastGroup = bytesToIp(g4, 4);
  const port = a.u16(DaemonAttr.MCAST_PORT, w);
  if (port !== undefined) d.mcastPort = port;
  const ttl = a.u8(DaemonAttr.MCAST_TTL, w);
  if (ttl !== undefined) d.mcastTtl = ttl;
  return d;
}

// ---- timeouts and info (top-level attributes) ---------------------------------------------------

export function encodeTimeouts(t: Partial<IpvsTimeouts>): Buffer[] {
  const out: Buffer[] = [];
  if (t.tcp !== undefined) out.push(u32(CmdAttr.TIMEOUT_TCP, t.tcp));
  if (t.tcpFin !== undefined) out.push(u32(CmdAttr.TIMEOUT_TCP_FIN, t.tcpFin));
  if (t.udp !== undefined) out.push(u32(CmdAttr.TIMEOUT_UDP, t.udp));
  return out;
}

export function decodeTimeouts(buf: Buffer): IpvsTimeouts {
  const a = Attrs.parse(buf, 'timeouts');
  return {
    tcp: a.u32(CmdAttr.TIMEOUT_TCP, 'timeouts') ?? 0,
    tcpFin: a.u32(CmdAttr.TIMEOUT_TCP_FIN, 'timeouts') ?? 0,
    udp: a.u32(CmdAttr.TIMEOUT_UDP, 'timeouts') ?? 0,
  };
}

export function decodeInfo(buf: Buffer): IpvsInfo {
  const a = Attrs.parse(buf, 'info');
  const code = a.u32(InfoAttr.VERSION, 'info') ?? 0;
  return {
    versionCode: code,
    version: `${(code >> 16) & 0xff}.${(code >> 8) & 0xff}.${code & 0xff}`,
    connTabSize: a.u32(InfoAttr.CONN_TAB_SIZE, 'info') ?? 0,
  };
}

export function encodeInfo(i: IpvsInfo): Buffer[] {
  return [u32(InfoAttr.VERSION, i.versionCode), u32(InfoAttr.CONN_TAB_SIZE, i.connTabSize)];
}

// ---- command payloads (the attributes after the genl header) ------------------------------------

export const servicePayload = (s: IpvsService): Buffer => nest(CmdAttr.SERVICE, encodeService(s));
export const serviceKeyPayload = (k: ServiceKey): Buffer => nest(CmdAttr.SERVICE, encodeServiceKey(k));
export const destPayload = (k: ServiceKey, d: IpvsDest, full = true): Buffer =>
  Buffer.concat([nest(CmdAttr.SERVICE, encodeServiceKey(k)), nest(CmdAttr.DEST, encodeDest(d, full))]);
export const daemonPayload = (d: IpvsDaemon): Buffer => nest(CmdAttr.DAEMON, encodeDaemon(d));
export const daemonStopPayload = (role: SyncRole): Buffer => nest(CmdAttr.DAEMON, encodeDaemonStop(role));

/** The nested SERVICE / DEST / DAEMON object out of a reply payload (the last one, as Attrs has it); one scan, no table. */
export function replyNest(payload: Buffer, type: number, what: string): Buffer {
  let found: Buffer | undefined;
  for (let off = 0; off + 4 <= payload.length; ) {
    const len = payload.readUInt16LE(off);
    const t = payload.readUInt16LE(off + 2) & NLA_TYPE_MASK;
    if (len < 4 || off + len > payload.length) throw new Error(`${what}: attribute ${t} at offset ${off} has length ${len}, only ${payload.length - off} bytes left`);
    if (t === type) found = payload.subarray(off + 4, off + len);
    off += (len + 3) & ~3;
  }
  if (found === undefined) throw new Error(`${what}: reply has no attribute ${type}`);
  return found;
}

/** AF, PROTOCOL, ADDR, PORT, FWMARK: the attributes that name a service (SvcAttr 1–5). */
const isKeyAttr = (type: number): boolean => type >= SvcAttr.AF && type <= SvcAttr.FWMARK;

/**
 * The payload of a command naming the service whose SERVICE nest (as a dump reply has it) is `svc`: its key
 * attributes copied as they are, so a table read asks for each service's destinations without decoding the
 * service and encoding its key again.
 */
export function serviceKeyPayloadOf(svc: Buffer): Buffer {
  let size = 4;
  for (let off = 0, len = 0; off + 4 <= svc.length; off += (len + 3) & ~3) {
    len = (svc[off] ?? 0) | ((svc[off + 1] ?? 0) << 8);
    if (len < 4 || off + len > svc.length) break;
    if (isKeyAttr(((svc[off + 2] ?? 0) | ((svc[off + 3] ?? 0) << 8)) & NLA_TYPE_MASK)) size += (len + 3) & ~3;
  }
  const out = Buffer.alloc(size);
  out[0] = size & 0xff;
  out[1] = size >> 8;
  out[2] = CmdAttr.SERVICE;
  out[3] = NLA_F_NESTED >> 8;
  let at = 4;
  for (let off = 0, len = 0; off + 4 <= svc.length; off += (len + 3) & ~3) {
    len = (svc[off] ?? 0) | ((svc[off + 1] ?? 0) << 8);
    if (len < 4 || off + len > svc.length) break;
    if (!isKeyAttr(((svc[off + 2] ?? 0) | ((svc[off + 3] ?? 0) << 8)) & NLA_TYPE_MASK)) continue;
    svc.copy(out, at, off, off + len);
    at += (len + 3) & ~3;
  }
  return out;
}
