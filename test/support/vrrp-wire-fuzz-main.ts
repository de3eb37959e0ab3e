// The wire half of the VRRP fuzzing (issue #17): whole IPv4 and IPv6 packets made by hand and sent through
// an AF_PACKET socket, so every header field is ours to break — IPv4 options, header and total lengths,
// fragments, header checksums; IPv6 hop limits, extension headers, payload lengths — around a broken
// advert (vrrp-mutate.ts), plus valid adverts for other VRIDs in floods. Nothing sent may change who is master.
// argv[2]: JSON Args. Prints one JSON line: { sent, kinds, seconds }.
import { native } from '../../daemon/net/native.js';
import { parseIP } from '../../daemon/net/addr.js';
import { vrrpChecksum } from '../../daemon/vrrp/packet.js';
import { validateAdvert, type InstanceView } from '../../daemon/vrrp/validate.js';
import { mutateAdvert, seeded, tempting, type Target } from './vrrp-mutate.js';

interface Args {
  ifindex: number;
  /** This host's addresses on the segment. */
  src4: string;
  src6: string;
  /** The instances under fire: VRID and VIPs per family. */
  v4: { vrid: number; vips: string[] };
  v6: { vrid: number; vips: string[] };
  /** The master's address and MAC, for unicast packets. */
  master4: string;
  master6: string;
  masterMac: string;
  count: number;
  seed: number;
}
const a = JSON.parse(process.argv[2] ?? '{}') as Args;
const g = seeded(a.seed);
const { int } = g;

const ETH_P_IP = 0x0800;
const ETH_P_IPV6 = 0x86dd;
const GROUP4 = parseIP('224.0.0.18');
const GROUP6 = parseIP('ff02::12');
const MCAST_MAC4 = Buffer.from([0x01, 0x00, 0x5e, 0x00, 0x00, 0x12]);
const MCAST_MAC6 = Buffer.from([0x33, 0x33, 0x00, 0x00, 0x00, 0x12]);
const masterMac = Buffer.from(a.masterMac.split(':').map((h) => parseInt(h, 16)));

function ipChecksum(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < b.length; i += 2) sum += b.readUInt16BE(i);
  if (b.length % 2) sum += (b[b.length - 1] ?? 0) << 8;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

interface V4Header { ttl: number; options?: Buffer; totalLength?: number; ihl?: number; flagsFrag?: number; id?: number; badChecksum?: boolean; protocol?: number }

function ipv4(src: Buffer, dst: Buffer, payload: Buffer, h: V4Header): Buffer {
  const opts = h.options ?? Buffer.alloc(0);
  const hlen = 20 + opts.length;
  const b = Buffer.alloc(hlen + payload.length);
  b[0] = 0x40 | (h.ihl ?? hlen / 4);
  b.writeUInt16BE(h.totalLength ?? b.length, 2);
  b.writeUInt16BE(h.id ?? 0, 4); // unfragmented (DF): the id means nothing
  b.writeUInt16BE(h.flagsFrag ?? 0x4000, 6); // DF
  b[8] = h.ttl;
  b[9] = h.protocol ?? 112;
  src.copy(b, 12);
  dst.copy(b, 16);
  opts.copy(b, 20);
  b.writeUInt16BE(ipChecksum(b.subarray(0, hlen)), 10);
  if (h.badChecksum === true) b.writeUInt16BE(b.readUInt16BE(10) ^ (1 + int(0xfffe)), 10);
  payload.copy(b, hlen);
  return b;
}

/** IPv4 options: NOPs, router alert, or garbage TLVs (lengths that overrun, zero lengths), padded to 4 bytes. */
function v4Options(): Buffer {
  const parts: number[] = [];
  switch (int(3)) {
    case 0:
      parts.push(0x94, 4, 0, 0); // router alert
      break;
    case 1:
      for (let i = int(8); i >= 0; i--) parts.push(1); // NOP
      break;
    default:
      for (let i = 1 + int(6); i > 0; i--) parts.push(int(256), int(12), int(256));
  }
  while (parts.length % 4) parts.push(0);
  return Buffer.from(parts.slice(0, 40));
}

