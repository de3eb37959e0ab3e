import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyDrain, drainKey, type DrainPolicy } from '../../daemon/dataplane/ipvs/drain.js';
import type { ObservedRealServer, ObservedService, ServiceSpec } from '../../daemon/dataplane/types.js';

const rs = (n: number, weight: number): ObservedRealServer => ({ id: `10.0.1.${n}:80`, address: `10.0.1.${n}`, port: 80, weight, method: 'nat', activeConns: 0, inactiveConns: 0, persistConns: 0 });
const svc = (proto: 'tcp' | 'udp', servers: ObservedRealServer[]): ObservedService => ({ id: `${proto}:10.0.0.1:80`, family: 4, protocol: proto, address: '10.0.0.1', port: 80, scheduler: 'wrr', realServers: servers });
const desiredOf = (s: ObservedService, keep: number[]): ServiceSpec => ({ ...s, realServers: s.realServers.filter((_, i) => keep.includes(i)).map((r) => ({ id: r.id, address: r.address, port: r.port, weight: r.weight, method: r.method })) });

const graceful: DrainPolicy = { mode: 'graceful', timeoutMs: 10_000 };

test('graceful: a removed server with connections stays at weight 0 until its connections reach 0', () => {
  const busy = { ...rs(2, 5), activeConns: 3, inactiveConns: 1 };
  const obs = svc('tcp', [rs(1, 5), busy]);
  const owned = new Set([obs.id]);
  const desired = { services: [desiredOf(obs, [0])] };
  const key = drainKey(obs.id, busy.id);

  const s1 = applyDrain(desired, { services: [obs] }, owned, new Map(), graceful, 1000);
  assert.deepEqual(s1.started, [key]);
  assert.deepEqual(s1.effective.services[0]?.realServers.map((r) => [r.id, r.weight]), [['10.0.1.1:80', 5], ['10.0.1.2:80', 0]]);
  assert.equal(s1.state.get(key)?.since, 1000);

  // Still busy 5 s later: still kept, same start time.
  const s2 = applyDrain(desired, { services: [{ ...obs, realServers: [rs(1, 5), { ...busy, weight: 0, activeConns: 1 }] }] }, owned, s1.state, graceful, 6000);
  assert.deepEqual(s2.started, []);
  assert.equal(s2.state.get(key)?.since, 1000);
  assert.equal(s2.effective.services[0]?.realServers.length, 2);

  // Connections drained: it leaves the effective table (the reconciler deletes it).
  const s3 = applyDrain(desired, { services: [{ ...obs, realServers: [rs(1, 5), { ...busy, weight: 0, activeConns: 0, inactiveConns: 0 }] }] }, owned, s2.state, graceful, 7000);
  assert.deepEqual(s3.finished, [{ key, reason: 'drained' }]);
  assert.equal(s3.effective.services[0]?.realServers.length, 1);
  assert.equal(s3.state.size, 0);
});

test('graceful: the timeout ends a drain even with connections left', () => {
  const busy = { ...rs(2, 0), activeConns: 9 };
  const obs = svc('tcp', [rs(1, 5), busy]);
  const owned = new Set([obs.id]);
  const desired = { services: [desiredOf(obs, [0])] };
  const key = drainKey(obs.id, busy.id);
  const s1 = applyDrain(desired, { services: [obs] }, owned, new Map(), graceful, 0);
  const s2 = applyDrain(desired, { services: [obs] }, owned, s1.state, graceful, 9_999);
  assert.equal(s2.finished.length, 0);
  const s3 = applyDrain(desired, { services: [obs] }, owned, s2.state, graceful, 10_000);
  assert.deepEqual(s3.finished, [{ key, reason: 'timeout' }]);
});

test('graceful: an idle server goes at once; UDP goes at once unless drainUdp', () => {
  const obs = svc('tcp', [rs(1, 5), rs(2, 5)]);
  const r1 = applyDrain({ services: [desiredOf(obs, [0])] }, { services: [obs] }, new Set([obs.id]), new Map(), graceful, 0);
  assert.deepEqual(r1.finished.map((f) => f.reason), ['drained']);
  const udp = svc('udp', [rs(1, 5), { ...rs(2, 5), inactiveConns: 40 }]);
  const r2 = applyDrain({ services: [desiredOf(udp, [0])] }, { services: [udp] }, new Set([udp.id]), new Map(), graceful, 0);
  assert.deepEqual(r2.finished.map((f) => f.reason), ['immediate']);
  const r3 = applyDrain({ services: [desiredOf(udp, [0])] }, { services: [udp] }, new Set([udp.id]), new Map(), { ...graceful, drainUdp: true }, 0);
  assert.equal(r3.effective.services[0]?.realServers.length, 2);
});

test('immediate: removed servers go at once; inhibit: kept at weight 0 past any timeout', () => {
  const busy = { ...rs(2, 5), activeConns: 3 };
  const obs = svc('tcp', [rs(1, 5), busy]);
  const desired = { services: [desiredOf(obs, [0])] };
  const owned = new Set([obs.id]);
  const imm = applyDrain(desired, { services: [obs] }, owned, new Map(), { mode: 'immediate', timeoutMs: 0 }, 0);
  assert.equal(imm.effective.services[0]?.realServers.length, 1);
  const inh1 = applyDrain(desired, { services: [obs] }, owned, new Map(), { mode: 'inhibit', timeoutMs: 1 }, 0);
  const inh2 = applyDrain(desired, { services: [{ ...obs, realServers: [rs(1, 5), { ...busy, weight: 0, activeConns: 0 }] }] }, owned, inh1.state, { mode: 'inhibit', timeoutMs: 1 }, 1e9);
  assert.deepEqual(inh2.effective.services[0]?.realServers.map((r) => r.weight), [5, 0]);
});

test('a server that comes back ends its drain; foreign services are not drained', () => {
  const busy = { ...rs(2, 0), activeConns: 3 };
  const obs = svc('tcp', [rs(1, 5), busy]);
  const s1 = applyDrain({ services: [desiredOf(obs, [0])] }, { services: [obs] }, new Set([obs.id]), new Map(), graceful, 0);
  assert.equal(s1.state.size, 1);
  const back = { ...desiredOf(obs, [0, 1]) };
  const s2 = applyDrain({ services: [back] }, { services: [obs] }, new Set([obs.id]), s1.state, graceful, 1);
  assert.equal(s2.state.size, 0);
  const foreign = applyDrain({ services: [desiredOf(obs, [0])] }, { services: [obs] }, new Set(), new Map(), graceful, 0);
  assert.equal(foreign.state.size, 0);
});
