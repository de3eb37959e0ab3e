// An IPv4 datagram as a raw socket hands it over (header included), split into the header fields the
// VRRP engine reads and the payload. One definition for the socket (daemon/net/vrrp-socket.ts) and the
// packet codec (daemon/vrrp/packet.ts). Views into the buffer, no copies.

export interface IPv4Parts {
  ttl: number;
  protocol: number;
  src: Buffer;
  dst: Buffer;
  /** Up to the header's total length (a datagram padded past it, as some drivers do, is cut there). */
  payload: Buffer;
}

export type IPv4Split = { ok: true; parts: IPv4Parts } | { ok: false; why: 'too-short' | 'length'; detail: string };

export function splitIPv4(b: Buffer): IPv4Split {
  if (b.length < 20) return { ok: false, why: 'too-short', detail: `IPv4 packet of ${b.length} bytes` };
  const ihl = ((b[0] ?? 0) & 0x0f) * 4;
  if ((b[0] ?? 0) >>> 4 !== 4 || ihl < 20 || b.length < ihl) return { ok: false, why: 'length', detail: `bad IPv4 header (ihl ${ihl})` };
  const total = Math.min(b.readUInt16BE(2), b.length);
  return {
    ok: true,
    parts: { ttl: b[8] ?? 0, protocol: b[9] ?? 0, src: b.subarray(12, 16), dst: b.subarray(16, 20), payload: b.subarray(ihl, Math.max(ihl, total)) },
  };
}