function ipv6(src: Buffer, dst: Buffer, next: number, rest: Buffer, hopLimit: number, payloadLength?: number): Buffer {
  const b = Buffer.alloc(40 + rest.length);
  b.writeUInt32BE(0x60000000, 0);
  b.writeUInt16BE(payloadLength ?? rest.length, 4);
  b[6] = next;
  b[7] = hopLimit;
  src.copy(b, 8);
  dst.copy(b, 24);
  rest.copy(b, 40);
  return b;
}

/** An IPv6 extension header (hop-by-hop 0, destination options 60) of 8 bytes with PadN or a router alert. */
function ext6(next: number, routerAlert: boolean): Buffer {
  const b = Buffer.alloc(8);
  b[0] = next;
  b[1] = 0;
  if (routerAlert) Buffer.from([5, 2, 0, 0, 1, 0]).copy(b, 2);
  else Buffer.from([1, 4, 0, 0, 0, 0]).copy(b, 2); // PadN
  return b;
}

const n = native();
const fd4 = n.openPacket(ETH_P_IP);
const fd6 = n.openPacket(ETH_P_IPV6);
const src4 = parseIP(a.src4);
const src6 = parseIP(a.src6);
const targets: Record<4 | 6, { group: Buffer; unicast: Buffer; vrid: number; vips: Buffer[] }> = {
  4: { group: GROUP4, unicast: parseIP(a.master4), vrid: a.v4.vrid, vips: a.v4.vips.map(parseIP) },
  6: { group: GROUP6, unicast: parseIP(a.master6), vrid: a.v6.vrid, vips: a.v6.vips.map(parseIP) },
};
const view = (family: 4 | 6): InstanceView => ({ family, version: 3, vrid: targets[family].vrid, intervalCs: 50, ownAddresses: [], unicastPeers: [], vips: targets[family].vips });

const kinds: Record<string, number> = {};
let sent = 0;
let pairs = 0;
const count = (k: string): void => {
  kinds[k] = (kinds[k] ?? 0) + 1;
};

