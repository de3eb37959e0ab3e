// Userspace schedulers and PROXY protocol headers: pure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Failover, LeastConnections, RoundRobin, SourceHash, WeightedRoundRobin, pickerFor, type Pickable } from '../../daemon/dataplane/userspace/schedulers.js';
import { proxyV1, proxyV2, unmapped } from '../../daemon/dataplane/userspace/proxy-protocol.js';
import { SCHEDULERS } from '../../daemon/dataplane/types.js';

const servers = (...weights: number[]): Pickable[] => weights.map((weight, i) => ({ id: `rs${i + 1}`, weight, active: 0 }));

function counts(picker: { pick: (b: readonly Pickable[], s: string) => Pickable | undefined }, pool: Pickable[], n: number, source = (i: number) => `10.0.0.${i % 250}`): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const b = picker.pick(pool, source(i));
    if (b !== undefined) out[b.id] = (out[b.id] ?? 0) + 1;
  }
  return out;
}

test('rr cycles over servers with weight > 0 and skips tried ones', () => {
  const pool = servers(1, 0, 5);
  const rr = new RoundRobin();
  assert.deepEqual([0, 1, 2, 3].map(() => rr.pick(pool, '')?.id), ['rs1', 'rs3', 'rs1', 'rs3']);
  const first = pool[0];
  assert.ok(first !== undefined);
  assert.equal(rr.pick(pool, '', new Set([first]))?.id, 'rs3');
  assert.equal(rr.pick(pool, '', new Set(pool)), undefined);
});

test('wrr is smooth and exact: 5:1:1 over 7 picks', () => {
  const wrr = new WeightedRoundRobin();
  const pool = servers(5, 1, 1);
  const seq = Array.from({ length: 7 }, () => wrr.pick(pool, '')?.id);
  assert.deepEqual(seq, ['rs1', 'rs1', 'rs2', 'rs1', 'rs3', 'rs1', 'rs1']);
});

test('property: wrr gives every server exactly its share over one full cycle', () => {
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 6 }), (weights) => {
    const pool = servers(...weights);
    const total = weights.reduce((a, b) => a + b, 0);
    const c = counts(new WeightedRoundRobin(), pool, total * 3);
    for (const b of pool) assert.equal(c[b.id] ?? 0, b.weight * 3);
  }));
});

test('lc picks the least active; wlc divides by weight', () => {
  const pool = servers(1, 1, 4);
  const [a, b, c] = pool as [Pickable, Pickable, Pickable];
  a.active = 3; b.active = 1; c.active = 2;
  assert.equal(new LeastConnections(false).pick(pool, '')?.id, 'rs2');
  assert.equal(new LeastConnections(true).pick(pool, '')?.id, 'rs3');
});

test('sh pins a source to one server, spreads sources by weight, and falls over when tried', () => {
  const pool = servers(1, 1, 2);
  const sh = new SourceHash();
  const one = new Set(Array.from({ length: 20 }, () => sh.pick(pool, '10.1.2.3')?.id));
  assert.equal(one.size, 1);
  const spread = counts(sh, pool, 4000, (i) => `10.${i >> 8}.${i & 255}.1`);
  assert.ok((spread.rs3 ?? 0) > (spread.rs1 ?? 0) * 1.5, JSON.stringify(spread));
  const chosen = pool.find((p) => p.id === [...one][0]);
  assert.ok(chosen !== undefined);
  const next = sh.pick(pool, '10.1.2.3', new Set([chosen]));
  assert.ok(next !== undefined && next !== chosen);
});

test('fo sends everything to the highest weight', () => {
  assert.deepEqual(counts(new Failover(), servers(2, 7, 7), 10), { rs2: 10 });
});

test('every IPVS scheduler name has a userspace picker', () => {
  for (const s of SCHEDULERS) assert.ok(pickerFor(s).pick(servers(1, 1), 'x') !== undefined, s);
});

test('PROXY v1: TCP4 and TCP6 lines; IPv4-mapped addresses unwrapped', () => {
  assert.equal(proxyV1({ protocol: 'tcp', srcAddress: '::ffff:10.9.0.1', srcPort: 40000, dstAddress: '10.9.0.100', dstPort: 80 }).toString(), 'PROXY TCP4 10.9.0.1 10.9.0.100 40000 80\r\n');
  assert.equal(proxyV1({ protocol: 'tcp', srcAddress: 'fd09::1', srcPort: 1, dstAddress: 'fd09::100', dstPort: 443 }).toString(), 'PROXY TCP6 fd09::1 fd09::100 1 443\r\n');
  assert.equal(unmapped('::ffff:1.2.3.4'), '1.2.3.4');
});

test('PROXY v2: signature, version/command, family/protocol, length, addresses and ports', () => {
  const v4 = proxyV2({ protocol: 'tcp', srcAddress: '10.9.0.1', srcPort: 40000, dstAddress: '10.9.0.100', dstPort: 80 });
  assert.equal(v4.subarray(0, 12).toString('hex'), '0d0a0d0a000d0a515549540a');
  assert.equal(v4[12], 0x21);
  assert.equal(v4[13], 0x11);
  assert.equal(v4.readUInt16BE(14), 12);
  assert.deepEqual([...v4.subarray(16, 24)], [10, 9, 0, 1, 10, 9, 0, 100]);
  assert.equal(v4.readUInt16BE(24), 40000);
  assert.equal(v4.readUInt16BE(26), 80);
  const v6 = proxyV2({ protocol: 'udp', srcAddress: 'fd09::1', srcPort: 5, dstAddress: 'fd09::100', dstPort: 53 });
  assert.equal(v6[13], 0x22);
  assert.equal(v6.readUInt16BE(14), 36);
  assert.equal(v6.subarray(16, 32).toString('hex'), 'fd090000000000000000000000000001');
  assert.equal(v6.subarray(32, 48).toString('hex'), 'fd090000000000000000000000000100');
  const mixed = proxyV2({ protocol: 'tcp', srcAddress: '10.9.0.1', srcPort: 5, dstAddress: 'fd09::100', dstPort: 53 });
  assert.equal(mixed.subarray(16, 32).toString('hex'), '00000000000000000000ffff0a090001');
});
