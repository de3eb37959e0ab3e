// Random IPVS tables for the property tests of the table readers (fast-check arbitraries), and the native table
// read's buffer layout (daemon/ipvs/native.ts) built from encoded services and destinations.
import fc from 'fast-check';
import type { IpvsDest, IpvsService, ServiceKey, Stats } from '../../daemon/ipvs/codec.js';
import { canonicalIp } from '../../daemon/ipvs/addr.js';
import { SvcFlag } from '../../daemon/ipvs/constants.js';
import { SCHEDULERS } from '../../daemon/dataplane/types.js';

export interface TableDraws {
  /** Also what no kernel line holds (scheduler and persistence-engine names with odd characters) and zero-rich IPv6. */
  odd?: boolean;
  /** Counters on every service and destination. */
  stats?: boolean;
}

export interface TableArbitraries {
  family: fc.Arbitrary<4 | 6>;
  service: fc.Arbitrary<IpvsService>;
  dest: (f: 4 | 6) => fc.Arbitrary<IpvsDest>;
  /** A service with up to 12 destinations, some of the other family (the kernel refuses those; readers must too). */
  entry: fc.Arbitrary<[IpvsService, IpvsDest[]]>;
}

const u32 = fc.nat({ max: 0xffffffff });
const u16 = fc.nat({ max: 0xffff });
const big = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const stats: fc.Arbitrary<Stats> = fc.record({ conns: u32, inPackets: u32, outPackets: u32, inBytes: big, outBytes: big, cps: u32, inPps: u32, outPps: u32, inBps: u32, outBps: u32 });

export function tableArbitraries(draws: TableDraws = {}): TableArbitraries {
  const family = fc.constantFrom<4 | 6>(4, 6);
  // IPv6 addresses rich in zero runs (the compression rules), and any.
  const zeroRich = fc.array(fc.constantFrom(0, 0, 0, 1, 0xffff, 0xabc), { minLength: 8, maxLength: 8 }).map((g) => g.map((x) => x.toString(16)).join(':'));
  const ip6 = (draws.odd === true ? fc.oneof(fc.ipV6(), zeroRich) : fc.ipV6()).map(canonicalIp);
  const ip = (f: 4 | 6): fc.Arbitrary<string> => (f === 4 ? fc.ipV4() : ip6);
  const counters: { stats?: fc.Arbitrary<Stats>; stats64?: fc.Arbitrary<Stats> } = draws.stats === true ? { stats, stats64: stats } : {};
  const serviceKey: fc.Arbitrary<ServiceKey> = family.chain((f) =>
    fc.oneof(
      fc.record({ family: fc.constant(f), protocol: fc.constantFrom('tcp' as const, 'udp' as const, 'sctp' as const), address: ip(f), port: u16 }),
      fc.record({ family: fc.constant(f), fwmark: fc.integer({ min: 1, max: 0xffffffff }) }),
    ),
  );
  // Flags drawn from the bits that mean something (and the kernel's HASHED), plus any others.
  const flags = fc.oneof(fc.subarray([SvcFlag.PERSISTENT, SvcFlag.HASHED, SvcFlag.ONEPACKET, SvcFlag.SCHED1, SvcFlag.SCHED2, SvcFlag.SCHED3]).map((b) => b.reduce((a, x) => a | x, 0)), u32);
  const scheduler = draws.odd === true ? fc.oneof(fc.constantFrom(...SCHEDULERS), fc.constantFrom('', 'Wrr', 'w|rr', 'sh\n')) : fc.constantFrom(...SCHEDULERS);
  const peName = draws.odd === true ? fc.constantFrom('sip', '', 'S;p') : fc.constantFrom('sip', '');
  const service: fc.Arbitrary<IpvsService> = serviceKey.chain((key) =>
    fc.record(
      {
        key: fc.constant(key), scheduler, flags, timeout: u32,
        netmask: key.family === 4 ? fc.ipV4() : fc.integer({ min: 1, max: 128 }).map(String),
        peName, ...counters,
      },
      { requiredKeys: ['key', 'scheduler', 'flags', 'timeout', 'netmask'] },
    ),
  );
  const dest = (f: 4 | 6): fc.Arbitrary<IpvsDest> =>
    fc.record(
      {
        family: fc.constant(f), address: ip(f), port: u16,
        fwd: fc.constantFrom('nat' as const, 'dr' as const, 'tun' as const, 'local' as const, 'bypass' as const),
        weight: u32, upperThreshold: fc.oneof(fc.constant(0), u32), lowerThreshold: fc.oneof(fc.constant(0), u32),
        tunType: fc.constantFrom('ipip' as const, 'gue' as const, 'gre' as const), tunPort: u16, tunFlags: fc.constantFrom(0, 1, 2, 3),
        activeConns: u32, inactiveConns: u32, persistConns: u32, ...counters,
      },
      { requiredKeys: ['family', 'address', 'port', 'fwd', 'weight', 'upperThreshold', 'lowerThreshold'] },
    );
  const entry = service.chain((s) => fc.tuple(fc.constant(s), fc.array(fc.oneof(dest(s.key.family), dest(s.key.family === 4 ? 6 : 4)), { maxLength: 12 })));
  return { family, service, dest, entry };
}

/** A little-endian u32. */
export const word = (n: number): Buffer => {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(n, 0);
  return out;
};

/** One length-prefixed nest, padded to 4 bytes. */
const blob = (b: Buffer): Buffer => Buffer.concat([word(b.length), b, Buffer.alloc(((b.length + 3) & ~3) - b.length)]);

/** The native table read's buffer: the service count, then each service's nest, its destination count and theirs. */
export const packed = (table: [Buffer, Buffer[]][]): Buffer => Buffer.concat([word(table.length), ...table.flatMap(([svc, dests]) => [blob(svc), word(dests.length), ...dests.map(blob)])]);

/** A corrupted copy of a nest: cut short at `at`, or the byte at `at` set to `byte`. */
export const mangle = (b: Buffer, at: number, byte: number, cut: boolean): Buffer => {
  if (b.length === 0) return b;
  if (cut) return b.subarray(0, at % b.length);
  const c = Buffer.from(b);
  c[at % c.length] = byte;
  return c;
};