/** One packet: the bytes to send on the link (IP header included), its family, and the MAC to send it to. */
function make(): { family: 4 | 6; bytes: Buffer; mac: Buffer; kind: string } | null {
  const family: 4 | 6 = int(2) === 0 ? 4 : 6;
  const tg = targets[family];
  const unicast = int(4) === 0;
  const dst = unicast ? tg.unicast : tg.group;
  const mac = unicast ? masterMac : family === 4 ? MCAST_MAC4 : MCAST_MAC6;
  const src = family === 4 ? src4 : src6;
  const t: Target = { family, vrid: tg.vrid, vips: tg.vips, src, dst };
  const m = mutateAdvert(g, t);
  // A mutant that happens to be a valid advert (a bit flip in a spare bit, say) is not sent.
  const brokenAdvert = !validateAdvert(view(family), { src, dst, ttl: m.ttl, payload: m.bytes }).ok;
  if (family === 4) {
    const pick = int(7);
    switch (pick) {
      case 0: // options in the header, a broken advert after them
        if (!brokenAdvert) return null;
        return { family, bytes: ipv4(src, dst, m.bytes, { ttl: m.ttl, options: v4Options() }), mac, kind: `v4-options/${m.kind}` };
      case 1: { // header or total length that disagrees with the packet (the kernel drops or trims it)
        const tempt = tempting(g, t);
        const base = 20 + tempt.length;
        const h: V4Header = int(2) === 0 ? { ttl: 255, ihl: [0, 1, 4, 6, 15][int(5)] ?? 0 } : { ttl: 255, totalLength: [0, 19, 20, base - 1 - int(10), base + 1 + int(100), 65535][int(6)] ?? 0 };
        return { family, bytes: ipv4(src, dst, tempt, h), mac, kind: 'v4-length' };
      }
      case 2: // a valid, tempting advert under a wrong header checksum
        return { family, bytes: ipv4(src, dst, tempting(g, t), { ttl: 255, badChecksum: true }), mac, kind: 'v4-checksum' };
      case 3: { // a lone fragment (first with MF, or a later one) of a tempting advert: never reassembled
        const tempt = tempting(g, t);
        const first = int(2) === 0;
        const part = first ? tempt.subarray(0, 8) : tempt.subarray(8);
        // A first and a later lone fragment under one id would be glued by the kernel into a valid advert
        // (found by this fuzzer: it took the master down): ids by class (first ≡ 0, later ≡ 1, pairs ≡ 2 mod 3).
        return { family, bytes: ipv4(src, dst, part, { ttl: 255, flagsFrag: first ? 0x2000 : 1, id: 3 * int(21845) + (first ? 0 : 1) }), mac, kind: 'v4-fragment' };
      }
      case 4: { // both fragments of a broken advert: reassembled by the kernel, then refused by lvsd
        if (!brokenAdvert || m.bytes.length < 16) return null;
        const id = 3 * (pairs++ % 21845) + 2;
        const one = ipv4(src, dst, m.bytes.subarray(0, 8), { ttl: m.ttl, id, flagsFrag: 0x2000 });
        const two = ipv4(src, dst, m.bytes.subarray(8), { ttl: m.ttl, id, flagsFrag: 1 });
        n.sendPacket(fd4, a.ifindex, ETH_P_IP, mac, one);
        return { family, bytes: two, mac, kind: 'v4-fragments' };
      }
      case 5: // valid adverts for other VRIDs, as a flood of neighbours would send
        return { family, bytes: ipv4(src, dst, tempting(g, { ...t, vrid: 1 + ((tg.vrid + int(254)) % 255) }), { ttl: 255 }), mac, kind: 'v4-other-vrid' };
      default:
        if (!brokenAdvert) return null;
        return { family, bytes: ipv4(src, dst, m.bytes, { ttl: m.ttl }), mac, kind: `v4/${m.kind}` };
    }
  }
  const pick = int(5);
  switch (pick) {
    case 0: { // extension headers (hop-by-hop, destination options) before a broken advert
      if (!brokenAdvert) return null;
      const hbh = int(2) === 0;
      const rest = Buffer.concat([ext6(112, int(2) === 0), m.bytes]);
      return { family, bytes: ipv6(src, dst, hbh ? 0 : 60, rest, m.ttl), mac, kind: `v6-ext/${m.kind}` };
    }
    case 1: { // a valid advert with its VRRP checksum off by a bit (the pseudo-header is IPv6's)
      const tempt = tempting(g, t);
      tempt.writeUInt16BE(vrrpChecksum(tempt, 3, { family: 6, src, dst }) ^ (1 << int(16)), 6);
      return { family, bytes: ipv6(src, dst, 112, tempt, 255), mac, kind: 'v6-checksum' };
    }
    case 2: { // payload length that disagrees with the packet
      const tempt = tempting(g, t);
      return { family, bytes: ipv6(src, dst, 112, tempt, 255, [0, tempt.length - 1 - int(8), tempt.length + 1 + int(100)][int(3)] ?? 0), mac, kind: 'v6-length' };
    }
    case 3: // hop limits other than 255 on an otherwise valid advert
      return { family, bytes: ipv6(src, dst, 112, tempting(g, t), int(255), undefined), mac, kind: 'v6-hop-limit' };
    default:
      if (!brokenAdvert) return null;
      return { family, bytes: ipv6(src, dst, 112, m.bytes, m.ttl), mac, kind: `v6/${m.kind}` };
  }
}

const started = performance.now();
while (sent < a.count) {
  // Bursts with a 1 ms breath between them: a flood, but one the machine running the test can take.
  for (let burst = 0; burst < 50 && sent < a.count; ) {
    const p = make();
    if (p === null) continue;
    n.sendPacket(p.family === 4 ? fd4 : fd6, a.ifindex, p.family === 4 ? ETH_P_IP : ETH_P_IPV6, p.mac, p.bytes);
    count(p.kind.split('/')[0] ?? p.kind);
    sent++;
    burst++;
  }
  await new Promise((r) => setTimeout(r, 1));
}
n.close(fd4);
n.close(fd6);
process.stdout.write(JSON.stringify({ sent, kinds, seconds: Math.round((performance.now() - started) / 100) / 10 }) + '\n');
