// The codec against adverts captured from keepalived 2.2.7 (notes/vrrp.md and test/fixtures/vrrp/,
// made by test/fixtures/vrrp/capture.sh), plus encode∘decode properties.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { decodeAdvert, encodeAdvert, parseIPv4Packet, AUTH_PASS, type Advert, type Endpoints } from '../../daemon/vrrp/packet.js';
import { formatIP, parseIP, parseIPv6 } from '../../daemon/net/addr.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/[^0-9a-f]/gi, ''), 'hex');
const ep = (src: string, dst: string): Endpoints => ({ family: src.includes(':') ? 6 : 4, src: parseIP(src), dst: parseIP(dst) });
const MC = ep('192.168.77.1', '224.0.0.18');
const VIP = parseIP('192.168.77.100');

// [name, VRRP bytes as keepalived sent them, the advert they carry, endpoints]
const notes: [string, string, Advert, Endpoints][] = [
  ['v2 prio 150 1 s', '21 33 96 01 00 01 3abd c0a84d64 0000000000000000', { version: 2, vrid: 51, priority: 150, intervalCs: 100, addresses: [VIP], authType: 0 }, MC],
  ['v2 prio 0', '2133 0001 0001 d0bd c0a84d64 0000000000000000', { version: 2, vrid: 51, priority: 0, intervalCs: 100, addresses: [VIP], authType: 0 }, MC],
  ['v2 PASS', '21 33 96 01 0101 cc3e c0a84d64 7365637265743132', { version: 2, vrid: 51, priority: 150, intervalCs: 100, addresses: [VIP], authType: AUTH_PASS, password: 'secret12' }, MC],
  ['v3 1 s', '31 33 96 01 0064 3c21 c0a84d64', { version: 3, vrid: 51, priority: 150, intervalCs: 100, addresses: [VIP] }, MC],
  ['v3 0.1 s', '31 33 96 01 000a 3c7b c0a84d64', { version: 3, vrid: 51, priority: 150, intervalCs: 10, addresses: [VIP] }, MC],
  ['v3 prio 0', '3133 0001 000a d27b c0a84d64', { version: 3, vrid: 51, priority: 0, intervalCs: 10, addresses: [VIP] }, MC],
  ['v3 unicast', '31 33 96 01 0064 0e89 c0a84d64', { version: 3, vrid: 51, priority: 150, intervalCs: 100, addresses: [VIP] }, ep('192.168.77.1', '192.168.77.2')],
];

for (const [name, bytes, advert, endpoints] of notes) {
  test(`keepalived capture (notes) ${name}: encodes byte-exact and decodes back`, () => {
    assert.deepEqual(encodeAdvert(advert, endpoints), hex(bytes));
    const r = decodeAdvert(hex(bytes), endpoints);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.deepEqual(r.advert, advert);
  });
}

test('a full IPv4 datagram from the capture splits into header fields and the advert', () => {
  const pkt = hex('45c0 0028 0001 0000 ff70 cce8 c0a84d01 e0000012 2133 9601 0001 3abd c0a84d64 0000000000000000');
  const r = parseIPv4Packet(pkt);
  assert.ok(r.ok);
  assert.equal(r.packet.ttl, 255);
  assert.equal(r.packet.protocol, 112);
  assert.equal(formatIP(r.packet.src), '192.168.77.1');
  assert.equal(formatIP(r.packet.dst), '224.0.0.18');
  assert.equal(r.packet.payload.length, 20);
  assert.ok(decodeAdvert(r.packet.payload, MC).ok);
});

interface Fixture {
  name: string;
  family: 4 | 6;
  src: string;
  dst: string;
  ttl: number;
  vrrp: string;
  expect: { version: 2 | 3; vrid: number; priority: number; intervalCs: number; addresses: string[]; password?: string };
}
const fixtures = JSON.parse(readFileSync(new URL('../../../test/fixtures/vrrp/keepalived-adverts.json', import.meta.url), 'utf8')) as {
  command: string;
  adverts: Fixture[];
};

test('fixtures captured from a real keepalived cover v2, v3, IPv6, unicast and PASS', () => {
  const names = fixtures.adverts.map((f) => f.name).join(' ');
  for (const word of ['v2', 'v3', 'ipv6', 'unicast', 'pass', 'prio0']) assert.match(names, new RegExp(word));
});

for (const f of fixtures.adverts) {
  test(`keepalived fixture ${f.name}: decodes, and re-encodes byte-exact`, () => {
    const endpoints = ep(f.src, f.dst);
    assert.equal(f.ttl, 255);
    const r = decodeAdvert(hex(f.vrrp), endpoints);
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.equal(r.advert.version, f.expect.version);
    assert.equal(r.advert.vrid, f.expect.vrid);
    assert.equal(r.advert.priority, f.expect.priority);
    assert.equal(r.advert.intervalCs, f.expect.intervalCs);
    assert.deepEqual(r.advert.addresses.map(formatIP), f.expect.addresses);
    assert.equal(r.advert.password, f.expect.password);
    assert.deepEqual(encodeAdvert(r.advert, endpoints), hex(f.vrrp));
  });
}

