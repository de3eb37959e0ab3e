// IPv4/IPv6 text ↔ bytes, canonical text out (RFC 5952 for IPv6), clear errors in.
import { isIPv4, isIPv6 } from 'node:net';

export function ipFamily(address: string): 4 | 6 {
  if (isIPv4(address)) return 4;
  if (isIPv6(address)) return 6;
  throw new Error(`not an IP address: "${address}"`);
}

export function ipToBytes(address: string): Buffer {
  const quad = dottedQuad(address);
  if (quad !== undefined) return quad;
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  if (!isIPv6(address)) throw new Error(`not an IP address: "${address}"`);
  let text = address.split('%')[0] ?? address;
  // An embedded dotted quad becomes two hex groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1] !== undefined) {
    const b = v4[1].split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1].length) + `${((b[0] << 8) | b[1]).toString(16)}:${((b[2] << 8) | b[3]).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

/**
 * The bytes of a dotted quad as isIPv4 accepts it (four 0..255 without leading zeros), in one pass; undefined
 * for anything else. Encoding a large table spent most of its time in isIPv4's regular expression.
 */
function dottedQuad(a: string): Buffer | undefined {
  const out = Buffer.allocUnsafe(4);
  let part = 0;
  let n = 0;
  let digits = 0;
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || part === 3) return undefined;
      out[part++] = n;
      n = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && n === 0) return undefined;
      n = n * 10 + (c - 48);
      digits++;
      if (n > 255) return undefined;
    } else {
      return undefined;
    }
  }
  if (part !== 3 || digits === 0) return undefined;
  out[3] = n;
  return out;
}

export function bytesToIp(bytes: Buffer, family: 4 | 6): string {
  if (family === 4) {
    if (bytes.length < 4) throw new Error(`IPv4 address needs 4 bytes, got ${bytes.length}`);
    return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  }
  if (bytes.length < 16) throw new Error(`IPv6 address needs 16 bytes, got ${bytes.length}`);
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return canonicalIp(groups.join(':'));
}

/** The canonical text of an address ("fd00:0::1" → "fd00::1"); IPv4 unchanged. */
export function canonicalIp(address: string): string {
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) throw new Error(`not an IP address: "${address}"`);
  // WHATWG URL serialises IPv6 hosts per RFC 5952 (lower case, longest zero run compressed).
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** "10.0.0.1:80" or "[fd00::1]:80". */
export function hostPort(address: string, port: number): string {
  return ipFamily(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}
