// PROXY protocol headers (HAProxy's spec, versions 1 and 2) that tell a real server who the client was.
// Pure encoders. v1: one text line; v2: a 16-byte binary preamble + addresses.
import { isIPv4 } from 'node:net';

export type ProxyProtocolVersion = 1 | 2;

export interface ProxyEndpoints {
  protocol: 'tcp' | 'udp';
  srcAddress: string;
  srcPort: number;
  dstAddress: string;
  dstPort: number;
}

const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** Node reports IPv4 clients of a dual-stack socket as ::ffff:a.b.c.d; PROXY wants the plain form. */
export function unmapped(address: string): string {
  return address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

export function proxyV1(e: ProxyEndpoints): Buffer {
  const src = unmapped(e.srcAddress);
  const dst = unmapped(e.dstAddress);
  const v4 = isIPv4(src) && isIPv4(dst);
  if (e.protocol !== 'tcp') return Buffer.from('PROXY UNKNOWN\r\n');
  return Buffer.from(`PROXY ${v4 ? 'TCP4' : 'TCP6'} ${src} ${dst} ${e.srcPort} ${e.dstPort}\r\n`);
}

function ipv4Bytes(a: string): number[] {
  return a.split('.').map(Number);
}

function ipv6Bytes(a: string): number[] {
  let addr = unmapped(a);
  if (isIPv4(addr)) addr = `::ffff:${addr}`;
  // Expand "::" and an embedded dotted quad into eight 16-bit groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (tail?.[1] !== undefined) {
    const q = ipv4Bytes(tail[1]);
    addr = addr.slice(0, -tail[1].length) + `${(((q[0] ?? 0) << 8) | (q[1] ?? 0)).toString(16)}:${(((q[2] ?? 0) << 8) | (q[3] ?? 0)).toString(16)}`;
  }
  const [head = '', rest] = addr.split('::');
  const h = head === '' ? [] : head.split(':');
  const r = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? h : [...h, ...Array<string>(8 - h.length - r.length).fill('0'), ...r];
  const out: number[] = [];
  for (const g of groups) {
    const v = parseInt(g, 16);
    out.push(v >> 8, v & 0xff);
  }
  return out;
}

export function proxyV2(e: ProxyEndpoints): Buffer {
  const src = unmapped(e.srcAddress);
  const dst = unmapped(e.dstAddress);
  const v4 = isIPv4(src) && isIPv4(dst);
  const addrs = v4 ? [...ipv4Bytes(src), ...ipv4Bytes(dst)] : [...ipv6Bytes(src), ...ipv6Bytes(dst)];
  const len = addrs.length + 4;
  const buf = Buffer.alloc(16 + len);
  V2_SIGNATURE.copy(buf, 0);
  buf[12] = 0x21; // version 2, command PROXY
  buf[13] = (v4 ? 0x10 : 0x20) | (e.protocol === 'tcp' ? 0x01 : 0x02); // AF_INET/AF_INET6 × STREAM/DGRAM
  buf.writeUInt16BE(len, 14);
  Buffer.from(addrs).copy(buf, 16);
  buf.writeUInt16BE(e.srcPort, 16 + addrs.length);
  buf.writeUInt16BE(e.dstPort, 18 + addrs.length);
  return buf;
}

export function proxyHeader(version: ProxyProtocolVersion, e: ProxyEndpoints): Buffer {
  return version === 1 ? proxyV1(e) : proxyV2(e);
}