test('decode names the reason for each kind of bad message', () => {
  const good = hex('31 33 96 01 0064 3c21 c0a84d64');
  const cases: [string, Buffer, Endpoints, string][] = [
    ['short', good.subarray(0, 6), MC, 'too-short'],
    ['version 4', Buffer.concat([Buffer.from([0x41]), good.subarray(1)]), MC, 'version'],
    ['type 2', Buffer.concat([Buffer.from([0x32]), good.subarray(1)]), MC, 'type'],
    ['count 2 but one address', Buffer.concat([good.subarray(0, 3), Buffer.from([2]), good.subarray(4)]), MC, 'length'],
    ['flipped bit', Buffer.concat([good.subarray(0, 10), Buffer.from([(good[10] ?? 0) ^ 1]), good.subarray(11)]), MC, 'checksum'],
    ['v3 checksum with another destination', good, ep('192.168.77.1', '192.168.77.2'), 'checksum'],
    ['v2 over IPv6', hex('2133 9601 0001 3abd c0a84d64 0000000000000000'), ep('fe80::1', 'ff02::12'), 'family'],
    ['v2 auth type 2', hex('2133 9601 0201 38bd c0a84d64 0000000000000000'), MC, 'auth-type'],
  ];
  for (const [name, bytes, endpoints, reason] of cases) {
    const r = decodeAdvert(bytes, endpoints);
    assert.equal(r.ok ? 'accepted' : r.error.reason, reason, name);
  }
});

test('encode refuses what cannot go on the wire', () => {
  assert.throws(() => encodeAdvert({ version: 2, vrid: 1, priority: 1, intervalCs: 100, addresses: [] }, ep('fe80::1', 'ff02::12')), /IPv4 only/);
  assert.throws(() => encodeAdvert({ version: 3, vrid: 0, priority: 1, intervalCs: 100, addresses: [] }, MC), /VRID/);
  assert.throws(() => encodeAdvert({ version: 3, vrid: 1, priority: 1, intervalCs: 4096, addresses: [] }, MC), /interval/);
  assert.throws(() => encodeAdvert({ version: 2, vrid: 1, priority: 1, intervalCs: 100, addresses: [], authType: 1, password: '123456789' }, MC), /8 bytes/);
});

const v4 = fc.uint8Array({ minLength: 4, maxLength: 4 }).map((a) => Buffer.from(a));
const v6 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a));

test('property: decode ∘ encode is the identity (v3, IPv4 and IPv6)', () => {
  fc.assert(
    fc.property(fc.boolean(), fc.integer({ min: 1, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 4095 }), fc.nat(20), (is6, vrid, priority, intervalCs, n) => {
      const gen = is6 ? v6 : v4;
      const addresses = fc.sample(gen, { numRuns: n, seed: vrid * 7 + n });
      const e: Endpoints = { family: is6 ? 6 : 4, src: fc.sample(gen, 1)[0] ?? Buffer.alloc(is6 ? 16 : 4), dst: is6 ? parseIPv6('ff02::12') : parseIP('224.0.0.18') };
      const advert: Advert = { version: 3, vrid, priority, intervalCs, addresses };
      const r = decodeAdvert(encodeAdvert(advert, e), e);
      assert.ok(r.ok);
      assert.deepEqual(r.advert, advert);
    }),
  );
});

test('property: decode ∘ encode is the identity (v2 with and without PASS)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 255 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 255 }), fc.array(v4, { maxLength: 20 }), fc.option(fc.stringMatching(/^[a-zA-Z0-9]{1,8}$/)), (vrid, priority, s, addresses, pw) => {
      const advert: Advert = { version: 2, vrid, priority, intervalCs: s * 100, addresses, authType: pw === null ? 0 : AUTH_PASS };
      if (pw !== null) advert.password = pw;
      const r = decodeAdvert(encodeAdvert(advert, MC), MC);
      assert.ok(r.ok);
      assert.deepEqual(r.advert, advert);
    }),
  );
});

test('property: any single-bit flip in a v3 advert is caught (checksum or structure)', () => {
  const base = encodeAdvert({ version: 3, vrid: 51, priority: 150, intervalCs: 100, addresses: [VIP, parseIP('192.168.77.101')] }, MC);
  fc.assert(
    fc.property(fc.nat(base.length * 8 - 1), (bit) => {
      const m = Buffer.from(base);
      m[bit >> 3] = (m[bit >> 3] ?? 0) ^ (0x80 >> (bit & 7));
      // Flipping a reserved interval bit changes the checksum too, so every flip is a rejection.
      assert.equal(decodeAdvert(m, MC).ok, false);
    }),
  );
});

test('property: decode never throws on arbitrary bytes', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (bytes, is6) => {
      const r = decodeAdvert(bytes, is6 ? ep('fe80::1', 'ff02::12') : MC);
      assert.equal(typeof r.ok, 'boolean');
    }),
    { numRuns: 5000 },
  );
});

test('addresses: IPv6 text round-trips canonically', () => {
  for (const [inp, out] of [['fe80::1', 'fe80::1'], ['FF02:0:0:0:0:0:0:12', 'ff02::12'], ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], ['::', '::'], ['::ffff:1.2.3.4', '::ffff:102:304']]) {
    assert.equal(formatIP(parseIP(inp as string)), out);
  }
});
