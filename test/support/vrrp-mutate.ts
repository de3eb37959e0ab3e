// Broken VRRP adverts for the fuzzers (vrrp-fuzz-main.ts on a raw socket, vrrp-wire-fuzz-main.ts inside
// hand-made IP packets): each one "tempting" (priority 255 or 0 for the instance's VRID) but wrong in one
// way, so a receiver that accepted it would change who is master.
import { encodeAdvert, vrrpChecksum } from '../../daemon/vrrp/packet.js';

/** A seeded generator (mulberry32): a fuzz run is repeated exactly from its seed. */
export function seeded(seed: number): { rnd: () => number; int: (n: number) => number } {
  let state = seed >>> 0;
  const rnd = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { rnd, int: (n) => Math.floor(rnd() * n) };
}

export interface Target {
  family: 4 | 6;
  vrid: number;
  vips: Buffer[];
  src: Buffer;
  dst: Buffer;
}

export interface Mutant {
  bytes: Buffer;
  /** The TTL / hop limit to send it with. */
  ttl: number;
  kind: string;
}

/** A v3 advert for `t` that is valid as it stands (the caller breaks it at another layer). */
export function tempting(g: ReturnType<typeof seeded>, t: Target): Buffer {
  return encodeAdvert({ version: 3, vrid: t.vrid, priority: g.rnd() < 0.5 ? 255 : 0, intervalCs: 50, addresses: t.vips }, { family: t.family, src: t.src, dst: t.dst });
}

/** One broken advert for `t`. */
export function mutateAdvert(g: ReturnType<typeof seeded>, t: Target): Mutant {
  const { int, rnd } = g;
  const ep = { family: t.family, src: t.src, dst: t.dst };
  const good = tempting(g, t);
  const fix = (b: Buffer): Buffer => {
    b.writeUInt16BE(0, 6);
    b.writeUInt16BE(vrrpChecksum(b, 3, ep), 6);
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
      b[3] = t.vips.length + 1 + int(200);
      return { bytes: fix(b), ttl: 255, kind: 'count' };
    }
    case 6: {
      const b = Buffer.from(good);
      b.writeUInt16BE(int(16) << 12, 4); // interval 0, reserved bits random
      return { bytes: fix(b), ttl: 255, kind: 'interval0' };
    }
    case 7: {
      // A VRRPv2 advert (with or without PASS) to a v3 instance; v2 has no IPv6, so there: a v3 advert saying 2.
      if (t.family === 6) {
        const b = Buffer.from(good);
        b[0] = 0x21;
        return { bytes: fix(b), ttl: 255, kind: 'v2' };
      }
      const b = encodeAdvert({ version: 2, vrid: t.vrid, priority: rnd() < 0.5 ? 255 : 0, intervalCs: 100, addresses: t.vips, authType: int(2), password: 'x' }, ep);
      return { bytes: b, ttl: 255, kind: 'v2' };
    }
    default:
      return { bytes: good.subarray(0, int(good.length)), ttl: 255, kind: 'truncated' };
  }
}
