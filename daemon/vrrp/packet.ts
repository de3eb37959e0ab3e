// VRRP advertisement codec: RFC 3768 (v2, IPv4) and RFC 5798 (v3, IPv4 and IPv6). Pure: bytes in,
// typed values or a typed error out. The IPv4/IPv6 header itself is not part of a VRRP message,
// but the v3 checksum covers a pseudo-header made of it, so src/dst are inputs here.
import type { Family } from '../net/addr.js';
import { splitIPv4 } from '../net/ipv4-header.js';

export const VRRP_PROTOCOL = 112;
export const VRRP_MCAST_V4 = '224.0.0.18';
export const VRRP_MCAST_V6 = 'ff02::12';
export const VRRP_TTL = 255;

/** v2 authentication types (RFC 3768 §5.3.6); keepalived implements none and PASS (AH is gone). */
export const AUTH_NONE = 0;
export const AUTH_PASS = 1;
export const AUTH_AH = 2;

export interface Advert {
  version: 2 | 3;
  vrid: number;
  priority: number;
  /** Advertisement interval in centiseconds. v2 carries whole seconds, so it is a multiple of 100. */
  intervalCs: number;
  /** Virtual addresses as raw bytes, 4 or 16 each. */
  addresses: Buffer[];
  /** v2 only: 0 none, 1 PASS. */
  authType?: number;
  /** v2 PASS: up to 8 bytes, NUL padded on the wire. */
  password?: string;
}

export type DecodeReason =
  | 'too-short'
  | 'version'
  | 'type'
  | 'length'
  | 'checksum'
  | 'family'
  | 'auth-type'
  | 'auth'
  | 'interval';

