// The single-pass reader (dataplane/ipvs/observe.ts) against the reference path it replaces on table reads:
// fromIpvs(decodeService/decodeDest with stats: false). Same observed form over random tables, the same
// malformed replies refused; and serviceKeyPayloadOf names a service exactly as serviceKeyPayload does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeDest, decodeService, encodeDest, encodeService, serviceKeyPayload, serviceKeyPayloadOf } from '../../daemon/ipvs/codec.js';
import { nest } from '../../daemon/net/nlattr.js';
import { CmdAttr } from '../../daemon/ipvs/constants.js';
import { fromIpvs } from '../../daemon/dataplane/ipvs/spec.js';
import { observedDestOf, observedServiceOf, readPacked, readService } from '../../daemon/dataplane/ipvs/observe.js';
import { mangle as mangled, packed, tableArbitraries, word } from '../support/ipvs-tables.js';

const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));
const { family, service, dest, entry } = tableArbitraries({ stats: true });

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
      const mangle = (b: Buffer): Buffer => mangled(b, at, byte, cut);
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
