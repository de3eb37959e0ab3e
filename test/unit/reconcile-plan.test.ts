import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPlan, plan, type PlanOp } from '../../daemon/dataplane/ipvs/reconcile.js';
import type { DesiredTable, RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';

// A small id space so desired and actual overlap often.
const rsArb: fc.Arbitrary<RealServerSpec> = fc
  .record({
    n: fc.integer({ min: 1, max: 6 }),
    weight: fc.integer({ min: 0, max: 4 }),
    method: fc.constantFrom('nat' as const, 'dr' as const, 'tun' as const),
    gue: fc.boolean(),
    upper: fc.constantFrom(0, 100),
  })
  .map(({ n, weight, method, gue, upper }) => {
    const r: RealServerSpec = { id: `10.0.1.${n}:80`, address: `10.0.1.${n}`, port: 80, weight, method };
    if (method === 'tun' && gue) r.tunnel = { type: 'gue', port: 6080, checksum: 'csum' };
    if (upper > 0) r.upperThreshold = upper;
    return r;
  });
const svcArb: fc.Arbitrary<ServiceSpec> = fc
  .record({
    n: fc.integer({ min: 1, max: 5 }),
    scheduler: fc.constantFrom('rr' as const, 'wrr' as const, 'sh' as const),
    persistent: fc.constantFrom('none' as const, 'plain' as const, 'sip' as const),
    rs: fc.uniqueArray(rsArb, { selector: (r) => r.id, maxLength: 5 }),
    takeOver: fc.boolean(),
  })
  .map(({ n, scheduler, persistent, rs, takeOver }) => {
    const s: ServiceSpec = { id: `tcp:10.0.0.${n}:80`, family: 4, protocol: 'tcp', address: `10.0.0.${n}`, port: 80, scheduler, realServers: rs };
    if (persistent !== 'none') s.persistence = { timeoutSec: 300, netmask: '255.255.255.255', ...(persistent === 'sip' ? { engine: 'sip' } : {}) };
    if (takeOver) s.takeOver = true;
    return s;
  });
const tableArb: fc.Arbitrary<DesiredTable> = fc.uniqueArray(svcArb, { selector: (s) => s.id, maxLength: 5 }).map((services) => ({ services }));

const byId = (t: DesiredTable): Map<string, ServiceSpec> => new Map(t.services.map((s) => [s.id, s]));
function norm(s: ServiceSpec | undefined): unknown {
  if (s === undefined) return undefined;
  return {
    id: s.id,
    scheduler: s.scheduler,
    persistence: s.persistence,
    rs: [...s.realServers].sort((a, b) => a.id.localeCompare(b.id)).map((r) => [r.id, r.weight, r.method, r.tunnel?.type ?? null, r.upperThreshold ?? 0]),
  };
}

test('applying the plan to the actual table yields the desired one (for what lvsd owns or takes over)', () => {
  fc.assert(
    fc.property(tableArb, tableArb, fc.uniqueArray(fc.integer({ min: 1, max: 5 })), (desired, actual, ownedNs) => {
      const owned = new Set(ownedNs.map((n) => `tcp:10.0.0.${n}:80`));
      const p = plan(desired, actual, owned);
      const after = byId(applyPlan(actual, p.ops));
      const before = byId(actual);
      for (const want of desired.services) {
        const conflict = before.has(want.id) && !owned.has(want.id) && want.takeOver !== true;
        assert.equal(p.conflicts.includes(want.id), conflict);
        // Conflicting services stay exactly as they were; every other desired service matches desired.
        assert.deepEqual(norm(after.get(want.id)), norm(conflict ? before.get(want.id) : want));
        assert.equal(p.owned.has(want.id), !conflict);
      }
      for (const have of actual.services) {
        if (desired.services.some((s) => s.id === have.id)) continue;
        // Owned and no longer desired: gone. Not owned: untouched (never flushed).
        assert.deepEqual(norm(after.get(have.id)), owned.has(have.id) ? undefined : norm(have));
      }
      // Idempotent: the result needs no further operation.
      assert.deepEqual(plan(desired, { services: [...after.values()] }, p.owned).ops, []);
    }),
    { numRuns: 1000 },
  );
});

test('the plan is minimal: one operation per differing object, none for equal ones', () => {
  fc.assert(
    fc.property(tableArb, tableArb, (desired, actual) => {
      const owned = new Set(actual.services.map((s) => s.id));
      const p = plan(desired, actual, owned);
      const have = byId(actual);
      let expected = 0;
      for (const want of desired.services) {
        const cur = have.get(want.id);
        if (cur === undefined) {
          expected += 1 + want.realServers.length;
          continue;
        }
        if (cur.scheduler !== want.scheduler || cur.persistence?.timeoutSec !== want.persistence?.timeoutSec || cur.persistence?.engine !== want.persistence?.engine) expected++;
        const curRs = new Map(cur.realServers.map((r) => [r.id, r]));
        const wantIds = new Set(want.realServers.map((r) => r.id));
        expected += cur.realServers.filter((r) => !wantIds.has(r.id)).length;
        for (const r of want.realServers) {
          const c = curRs.get(r.id);
          if (c === undefined || JSON.stringify([c.weight, c.method, c.method === 'tun' ? c.tunnel ?? null : null, c.upperThreshold ?? 0]) !== JSON.stringify([r.weight, r.method, r.method === 'tun' ? r.tunnel ?? null : null, r.upperThreshold ?? 0])) expected++;
        }
      }
      expected += actual.services.filter((s) => !desired.services.some((d) => d.id === s.id)).length;
      assert.equal(p.ops.length, expected);
    }),
    { numRuns: 500 },
  );
});

test('one weight change in a 1,000-service table is exactly one update-real-server', () => {
  const services: ServiceSpec[] = Array.from({ length: 1000 }, (_, i) => ({
    id: `tcp:10.1.${i >> 8}.${i & 255}:80`, family: 4 as const, protocol: 'tcp' as const, address: `10.1.${i >> 8}.${i & 255}`, port: 80, scheduler: 'wrr' as const,
    realServers: Array.from({ length: 10 }, (_, j) => ({ id: `10.2.0.${j + 1}:80`, address: `10.2.0.${j + 1}`, port: 80, weight: 1, method: 'nat' as const })),
  }));
  const actual = { services };
  const desired = structuredClone(actual);
  const target = desired.services[500]?.realServers[3];
  assert.ok(target);
  target.weight = 7;
  const p = plan(desired, actual, new Set(services.map((s) => s.id)));
  assert.equal(p.ops.length, 1);
  const op = p.ops[0] as Extract<PlanOp, { kind: 'update-real-server' }>;
  assert.equal(op.kind, 'update-real-server');
  assert.equal(op.realServer.weight, 7);
  assert.equal(op.before.weight, 1);
  assert.equal(op.service.id, 'tcp:10.1.1.244:80');
});

test('a foreign service is reported as a conflict and left alone; takeOver adopts it without re-creating', () => {
  const foreign: ServiceSpec = { id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr', realServers: [{ id: '10.0.1.1:80', address: '10.0.1.1', port: 80, weight: 1, method: 'nat' }] };
  const want: ServiceSpec = { ...foreign, scheduler: 'wrr', realServers: [{ id: '10.0.1.1:80', address: '10.0.1.1', port: 80, weight: 5, method: 'nat' }] };
  const p1 = plan({ services: [want] }, { services: [foreign] }, new Set());
  assert.deepEqual(p1.ops, []);
  assert.deepEqual(p1.conflicts, ['tcp:10.0.0.1:80']);
  const p2 = plan({ services: [{ ...want, takeOver: true }] }, { services: [foreign] }, new Set());
  assert.deepEqual(p2.ops.map((o) => o.kind), ['update-service', 'update-real-server']);
  assert.ok(p2.owned.has('tcp:10.0.0.1:80'));
});

test('duplicate ids in the desired table are rejected with the id', () => {
  const s: ServiceSpec = { id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr', realServers: [] };
  assert.throws(() => plan({ services: [s, s] }, { services: [] }, new Set()), /service tcp:10\.0\.0\.1:80 more than once/);
});

test('a persistence engine travels to the kernel as PE_NAME and back from it; plain persistence carries none', async () => {
  const { toIpvsService, fromIpvs } = await import('../../daemon/dataplane/ipvs/spec.js');
  const sip: ServiceSpec = { id: 'udp:10.0.0.1:5060', family: 4, protocol: 'udp', address: '10.0.0.1', port: 5060, scheduler: 'rr', realServers: [], persistence: { timeoutSec: 60, netmask: '255.255.255.255', engine: 'sip' } };
  const k = toIpvsService(sip);
  assert.equal(k.peName, 'sip');
  assert.deepEqual(fromIpvs({ ...k, dests: [] }).persistence, sip.persistence);
  const plain = toIpvsService({ ...sip, persistence: { timeoutSec: 60, netmask: '255.255.255.255' } });
  assert.equal(plain.peName, undefined);
  // A change of engine alone is a service update.
  const p = plan({ services: [sip] }, { services: [{ ...sip, persistence: { timeoutSec: 60, netmask: '255.255.255.255' } }] }, new Set([sip.id]));
  assert.deepEqual(p.ops.map((o) => o.kind), ['update-service']);
});