export class DecodeError extends Error {
  constructor(
    readonly reason: DecodeReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

export interface Endpoints {
  family: Family;
  /** Source and destination of the IP packet, as bytes (4 or 16). Needed by the v3 checksum. */
  src: Uint8Array;
  dst: Uint8Array;
}

export type DecodeResult = { ok: true; advert: Advert } | { ok: false; error: DecodeError };

const V2_HEADER = 8;
const V2_AUTH = 8;
const V3_HEADER = 8;

/** RFC 1071 one's-complement sum of 16-bit words, folded, not yet complemented. */
function sum16(buf: Uint8Array, initial = 0): number {
  let s = initial;
  const n = buf.length;
  for (let i = 0; i + 1 < n; i += 2) s += ((buf[i] ?? 0) << 8) | (buf[i + 1] ?? 0);
  if (n % 2 === 1) s += (buf[n - 1] ?? 0) << 8;
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return s;
}

function pseudoHeaderSum(ep: Endpoints, length: number): number {
  let s = sum16(ep.src) + sum16(ep.dst);
  if (ep.family === 4) {
    s += VRRP_PROTOCOL + length; // zero byte, protocol, 16-bit length
  } else {
    s += (length >>> 16) + (length & 0xffff) + VRRP_PROTOCOL; // 32-bit length, 3 zero bytes, next header
  }
  return s;
}

/** The checksum field value for `msg` (whose checksum bytes must be zero). */
export function vrrpChecksum(msg: Uint8Array, version: 2 | 3, ep: Endpoints | null): number {
  const initial = version === 3 && ep !== null ? pseudoHeaderSum(ep, msg.length) : 0;
  return ~sum16(msg, initial) & 0xffff;
}

export function encodeAdvert(a: Advert, ep: Endpoints): Buffer {
  const alen = ep.family === 4 ? 4 : 16;
  if (a.version === 2 && ep.family !== 4) throw new RangeError('VRRPv2 is IPv4 only');
  if (a.vrid < 1 || a.vrid > 255) throw new RangeError(`VRID ${a.vrid} not in 1..255`);
  if (a.priority < 0 || a.priority > 255) throw new RangeError(`priority ${a.priority} not in 0..255`);
  if (a.addresses.length > 255) throw new RangeError('more than 255 addresses');
  for (const addr of a.addresses) {
    if (addr.length !== alen) throw new RangeError(`address of ${addr.length} bytes in an IPv${ep.family} advert`);
  }
  const body = a.addresses.length * alen;
  const len = (a.version === 2 ? V2_HEADER + V2_AUTH : V3_HEADER) + body;
  const msg = Buffer.alloc(len);
  msg[0] = (a.version << 4) | 1; // type 1 = ADVERTISEMENT
  msg[1] = a.vrid;
  msg[2] = a.priority;
  msg[3] = a.addresses.length;
  if (a.version === 2) {
    const seconds = Math.round(a.intervalCs / 100);
    if (seconds < 1 || seconds > 255) throw new RangeError(`v2 interval ${a.intervalCs}cs not 1..255 s`);
    msg[4] = a.authType ?? AUTH_NONE;
    msg[5] = seconds;
    if ((a.authType ?? AUTH_NONE) === AUTH_PASS) {
      const pw = Buffer.from(a.password ?? '', 'utf8');
      if (pw.length > V2_AUTH) throw new RangeError('PASS password longer than 8 bytes');
      pw.copy(msg, V2_HEADER + body);
    }
  } else {
    if (a.intervalCs < 1 || a.intervalCs > 0xfff) throw new RangeError(`v3 interval ${a.intervalCs}cs not 1..4095`);
    msg.writeUInt16BE(a.intervalCs & 0xfff, 4); // 4 reserved bits stay 0
  }
  let off = a.version === 2 ? V2_HEADER : V3_HEADER;
  for (const addr of a.addresses) {
    Buffer.from(addr).copy(msg, off);
    off += alen;
  }
  msg.writeUInt16BE(vrrpChecksum(msg, a.version, a.version === 3 ? ep : null), 6);
  return msg;
}

function fail(reason: DecodeReason, detail: string): DecodeResult {
  return { ok: false, error: new DecodeError(reason, detail) };
}

/**
 * Decodes one VRRP message (the IP payload). Checks what the message alone can tell: version, type,
 * length against the address count, checksum, auth type. Instance checks (VRID, TTL, interval,
 * password, address list) are the receiver's (see validate.ts).
 */
export function decodeAdvert(msg: Uint8Array, ep: Endpoints): DecodeResult {
  if (msg.length < 8) return fail('too-short', `${msg.length} bytes`);
  const b0 = msg[0] ?? 0;
  const version = b0 >>> 4;
  if (version !== 2 && version !== 3) return fail('version', `version ${version}`);
  if ((b0 & 0x0f) !== 1) return fail('type', `type ${b0 & 0x0f}`);
  if (version === 2 && ep.family !== 4) return fail('family', 'VRRPv2 over IPv6');
  const count = msg[3] ?? 0;
  const alen = ep.family === 4 ? 4 : 16;
  const expected = (version === 2 ? V2_HEADER + V2_AUTH : V3_HEADER) + count * alen;
  if (msg.length < expected) return fail('length', `${msg.length} bytes for ${count} addresses, need ${expected}`);
  // Trailing bytes beyond the addresses (and auth data) are not covered by what we check; RFC 5798
  // says the length must match, keepalived accepts extra padding. Checksum covers what was sent.
  const body = Buffer.from(msg.buffer, msg.byteOffset, msg.length);
  const sum = version === 3 ? pseudoHeaderSum(ep, body.length) : 0;
  if ((~sum16(body, sum) & 0xffff) !== 0) {
    return fail('checksum', `bad VRRPv${version} checksum 0x${body.readUInt16BE(6).toString(16).padStart(4, '0')}`);
  }
  const addresses: Buffer[] = [];
  const start = version === 2 ? V2_HEADER : V3_HEADER;
  for (let i = 0; i < count; i++) addresses.push(Buffer.from(body.subarray(start + i * alen, start + (i + 1) * alen)));
  const advert: Advert = {
    version,
    vrid: msg[1] ?? 0,
    priority: msg[2] ?? 0,
    intervalCs: version === 2 ? (msg[5] ?? 0) * 100 : body.readUInt16BE(4) & 0xfff,
    addresses,
  };
  if (advert.intervalCs === 0) return fail('interval', 'advertisement interval 0');
  if (version === 2) {
    const authType = msg[4] ?? 0;
    if (authType !== AUTH_NONE && authType !== AUTH_PASS) return fail('auth-type', `auth type ${authType} not supported`);
    advert.authType = authType;
    if (authType === AUTH_PASS) {
      const raw = body.subarray(start + count * alen, start + count * alen + V2_AUTH);
      const end = raw.indexOf(0);
      advert.password = raw.subarray(0, end < 0 ? raw.length : end).toString('utf8');
    }
  }
  return { ok: true, advert };
}

export interface IpPacket {
  family: Family;
  src: Buffer;
  dst: Buffer;
  ttl: number;
  protocol: number;
  payload: Buffer;
}

/** Splits an IPv4 datagram as a raw socket hands it over (header included). */
export function parseIPv4Packet(pkt: Uint8Array): { ok: true; packet: IpPacket } | { ok: false; error: DecodeError } {
  const s = splitIPv4(Buffer.from(pkt.buffer, pkt.byteOffset, pkt.length));
  if (!s.ok) return { ok: false, error: new DecodeError(s.why, s.detail) };
  const p = s.parts;
  return { ok: true, packet: { family: 4, ttl: p.ttl, protocol: p.protocol, src: Buffer.from(p.src), dst: Buffer.from(p.dst), payload: Buffer.from(p.payload) } };
}
