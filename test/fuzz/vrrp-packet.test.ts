// Fuzzing the VRRP packet decoder (issue 17): what a raw socket can hand lvsd — IPv4 datagrams with
// options, bad header and total lengths, fragment bits; v2 and v3 adverts for both families, cut, grown,
// with flipped bytes, wrong checksums, other versions and types, auth mismatches, any VRID. Whatever
// comes, the decoder returns an advert that is well formed or a DecodeError with a known reason, never a
// throw; and an advert that was not mutated decodes to what was encoded (so the check can fail).
// Settings (N, time bound, seed): test/support/fuzz-text.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeAdvert, encodeAdvert, parseIPv4Packet, type Advert, type DecodeReason, type Endpoints } from '../../daemon/vrrp/packet.js';
import { runFuzz } from '../support/fuzz-text.js';

const REASONS: ReadonlySet<DecodeReason> = new Set(['too-short', 'version', 'type', 'length', 'checksum', 'family', 'auth-type', 'auth', 'interval']);

const bytes = (n: number): fc.Arbitrary<Buffer> => fc.uint8Array({ minLength: n, maxLength: n }).map((u) => Buffer.from(u));

const advertArb: fc.Arbitrary<{ advert: Advert; ep: Endpoints }> = fc
  .record({
    v6: fc.boolean(),
    v2: fc.boolean(),
    vrid: fc.integer({ min: 1, max: 255 }),
    priority: fc.integer({ min: 0, max: 255 }),
    intervalS: fc.integer({ min: 1, max: 40 }),
    intervalCs: fc.integer({ min: 1, max: 4095 }),
    n: fc.integer({ min: 0, max: 20 }),
    seed: bytes(16 * 21 + 32),
    auth: fc.constantFrom(0, 1),
    password: fc.string({ maxLength: 8, unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  })
  .map((r) => {
    const family = r.v6 ? 6 : 4;
    const alen = family === 4 ? 4 : 16;
    const version: 2 | 3 = r.v2 && !r.v6 ? 2 : 3;
    const addresses = Array.from({ length: r.n }, (_, i) => Buffer.from(r.seed.subarray(i * alen, i * alen + alen)));
    const ep: Endpoints = { family, src: r.seed.subarray(0, alen), dst: r.seed.subarray(16, 16 + alen) };
    const advert: Advert = { version, vrid: r.vrid, priority: r.priority, intervalCs: version === 2 ? r.intervalS * 100 : r.intervalCs, addresses };
    if (version === 2) {
      advert.authType = r.auth;
      if (r.auth === 1) advert.password = r.password;
    }
    return { advert, ep };
  });

type Mutation =
  | { kind: 'none' }
  | { kind: 'flip'; at: number; xor: number }[]
  | { kind: 'cut'; at: number }
  | { kind: 'grow'; extra: Buffer }
  | { kind: 'set'; at: number; value: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 3, arbitrary: fc.array(fc.record({ kind: fc.constant('flip' as const), at: fc.nat(400), xor: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 4 }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat(400) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('grow' as const), extra: fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.from(u)) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(8), value: fc.nat(255) }) },
);

function mutate(msg: Buffer, m: Mutation): Buffer {
  const b = Buffer.from(msg);
  if (Array.isArray(m)) {
    for (const f of m) if (b.length > 0) b[f.at % b.length] = (b[f.at % b.length] ?? 0) ^ f.xor;
    return b;
  }
  switch (m.kind) {
    case 'none': return b;
    case 'cut': return b.subarray(0, m.at % (b.length + 1));
    case 'grow': return Buffer.concat([b, m.extra]);
    case 'set': if (m.at < b.length) b[m.at] = m.value; return b;
  }
}

/** An IPv4 datagram around `payload`: any IHL (options are junk bytes), any total length, any fragment bits. */
const ipv4Arb = fc.record({ ihlWords: fc.integer({ min: 0, max: 15 }), version: fc.constantFrom(4, 4, 4, 6, 0), total: fc.option(fc.nat(70_000)), frag: fc.nat(0xffff), ttl: fc.nat(255), options: bytes(40), cut: fc.option(fc.nat(120)) });

