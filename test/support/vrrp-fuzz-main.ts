// Throws random and mutated VRRP adverts at a segment from inside a namespace, for the malformed-packet
// test. Every packet is "tempting" (priority 255 or 0 for the instance's VRID) but broken in one way,
// so accepting any of them would change who is master. Mutations that happen to be valid adverts are
// not sent (checked with the codec), so every packet sent must be dropped by the receivers.
// argv[2]: JSON { ifname, src, vrid, vips, count, seed, unicastTo? }. Prints one JSON line of counts.
import { native, IP, SOL, SO_BINDTODEVICE } from '../../daemon/net/native.js';
import { parseIP } from '../../daemon/net/addr.js';
import { encodeAdvert, vrrpChecksum } from '../../daemon/vrrp/packet.js';
import { validateAdvert, type InstanceView } from '../../daemon/vrrp/validate.js';

interface Args {
  ifname: string;
  ifindex: number;
  src: string;
  vrid: number;
  vips: string[];
  count: number;
  seed: number;
  unicastTo?: string;
}
const a = JSON.parse(process.argv[2] ?? '{}') as Args;

let state = a.seed >>> 0;
function rnd(): number {
  // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n: number): number => Math.floor(rnd() * n);

const n = native();
function open(ttl: number): number {
  const fd = n.openRaw(4, 112);
  n.setsockopt(fd, SOL.SOCKET, SO_BINDTODEVICE, Buffer.from(`${a.ifname}\0`));
  n.setsockopt(fd, SOL.IP, IP.TTL, ttl);
  n.setsockopt(fd, SOL.IP, IP.MULTICAST_TTL, ttl);
  n.setsockopt(fd, SOL.IP, IP.MULTICAST_LOOP, 0);
  const mreqn = Buffer.alloc(12);
  mreqn.writeInt32LE(a.ifindex, 8);
  n.setsockopt(fd, SOL.IP, IP.MULTICAST_IF, mreqn);
  return fd;
}
const fd255 = open(255);
const fd1 = open(1);
const src = parseIP(a.src);
const group = parseIP('224.0.0.18');
const vips = a.vips.map(parseIP);
const view: InstanceView = { family: 4, version: 3, vrid: a.vrid, intervalCs: 50, ownAddresses: [], unicastPeers: [], vips };

const kinds: Record<string, number> = {};
let sent = 0;
let skippedValid = 0;

function make(dst: Buffer): { bytes: Buffer; ttl: number; kind: string } {
  const priority = rnd() < 0.5 ? 255 : 0;
  const good = encodeAdvert({ version: 3, vrid: a.vrid, priority, intervalCs: 50, addresses: vips }, { family: 4, src, dst });
  const fix = (b: Buffer): Buffer => {
    b.writeUInt16BE(0, 6);
    b.writeUInt16BE(vrrpChecksum(b, 3, { family: 4, src, dst }), 6);
    return b;
  };
  switch (int(9)) {
    case 0:
      return { bytes: Buffer.from(Array.from({ length: int(80) }, () => int(256))), ttl: 255, kind: 'random' };
    case 1: {
      const b = Buffer.from(good);
      for (let i = 0, k = 1 + int(3); i < k; i++) {
        const at = int(b.length);
        b[at] = (b[at] ?? 0) ^ (1 << int(8));
      }
      return { bytes: b, ttl: 255, kind: 'bitflip' };
    }
    case 2:
      return { bytes: good, ttl: 1 + int(254), kind: 'ttl' };
    case 3: {
      const b = Buffer.from(good);
      b[0] = (int(16) << 4) | 1;
      if (b[0] >> 4 === 3) b[0] = 0x41;
      return { bytes: fix(b), ttl: 255, kind: 'version' };
    }
    case 4: {
      const b = Buffer.from(good);
      b[0] = 0x30 | (2 + int(14));
      return { bytes: fix(b), ttl: 255, kind: 'type' };
    }
    case 5: {
      const b = Buffer.from(good);
      b[3] = vips.length + 1 + int(200);
      return { bytes: fix(b), ttl: 255, kind: 'count' };
    }
    case 6: {
      const b = Buffer.from(good);
      b.writeUInt16BE(int(16) << 12, 4); // interval 0, reserved bits random
      return { bytes: fix(b), ttl: 255, kind: 'interval0' };
    }
    case 7: {
      // A VRRPv2 advert (with or without PASS) to our v3 instance.
      const b = encodeAdvert({ version: 2, vrid: a.vrid, priority, intervalCs: 100, addresses: vips, authType: int(2), password: 'x' }, { family: 4, src, dst });
      return { bytes: b, ttl: 255, kind: 'v2' };
    }
    default:
      return { bytes: good.subarray(0, int(good.length)), ttl: 255, kind: 'truncated' };
  }
}

const targets = [group, ...(a.unicastTo !== undefined ? [parseIP(a.unicastTo)] : [])];
for (let i = 0; i < a.count; ) {
  for (let burst = 0; burst < 20 && i < a.count; burst++) {
    const dst = targets[int(targets.length)] ?? group;
    const p = make(dst);
    if (p.ttl === 255 && validateAdvert(view, { src, dst, ttl: 255, payload: p.bytes }).ok) {
      skippedValid++;
      continue;
    }
    i++;
    n.send(p.ttl === 255 ? fd255 : fd1, p.bytes, dst, src, a.ifindex);
    sent++;
    kinds[p.kind] = (kinds[p.kind] ?? 0) + 1;
    const key = dst === group ? 'toGroup' : 'toUnicast';
    kinds[key] = (kinds[key] ?? 0) + 1;
  }
  await new Promise((r) => setTimeout(r, 1));
}
n.close(fd255);
n.close(fd1);
process.stdout.write(JSON.stringify({ sent, skippedValid, kinds }) + '\n');
