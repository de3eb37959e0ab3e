import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decodeDaemon, decodeDest, decodeInfo, decodeService, decodeStats, decodeTimeouts, destPayload, encodeDaemon, encodeDest,
  encodeInfo, encodeService, encodeStats, encodeTimeouts, replyNest, serviceKeyText, servicePayload,
  type IpvsDaemon, type IpvsDest, type IpvsService, type ServiceKey, type Stats,
} from '../../daemon/ipvs/codec.js';
import { isIPv4 } from 'node:net';
import { bytesToIp, canonicalIp, ipToBytes } from '../../daemon/ipvs/addr.js';
import { Attrs } from '../../daemon/net/nlattr.js';
import { CmdAttr, SvcFlag } from '../../daemon/ipvs/constants.js';
import { IpvsError } from '../../daemon/ipvs/errors.js';
import { SCHEDULERS } from '../../daemon/dataplane/types.js';

const hex = (b: Buffer): string => b.toString('hex');
const h = (s: string): string => s.replace(/\s+/g, '');
// fast-check builds null-prototype records; compare plain data.
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

// ---- arbitraries ----
const ipv4 = fc.ipV4();
const ipv6 = fc.ipV6().map(canonicalIp);
const u32 = fc.nat({ max: 0xffffffff });
const u16 = fc.nat({ max: 0xffff });
const stats: fc.Arbitrary<Stats> = fc.record({
  conns: u32, inPackets: u32, outPackets: u32, inBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }), outBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  cps: u32, inPps: u32, outPps: u32, inBps: u32, outBps: u32,
});
const stats64: fc.Arbitrary<Stats> = fc.record({
  conns: fc.nat({ max: Number.MAX_SAFE_INTEGER }), inPackets: fc.nat({ max: Number.MAX_SAFE_INTEGER }), outPackets: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  inBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }), outBytes: fc.nat({ max: Number.MAX_SAFE_INTEGER }), cps: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  inPps: fc.nat({ max: Number.MAX_SAFE_INTEGER }), outPps: fc.nat({ max: Number.MAX_SAFE_INTEGER }), inBps: fc.nat({ max: Number.MAX_SAFE_INTEGER }), outBps: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
});
const family = fc.constantFrom<4 | 6>(4, 6);
const serviceKey: fc.Arbitrary<ServiceKey> = family.chain((f) =>
  fc.oneof(
    fc.record({ family: fc.constant(f), protocol: fc.constantFrom('tcp' as const, 'udp' as const, 'sctp' as const), address: f === 4 ? ipv4 : ipv6, port: u16 }),
    fc.record({ family: fc.constant(f), fwmark: fc.integer({ min: 1, max: 0xffffffff }) }),
  ),
);
const service: fc.Arbitrary<IpvsService> = serviceKey.chain((key) =>
  fc.record(
    {
      key: fc.constant(key),
      scheduler: fc.constantFrom(...SCHEDULERS),
      flags: u32,
      timeout: u32,
      netmask: key.family === 4 ? ipv4 : fc.integer({ min: 1, max: 128 }).map(String),
      peName: fc.constant('sip'),
      stats,
      stats64,
    },
    { requiredKeys: ['key', 'scheduler', 'flags', 'timeout', 'netmask'] },
  ),
);
const dest: fc.Arbitrary<IpvsDest> = family.chain((f) =>
  fc.record(
    {
      family: fc.constant(f),
      address: f === 4 ? ipv4 : ipv6,
      port: u16,
      fwd: fc.constantFrom('nat' as const, 'dr' as const, 'tun' as const, 'local' as const, 'bypass' as const),
      weight: u32,
      upperThreshold: u32,
      lowerThreshold: u32,
      tunType: fc.constantFrom('ipip' as const, 'gue' as const, 'gre' as const),
      tunPort: u16,
      tunFlags: fc.constantFrom(0, 1, 2),
      activeConns: u32,
      inactiveConns: u32,
      persistConns: u32,
      stats,
      stats64,
    },
    { requiredKeys: ['family', 'address', 'port', 'fwd', 'weight', 'upperThreshold', 'lowerThreshold'] },
  ),
);
const daemon: fc.Arbitrary<IpvsDaemon> = fc.record(
  {
    role: fc.constantFrom('master' as const, 'backup' as const),
    ifname: fc.stringMatching(/^[a-z][a-z0-9]{0,14}$/),
    syncId: fc.nat({ max: 255 }),
    syncMaxLen: u16,
    mcastGroup: fc.oneof(ipv4, ipv6),
    mcastPort: u16,
    mcastTtl: fc.nat({ max: 255 }),
  },
  { requiredKeys: ['role', 'ifname', 'syncId'] },
);