function ipv4(payload: Buffer, ep: Endpoints, h: { ihlWords: number; version: number; total: number | null; frag: number; ttl: number; options: Buffer; cut: number | null }): Buffer {
  const ihl = Math.max(h.ihlWords, 0) * 4;
  const head = Buffer.alloc(Math.max(20, ihl));
  head[0] = (h.version << 4) | h.ihlWords;
  head.writeUInt16BE(Math.min(h.total ?? head.length + payload.length, 0xffff), 2);
  head.writeUInt16BE(h.frag, 6);
  head[8] = h.ttl;
  head[9] = 112;
  Buffer.from(ep.src.length === 4 ? ep.src : ep.src.subarray(0, 4)).copy(head, 12);
  Buffer.from(ep.dst.length === 4 ? ep.dst : ep.dst.subarray(0, 4)).copy(head, 16);
  h.options.subarray(0, Math.max(0, head.length - 20)).copy(head, 20);
  const all = Buffer.concat([head, payload]);
  return h.cut === null ? all : all.subarray(0, h.cut);
}

function checkDecoded(r: ReturnType<typeof decodeAdvert>, family: 4 | 6): void {
  if (!r.ok) {
    assert.ok(REASONS.has(r.error.reason), r.error.message);
    return;
  }
  const a = r.advert;
  assert.ok([2, 3].includes(a.version), `version ${String(a.version)}`);
  assert.ok(Number.isInteger(a.vrid) && a.vrid >= 0 && a.vrid <= 255, `vrid ${String(a.vrid)}`);
  assert.ok(Number.isInteger(a.priority) && a.priority >= 0 && a.priority <= 255);
  assert.ok(Number.isInteger(a.intervalCs) && a.intervalCs >= 0);
  assert.ok(a.addresses.length <= 255);
  for (const x of a.addresses) assert.equal(x.length, family === 4 ? 4 : 16);
}

test('fuzz: mutated adverts never make the decoder throw; an untouched advert decodes to itself', () => {
  const r = runFuzz('vrrp advert', fc.tuple(advertArb, mutationArb), ([{ advert, ep }, m]) => {
    const wire = encodeAdvert(advert, ep);
    const got = decodeAdvert(mutate(wire, m), ep);
    checkDecoded(got, ep.family);
    if (!Array.isArray(m) && m.kind === 'none') {
      assert.ok(got.ok, got.ok ? '' : got.error.message);
      assert.equal(got.advert.vrid, advert.vrid);
      assert.equal(got.advert.priority, advert.priority);
      assert.equal(got.advert.intervalCs, advert.intervalCs);
      assert.deepEqual(got.advert.addresses, advert.addresses);
    }
    // the other family's endpoints (v2 ⇄ v3 and v4 ⇄ v6 confusion): still no throw
    const other: Endpoints = ep.family === 4 ? { family: 6, src: Buffer.alloc(16, 1), dst: Buffer.alloc(16, 2) } : { family: 4, src: Buffer.alloc(4, 1), dst: Buffer.alloc(4, 2) };
    checkDecoded(decodeAdvert(wire, other), other.family);
  });
  assert.ok(r.runs > 0);
});

test('fuzz: raw IPv4 datagrams (options, bad lengths, fragments) never make parse + decode throw', () => {
  const r = runFuzz('vrrp ipv4 datagram', fc.tuple(advertArb, mutationArb, ipv4Arb), ([{ advert, ep }, m, h]) => {
    const v4: Endpoints = ep.family === 4 ? ep : { family: 4, src: Buffer.from(ep.src.subarray(0, 4)), dst: Buffer.from(ep.dst.subarray(0, 4)) };
    const a: Advert = ep.family === 4 ? advert : { ...advert, addresses: advert.addresses.map((x) => Buffer.from(x.subarray(0, 4))) };
    const pkt = ipv4(mutate(encodeAdvert(a, v4), m), v4, h);
    const p = parseIPv4Packet(pkt);
    if (!p.ok) {
      assert.ok(REASONS.has(p.error.reason));
      return;
    }
    assert.ok(p.packet.payload.length <= pkt.length);
    checkDecoded(decodeAdvert(p.packet.payload, { family: 4, src: p.packet.src, dst: p.packet.dst }), 4);
  });
  assert.ok(r.runs > 0);
});

test('fuzz: random bytes never make parse + decode throw', () => {
  const r = runFuzz('vrrp random bytes', fc.uint8Array({ maxLength: 200 }), (u) => {
    const p = parseIPv4Packet(u);
    if (p.ok) checkDecoded(decodeAdvert(p.packet.payload, { family: 4, src: p.packet.src, dst: p.packet.dst }), 4);
    checkDecoded(decodeAdvert(u, { family: 6, src: Buffer.alloc(16), dst: Buffer.alloc(16) }), 6);
  });
  assert.ok(r.runs > 0);
});
