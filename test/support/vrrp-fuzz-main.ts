// Throws random and mutated VRRP adverts (vrrp-mutate.ts) at a segment from inside a namespace, for the
// malformed-packet test, through a raw socket (the kernel writes the IP header). Mutations that happen to
// be valid adverts are not sent (checked with the codec), so every packet sent must be dropped by the receivers:
// those with the receivers' VRID by the runtime (and counted, in the ownVrid* kinds), the others by their
// socket's filter in the kernel.
// argv[2]: JSON { ifname, src, vrid, vips, count, seed, unicastTo? }. Prints one JSON line of counts.
import { native, IP, SOL, SO_BINDTODEVICE } from '../../daemon/net/native.js';
import { parseIP } from '../../daemon/net/addr.js';
import { validateAdvert, type InstanceView } from '../../daemon/vrrp/validate.js';
import { mutateAdvert, seeded, type Mutant } from './vrrp-mutate.js';

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

const g = seeded(a.seed);
const int = g.int;

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

const make = (dst: Buffer): Mutant => mutateAdvert(g, { family: 4, vrid: a.vrid, vips, src, dst });

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
    // What the receivers' socket filter lets through (net/vrid-filter.ts): the VRID byte is theirs.
    if (p.bytes.length >= 2 && p.bytes[1] === a.vrid) {
      const own = dst === group ? 'ownVridToGroup' : 'ownVridToUnicast';
      kinds[own] = (kinds[own] ?? 0) + 1;
    }
  }
  await new Promise((r) => setTimeout(r, 1));
}
n.close(fd255);
n.close(fd1);
process.stdout.write(JSON.stringify({ sent, skippedValid, kinds }) + '\n');