test('addresses: bytes round-trip, IPv6 canonical', () => {
  fc.assert(fc.property(ipv4, (a) => bytesToIp(ipToBytes(a), 4) === a));
  fc.assert(fc.property(ipv6, (a) => bytesToIp(ipToBytes(a), 6) === a));
  assert.equal(canonicalIp('FD00:0:0::0001'), 'fd00::1');
  assert.equal(hex(ipToBytes('::ffff:10.1.2.3')), '00000000000000000000ffff0a010203');
  assert.throws(() => ipToBytes('10.0.0'), /not an IP address: "10\.0\.0"/);
  // The one-pass dotted quad accepts exactly what isIPv4 accepts: no leading zeros, no 256, four parts.
  for (const bad of ['010.0.0.1', '10.0.0.256', '10.0.0.1.', '.10.0.0.1', '10..0.1', '10.0.0.1 ', '1.2.3.4.5', '1.2.3']) {
    assert.throws(() => ipToBytes(bad), /not an IP address/, bad);
  }
  assert.equal(hex(ipToBytes('0.0.0.0')), '00000000');
  assert.equal(hex(ipToBytes('255.255.255.255')), 'ffffffff');
  const digitsAndDots = fc.stringMatching(/^[0-9.]{1,16}$/);
  fc.assert(fc.property(digitsAndDots, (a) => {
    let want: string | undefined;
    if (isIPv4(a)) want = hex(Buffer.from(a.split('.').map(Number)));
    let got: string | undefined;
    try {
      got = hex(ipToBytes(a));
    } catch {
      got = undefined;
    }
    return got === want;
  }), { numRuns: 2000 });
});

test('service: decode ∘ encode = id (IPv4/IPv6, tcp/udp/sctp/fwmark, every scheduler, stats)', () => {
  fc.assert(fc.property(service, (s) => { assert.deepEqual(decodeService(Buffer.concat(encodeService(s))), plain(s)); }), { numRuns: 500 });
});

test('destination: decode ∘ encode = id (every method, tunnel types and flags, counters)', () => {
  fc.assert(fc.property(dest, (d) => { assert.deepEqual(decodeDest(Buffer.concat(encodeDest(d)), d.family), plain(d)); }), { numRuns: 500 });
});

test('sync daemon: decode ∘ encode = id', () => {
  fc.assert(fc.property(daemon, (d) => { assert.deepEqual(decodeDaemon(Buffer.concat(encodeDaemon(d))), plain(d)); }));
});

test('stats and stats64, timeouts, info: decode ∘ encode = id', () => {
  fc.assert(fc.property(stats, (s) => { assert.deepEqual(decodeStats(Attrs.parse(Buffer.concat(encodeStats(s, false)), 't'), false), plain(s)); }));
  fc.assert(fc.property(stats64, (s) => { assert.deepEqual(decodeStats(Attrs.parse(Buffer.concat(encodeStats(s, true)), 't'), true), plain(s)); }));
  fc.assert(fc.property(fc.record({ tcp: u32, tcpFin: u32, udp: u32 }), (t) => { assert.deepEqual(decodeTimeouts(Buffer.concat(encodeTimeouts(t))), plain(t)); }));
  fc.assert(
    fc.property(u32, u32, (code, size) => {
      const i = decodeInfo(Buffer.concat(encodeInfo({ versionCode: code, connTabSize: size, version: '' })));
      assert.equal(i.versionCode, code);
      assert.equal(i.connTabSize, size);
    }),
  );
  assert.equal(decodeInfo(Buffer.concat(encodeInfo({ versionCode: 0x010201, connTabSize: 4096, version: '' }))).version, '1.2.1');
});

