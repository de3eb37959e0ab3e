// IP address text ⇄ bytes, without I/O. VRRP carries addresses as raw bytes and compares them
// numerically (equal-priority tie-break), so the engine works on Buffers and logs canonical text.
import { isIPv4, isIPv6 } from 'node:net';

export type Family = 4 | 6;

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopback(address: string): boolean {
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || (isIPv4(a) && a.startsWith('127.'));
}

export function familyOf(text: string): Family | null {
  if (isIPv4(text)) return 4;
  if (isIPv6(text)) return 6;
  return null;
}

export function parseIPv4(text: string): Buffer {
  if (!isIPv4(text)) throw new Error(`not an IPv4 address: ${text}`);
  return Buffer.from(text.split('.').map(Number));
}

export function parseIPv6(text: string): Buffer {
  if (!isIPv6(text)) throw new Error(`not an IPv6 address: ${text}`);
  let s = text.split('%')[0] ?? text;
  const out = Buffer.alloc(16);
  // An embedded dotted quad (::ffff:1.2.3.4) becomes two hex groups first.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted?.[1] !== undefined) {
    const b = parseIPv4(dotted[1]);
    s = s.slice(0, dotted.index) + `${b.readUInt16BE(0).toString(16)}:${b.readUInt16BE(2).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? (s.split('::') as [string, string]) : [s, undefined];
  const hg = head === '' ? [] : head.split(':');
  const tg = tail === undefined || tail === '' ? [] : tail.split(':');
  hg.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  tg.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), 16 - (tg.length - i) * 2));
  return out;
}

export function parseIP(text: string): Buffer {
  return familyOf(text) === 6 ? parseIPv6(text) : parseIPv4(text);
}

export function formatIP(b: Uint8Array): string {
  if (b.length === 4) return Array.from(b).join('.');
  if (b.length !== 16) throw new Error(`address of ${b.length} bytes`);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  // RFC 5952: compress the longest run (≥ 2) of zero groups, the first one on a tie.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** Numeric comparison of two addresses of one family (RFC 5798 §6.4.3 tie-break). */
export function compareIP(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** "192.168.1.10/24" → address and prefix length (default 32 / 128). */
export function parseCidr(text: string): { address: string; bytes: Buffer; prefixLength: number; family: Family } {
  const [addr = '', len] = text.split('/');
  const family = familyOf(addr);
  if (family === null) throw new Error(`not an address: ${text}`);
  const max = family === 4 ? 32 : 128;
  const prefixLength = len === undefined ? max : Number(len);
  if (!Number.isInteger(prefixLength) || prefixLength < 0 || prefixLength > max) {
    throw new Error(`bad prefix length in ${text}`);
  }
  return { address: formatIP(parseIP(addr)), bytes: parseIP(addr), prefixLength, family };
}
