// The single-pass reader (dataplane/ipvs/observe.ts) against the reference path it replaces on table reads:
// fromIpvs(decodeService/decodeDest with stats: false). Same observed form over random tables, the same
// malformed replies refused; and serviceKeyPayloadOf names a service exactly as serviceKeyPayload does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeDest, decodeService, encodeDest, encodeService, serviceKeyPayload, serviceKeyPayloadOf, type IpvsDest, type IpvsService, type ServiceKey, type Stats } from '../../daemon/ipvs/codec.js';
import { canonicalIp } from '../../daemon/ipvs/addr.js';
import { nest } from '../../daemon/net/nlattr.js';
import { CmdAttr, SvcFlag } from '../../daemon/ipvs/constants.js';
import { fromIpvs } from '../../daemon/dataplane/ipvs/spec.js';
import { observedDestOf, observedServiceOf, readPacked, readService } from '../../daemon/dataplane/ipvs/observe.js';
import { SCHEDULERS } from '../../daemon/dataplane/types.js';

const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));
const u32 = fc.nat({ max: 0xffffffff });
const u16 = fc.nat({ max: 0xffff });
const big = fc.nat({ max: Number.MAX_SAFE_INTEGER });
const stats: fc.Arbitrary<Stats> = fc.record({ conns: u32, inPackets: u32, outPackets: u32, inBytes: big, outBytes: big, cps: u32, inPps: u32, outPps: u32, inBps: u32, outBps: u32 });
const family = fc.constantFrom<4 | 6>(4, 6);
const ip = (f: 4 | 6): fc.Arbitrary<string> => (f === 4 ? fc.ipV4() : fc.ipV6().map(canonicalIp));
const serviceKey: fc.Arbitrary<ServiceKey> = family.chain((f) =>
  fc.oneof(
    fc.record({ family: fc.constant(f), protocol: fc.constantFrom('tcp' as const, 'udp' as const, 'sctp' as const), address: ip(f), port: u16 }),
    fc.record({ family: fc.constant(f), fwmark: fc.integer({ min: 1, max: 0xffffffff }) }),
  ),
);
// Flags drawn from the bits that mean something (and the kernel's HASHED), plus any others.
const flags = fc.oneof(fc.subarray([SvcFlag.PERSISTENT, SvcFlag.HASHED, SvcFlag.ONEPACKET, SvcFlag.SCHED1, SvcFlag.SCHED2, SvcFlag.SCHED3]).map((b) => b.reduce((a, x) => a | x, 0)), u32);
const service: fc.Arbitrary<IpvsService> = serviceKey.chain((key) =>
  fc.record(
    {
      key: fc.constant(key), scheduler: fc.constantFrom(...SCHEDULERS), flags, timeout: u32,
      netmask: key.family === 4 ? fc.ipV4() : fc.integer({ min: 1, max: 128 }).map(String),
      peName: fc.constantFrom('sip', ''), stats, stats64: stats,
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
      activeConns: u32, inactiveConns: u32, persistConns: u32, stats, stats64: stats,
    },
    { requiredKeys: ['family', 'address', 'port', 'fwd', 'weight', 'upperThreshold', 'lowerThreshold'] },
  );
const entry = service.chain((s) => fc.tuple(fc.constant(s), fc.array(fc.oneof(dest(s.key.family), dest(s.key.family === 4 ? 6 : 4)), { maxLength: 12 })));

const reference = (svc: Buffer, dests: Buffer[]): unknown => {
  const s = decodeService(svc, false);
  return plain(fromIpvs({ ...s, dests: dests.map((d) => decodeDest(d, s.key.family, false)) }));
};

test('observe: a service and its destinations read as fromIpvs(decode…) reads them, over random tables', () => {
  fc.assert(
    fc.property(entry, ([s, ds]) => {
      const svc = Buffer.concat(encodeService(s));
      const dests = ds.map((d) => Buffer.concat(encodeDest(d)));
      // As GET_DEST replies carry them: a DEST nest in each reply's payload.
      const replies = dests.map((d) => nest(CmdAttr.DEST, [d]));
      assert.deepEqual(plain(readService(svc, replies)), reference(svc, dests));
    }),
    { numRuns: 1000 },
  );
});

test('observe: a destination without ADDR_FAMILY takes the service family (kernels before 4.x)', () => {
  fc.assert(
    fc.property(family.chain((f) => dest(f)), (d) => {
      const attrs = encodeDest(d).filter((a) => a.readUInt16LE(2) !== 11); // DEST_ATTR_ADDR_FAMILY
      const buf = Buffer.concat(attrs);
      assert.deepEqual(plain(observedDestOf(buf, d.family)), plain(fromIpvs({ ...decodeService(Buffer.concat(encodeService({ key: { family: d.family, fwmark: 1 }, scheduler: 'rr', flags: 0, timeout: 0, netmask: d.family === 4 ? '255.255.255.255' : '128' })), false), dests: [decodeDest(buf, d.family, false)] }).realServers[0]));
    }),
  );
});

// Whatever a reply holds, the two readers agree: both give the same form, or both refuse it.
const outcome = (f: () => unknown): unknown => {
  try {
    return { ok: plain(f()) };
  } catch (e) {
    return { error: true, message: (e as Error).message.replace(/^(service|destination)[^:]*:.*$/s, '$1 refused') };
  }
};

test('observe: malformed replies (truncated, cut, bytes flipped) are refused where the codec refuses them', () => {
  fc.assert(
    fc.property(entry, fc.nat(), fc.nat({ max: 255 }), fc.boolean(), ([s, ds], at, byte, cut) => {
      const mangle = (b: Buffer): Buffer => {
        if (b.length === 0) return b;
        if (cut) return b.subarray(0, at % b.length);
        const c = Buffer.from(b);
        c[at % c.length] = byte;
        return c;
      };
      const svc = mangle(Buffer.concat(encodeService(s)));
      assert.deepEqual(outcome(() => observedServiceOf(svc, [])), outcome(() => fromIpvs({ ...decodeService(svc, false), dests: [] })));
      const d = ds[0];
      if (d === undefined) return;
      const db = mangle(Buffer.concat(encodeDest(d)));
      assert.deepEqual(outcome(() => observedDestOf(db, s.key.family)), outcome(() => fromIpvs({ ...decodeService(Buffer.concat(encodeService(s)), false), dests: [decodeDest(db, s.key.family, false)] }).realServers[0]));
    }),
    { numRuns: 2000 },
  );
  assert.throws(() => observedServiceOf(Buffer.from([8, 0, 1, 0, 2, 0]), []), /service: attribute 1 at offset 0 has length 8, only 6 bytes left/);
  assert.throws(() => observedDestOf(Buffer.alloc(0), 4), /destination: no address or port/);
  assert.throws(() => readService(Buffer.concat(encodeService({ key: { family: 4, fwmark: 1 }, scheduler: 'rr', flags: 0, timeout: 0, netmask: '255.255.255.255' })), [Buffer.alloc(8)]), /GET_DEST: attribute 0 at offset 0 has length 0/);
});

test('serviceKeyPayloadOf: the key of a service as read is the key serviceKeyPayload writes', () => {
  fc.assert(
    fc.property(service, (s) => {
      assert.equal(serviceKeyPayloadOf(Buffer.concat(encodeService(s))).toString('hex'), serviceKeyPayload(s.key).toString('hex'));
    }),
    { numRuns: 500 },
  );
});

// The native table read's buffer (daemon/ipvs/native.ts's layout), built here from the same nests the transport's
// replies carry: readPacked must read it exactly as readService reads the replies (the guest compares the addon's
// own buffer with the transport's replies on a real kernel: test/vm/guest/program.ts).
const blob = (b: Buffer): Buffer => {
  const out = Buffer.alloc(4 + ((b.length + 3) & ~3));
  out.writeUInt32LE(b.length, 0);
  b.copy(out, 4);
  return out;
};
const word = (n: number): Buffer => {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(n, 0);
  return out;
};
const packed = (table: [Buffer, Buffer[]][]): Buffer => Buffer.concat([word(table.length), ...table.flatMap(([svc, dests]) => [blob(svc), word(dests.length), ...dests.map(blob)])]);

test('observe: the native read\'s buffer reads as readService reads the same replies, over random tables', () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 8 }), (table) => {
      const encoded = table.map(([s, ds]): [Buffer, Buffer[]] => [Buffer.concat(encodeService(s)), ds.map((d) => Buffer.concat(encodeDest(d)))]);
      const expected = encoded.map(([svc, dests]) => readService(svc, dests.map((d) => nest(CmdAttr.DEST, [d]))));
      assert.deepEqual(plain(readPacked(packed(encoded))), plain(expected));
    }),
    { numRuns: 500 },
  );
});

test('observe: a native read\'s buffer cut short, padded or holding a malformed nest is refused', () => {
  const svc = Buffer.concat(encodeService({ key: { family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80 }, scheduler: 'wrr', flags: 0, timeout: 0, netmask: '255.255.255.255' }));
  const dest = Buffer.concat(encodeDest({ family: 4, address: '10.0.1.1', port: 8080, fwd: 'nat', weight: 1, upperThreshold: 0, lowerThreshold: 0 }));
  const good = packed([[svc, [dest]]]);
  assert.equal(readPacked(good)[0]?.realServers[0]?.id, '10.0.1.1:8080');
  assert.deepEqual(readPacked(word(0)), []);
  for (let cut = 0; cut < good.length; cut += 4) assert.throws(() => readPacked(good.subarray(0, cut)), /native table read: /, `cut at ${cut}`);
  assert.throws(() => readPacked(Buffer.concat([good, word(0)])), /native table read: 4 bytes after the last service/);
  assert.throws(() => readPacked(packed([[svc.subarray(0, 20), []]])), /service: attribute \d+ at offset 16 has length \d+, only 4 bytes left/);
  assert.throws(() => readPacked(packed([[svc, [Buffer.alloc(0)]]])), /destination: no address or port/);
});