// Golden bytes, worked out by hand from include/uapi/linux/ip_vs.h and the netlink TLV rules
// (u16 len, u16 type, value, pad to 4; NLA_F_NESTED 0x8000; port big-endian; address in a 16-byte union).
test('golden: NEW_SERVICE tcp 10.0.0.1:80 wrr', () => {
  const s: IpvsService = { key: { family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80 }, scheduler: 'wrr', flags: 0, timeout: 0, netmask: '255.255.255.255' };
  assert.equal(
    hex(servicePayload(s)),
    h(`54000180
       06000100 02000000
       06000200 06000000
       14000300 0a000001 00000000 00000000 00000000
       06000400 00500000
       08000600 77727200
       0c000700 00000000 ffffffff
       08000800 00000000
       08000900 ffffffff`),
  );
});

test('golden: NEW_SERVICE fwmark 7 IPv6 sh persistent 300 /64 with sh-port', () => {
  const s: IpvsService = { key: { family: 6, fwmark: 7 }, scheduler: 'sh', flags: SvcFlag.PERSISTENT | SvcFlag.SCHED2, timeout: 300, netmask: '64' };
  assert.equal(
    hex(servicePayload(s)),
    h(`38000180
       06000100 0a000000
       08000500 07000000
       07000600 73680000
       0c000700 11000000 ffffffff
       08000800 2c010000
       08000900 40000000`),
  );
});

test('golden: NEW_DEST tun gue port 6080 with csum, weight 3', () => {
  const d: IpvsDest = { family: 4, address: '10.0.1.2', port: 80, fwd: 'tun', weight: 3, upperThreshold: 0, lowerThreshold: 0, tunType: 'gue', tunPort: 6080, tunFlags: 1 };
  const p = destPayload({ family: 4, protocol: 'udp', address: '10.0.0.1', port: 53 }, d);
  const a = Attrs.parse(p, 'test');
  const destNest = a.raw(CmdAttr.DEST);
  assert.ok(destNest);
  assert.equal(
    hex(destNest),
    h(`14000100 0a000102 00000000 00000000 00000000
       06000200 00500000
       06000b00 02000000
       08000300 02000000
       08000400 03000000
       08000500 00000000
       08000600 00000000
       05000d00 01000000
       06000e00 17c00000
       06000f00 01000000`),
  );
  assert.deepEqual(decodeDest(destNest, 4), plain(d));
});

test('malformed replies give errors that say where', () => {
  assert.throws(() => Attrs.parse(Buffer.from('0800010002', 'hex'), 'service'), /service: attribute 1 at offset 0 has length 8, only 5 bytes left/);
  assert.throws(() => decodeService(Buffer.from('06000100020000000600020006000000', 'hex')), /service: neither a fwmark nor protocol\+address\+port/);
  assert.throws(() => decodeService(Buffer.alloc(0)), /no address family/);
  assert.throws(() => replyNest(Buffer.alloc(0), CmdAttr.SERVICE, 'GET_SERVICE'), /GET_SERVICE: reply has no attribute 1/);
  assert.throws(() => encodeService({ key: { family: 4, fwmark: 1 }, scheduler: 'x'.repeat(16), flags: 0, timeout: 0, netmask: '255.255.255.255' }), /scheduler "x+" is longer than 15 bytes/);
  assert.throws(() => encodeService({ key: { family: 6, fwmark: 1 }, scheduler: 'rr', flags: 0, timeout: 0, netmask: '0' }), /prefix length 1\.\.128/);
});

test('errors are typed values naming the errno, the command and the object', () => {
  const e = IpvsError.fromErrno(-17, 'NEW_SERVICE', serviceKeyText({ family: 6, protocol: 'udp', address: 'fd00::1', port: 53 }));
  assert.equal(e.code, 'EEXIST');
  assert.equal(e.errno, 17);
  assert.equal(e.object, 'udp:[fd00::1]:53');
  assert.match(e.message, /^IPVS NEW_SERVICE udp:\[fd00::1\]:53: EEXIST \(already exists\)$/);
  assert.equal(IpvsError.fromErrno(3, 'SET_DEST', 'x').code, 'ESRCH');
  assert.equal(IpvsError.fromErrno(2, 'NEW_SERVICE', 'x').code, 'ENOENT');
});
