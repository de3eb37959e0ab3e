// Pure codec of the rtnetlink link attributes a VRRP virtual MAC interface needs (no I/O): the nested
// IFLA_LINKINFO of a macvlan, and the reverse (its kind and mode, from a link we find), so an interface left by an earlier run can be recognised and adopted.
import { attr, NLA_TYPE_MASK } from './nlattr.js';

/** include/uapi/linux/if_link.h */
const IFLA_INFO_KIND = 1;
const IFLA_INFO_DATA = 2;
const IFLA_MACVLAN_MODE = 1;
const IFLA_IPVLAN_MODE = 1;
const IFLA_IPVLAN_FLAGS = 2;
const IPVLAN_MODES = ['l2', 'l3', 'l3s'] as const;

export const MACVLAN_MODES = { private: 1, vepa: 2, bridge: 4, passthru: 8, source: 16 } as const;
export type MacvlanMode = keyof typeof MACVLAN_MODES;

/** ipvlan's flags (IPVLAN_F_PRIVATE 1, IPVLAN_F_VEPA 2; none: bridge), keepalived use_ipvlan's last word. */
export const IPVLAN_FLAGS = { bridge: 0, private: 1, vepa: 2 } as const;
export type IpvlanFlags = keyof typeof IPVLAN_FLAGS;

function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v, 0);
  return b;
}

export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0, 0);
  return b;
}

/** The attributes in a buffer of attributes (type without the NESTED / BYTEORDER bits). */
export function parseAttrs(buf: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let off = 0;
  while (off + 4 <= buf.length) {
    const len = buf.readUInt16LE(off);
    const type = buf.readUInt16LE(off + 2) & NLA_TYPE_MASK;
    if (len < 4 || off + len > buf.length) break;
    out.set(type, buf.subarray(off + 4, off + len));
    off += (len + 3) & ~3;
  }
  return out;
}

/** IFLA_LINKINFO's payload for a new macvlan in `mode`. */
export function macvlanLinkInfo(mode: MacvlanMode): Buffer {
  return Buffer.concat([attr(IFLA_INFO_KIND, Buffer.from('macvlan\0')), attr(IFLA_INFO_DATA, attr(IFLA_MACVLAN_MODE, u32(MACVLAN_MODES[mode])))]);
}

/** IFLA_LINKINFO's payload for a new ipvlan in l2 mode (keepalived 2.2.7 makes no other) with `flags`. */
export function ipvlanLinkInfo(flags: IpvlanFlags): Buffer {
  return Buffer.concat([attr(IFLA_INFO_KIND, Buffer.from('ipvlan\0')), attr(IFLA_INFO_DATA, Buffer.concat([attr(IFLA_IPVLAN_MODE, u16(0)), attr(IFLA_IPVLAN_FLAGS, u16(IPVLAN_FLAGS[flags]))]))]);
}

export interface LinkKind {
  kind: string;
  /** The macvlan mode's name, for a macvlan. */
  macvlanMode?: MacvlanMode | 'unknown';
  /** The ipvlan mode and flags, for an ipvlan. */
  ipvlanMode?: (typeof IPVLAN_MODES)[number] | 'unknown';
  ipvlanFlags?: IpvlanFlags | 'unknown';
}

/** Reads IFLA_LINKINFO's payload; null when it names no kind (a plain device). */
export function decodeLinkInfo(payload: Buffer | undefined): LinkKind | null {
  if (payload === undefined) return null;
  const a = parseAttrs(payload);
  const kindRaw = a.get(IFLA_INFO_KIND);
  if (kindRaw === undefined) return null;
  const kind = kindRaw.toString('latin1').replace(/\0+$/, '');
  const out: LinkKind = { kind };
  if (kind === 'macvlan') {
    const mode = parseAttrs(a.get(IFLA_INFO_DATA) ?? Buffer.alloc(0)).get(IFLA_MACVLAN_MODE);
    const v = mode !== undefined && mode.length >= 4 ? mode.readUInt32LE(0) : 0;
    out.macvlanMode = (Object.entries(MACVLAN_MODES).find(([, n]) => n === v)?.[0] as MacvlanMode | undefined) ?? 'unknown';
  }
  if (kind === 'ipvlan') {
    const data = parseAttrs(a.get(IFLA_INFO_DATA) ?? Buffer.alloc(0));
    const mode = data.get(IFLA_IPVLAN_MODE);
    const flags = data.get(IFLA_IPVLAN_FLAGS);
    out.ipvlanMode = mode !== undefined && mode.length >= 2 ? (IPVLAN_MODES[mode.readUInt16LE(0)] ?? 'unknown') : 'unknown';
    const f = flags !== undefined && flags.length >= 2 ? flags.readUInt16LE(0) : 0;
    out.ipvlanFlags = (Object.entries(IPVLAN_FLAGS).find(([, n]) => n === f)?.[0] as IpvlanFlags | undefined) ?? 'unknown';
  }
  return out;
}

/** RFC 5798 §7.3: 00-00-5E-00-01-{VRID} for IPv4, 00-00-5E-00-02-{VRID} for IPv6. */
export function virtualMac(vrid: number, family: 4 | 6): Buffer {
  if (!Number.isInteger(vrid) || vrid < 1 || vrid > 255) throw new Error(`VRID ${vrid} not in 1..255`);
  return Buffer.from([0x00, 0x00, 0x5e, 0x00, family === 4 ? 0x01 : 0x02, vrid]);
}

export function formatMac(mac: Buffer): string {
  return [...mac].map((b) => b.toString(16).padStart(2, '0')).join(':');
}
