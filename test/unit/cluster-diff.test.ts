// clusterDifferences: what the Cluster page flags between directors, one case per kind, on snapshots of the
// fake director edited the way a drifted pair differs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterDifferences, type ClusterMember, type DifferenceKind } from '../../daemon/api/cluster/diff.js';
import { FakeDirector } from '../support/fake-director.js';
import type { DirectorSnapshot } from '../../daemon/director/snapshot.js';

const WEB = 'tcp:192.168.77.100:80';

/** A pair that agrees: the same config; lb1 MASTER of VI_1 at 150, lb2 BACKUP at 100. */
function pair(): { lb1: ClusterMember; lb2: ClusterMember } {
  const base = new FakeDirector().snapshot();
  const lb1: DirectorSnapshot = structuredClone({ ...base, node: 'lb1' });
  const lb2: DirectorSnapshot = structuredClone({ ...base, node: 'lb2' });
  for (const i of lb2.vrrp) {
    i.state = i.name === 'VI_1' ? 'BACKUP' : 'MASTER';
    i.basePriority = i.name === 'VI_1' ? 100 : 150;
  }
  for (const i of lb1.vrrp) i.basePriority = i.name === 'VI_1' ? 150 : 100;
  const auth = { VI_1: 'none', VI_2: 'none' };
  return { lb1: { snapshot: lb1, vrrpAuth: { ...auth } }, lb2: { snapshot: lb2, vrrpAuth: { ...auth } } };
}

const diff = (a: ClusterMember, b: ClusterMember) => clusterDifferences([{ name: 'lb1', member: a }, { name: 'lb2', member: b }]);
const kinds = (a: ClusterMember, b: ClusterMember): DifferenceKind[] => diff(a, b).map((d) => d.kind);

test('a pair that agrees has no differences, and one director alone has nothing to compare', () => {
  const { lb1, lb2 } = pair();
  assert.deepEqual(diff(lb1, lb2), []);
  assert.deepEqual(clusterDifferences([{ name: 'lb1', member: lb1 }]), []);
});

test('config hashes that differ are flagged with both short hashes', () => {
  const { lb1, lb2 } = pair();
  lb2.snapshot.config.hash = 'f'.repeat(64);
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => [d.kind, d.subject]), [['config-hash', 'config']]);
  assert.match(ds.map((d) => d.detail).join(), /ffffffffffff on lb2/);
});

test('VRID, VIPs and auth of one instance that disagree are each flagged on that instance', () => {
  const { lb1, lb2 } = pair();
  const vi1 = lb2.snapshot.vrrp.find((i) => i.name === 'VI_1');
  assert.ok(vi1);
  vi1.vrid = 61;
  vi1.vips = ['192.168.77.101/24'];
  lb2.vrrpAuth.VI_1 = 'PASS 0123456789ab';
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => d.kind).sort(), ['auth', 'vips', 'vrid']);
  for (const d of ds) assert.equal(d.subject, 'instance:VI_1');
  assert.match(ds.find((d) => d.kind === 'vrid')?.detail ?? '', /51 on lb1; 61 on lb2/);
});

test('an instance on one director only, and a priority tie, are flagged', () => {
  const { lb1, lb2 } = pair();
  lb2.snapshot.vrrp = lb2.snapshot.vrrp.filter((i) => i.name !== 'VI_2');
  const vi1 = lb2.snapshot.vrrp[0];
  assert.ok(vi1);
  vi1.basePriority = 150;
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => `${d.kind} ${d.subject}`).sort(), ['instance-set instance:VI_2', 'priority-tie instance:VI_1']);
  assert.match(ds.find((d) => d.kind === 'instance-set')?.detail ?? '', /on lb1 but not on lb2/);
});

test('two masters for one VRID are flagged, naming both directors', () => {
  const { lb1, lb2 } = pair();
  const vi1 = lb2.snapshot.vrrp.find((i) => i.name === 'VI_1');
  assert.ok(vi1);
  vi1.state = 'MASTER';
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => d.kind), ['two-masters']);
  assert.equal(ds[0]?.subject, 'vrid:4:51');
  assert.deepEqual(ds.map((d) => d.directors), [['lb1', 'lb2']]);
});

test('instances of one sync group that rank the directors differently are flagged; ranking alike is not', () => {
  const { lb1, lb2 } = pair();
  for (const m of [lb1, lb2]) for (const i of m.snapshot.vrrp) i.syncGroup = 'G1';
  // VI_1: lb1 > lb2, VI_2: lb2 > lb1 (the pair() priorities)
  assert.deepEqual(kinds(lb1, lb2), ['priority-order']);
  for (const i of lb2.snapshot.vrrp) i.basePriority = 100;
  for (const i of lb1.snapshot.vrrp) i.basePriority = 150;
  for (const i of lb2.snapshot.vrrp) i.state = 'BACKUP';
  assert.deepEqual(kinds(lb1, lb2), []);
});

test('service set, scheduler, real server set and a real server up on one director and down on the other', () => {
  const { lb1, lb2 } = pair();
  lb2.snapshot.virtualServices = lb2.snapshot.virtualServices.filter((s) => s.id !== 'udp:192.168.78.100:53');
  const web = lb2.snapshot.virtualServices.find((s) => s.id === WEB);
  assert.ok(web);
  web.scheduler = 'rr';
  web.realServers = web.realServers.filter((r) => r.id !== '10.0.1.13:80');
  const rs = web.realServers.find((r) => r.id === '10.0.1.11:80');
  assert.ok(rs);
  rs.health.status = 'down';
  const lb1rs = lb1.snapshot.virtualServices.find((s) => s.id === WEB)?.realServers.find((r) => r.id === '10.0.1.11:80');
  assert.ok(lb1rs);
  lb1rs.health.status = 'up';
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => `${d.kind} ${d.subject}`).sort(), [
    `health realServer:${WEB}/10.0.1.11:80`,
    `real-server-set realServer:${WEB}/10.0.1.13:80`,
    `service service:${WEB}`,
    'service-set service:udp:192.168.78.100:53',
  ]);
  assert.match(ds.find((d) => d.kind === 'health')?.detail ?? '', /up on lb1; down on lb2/);
  assert.match(ds.find((d) => d.kind === 'service')?.detail ?? '', /wrr\/nat on lb1; rr\/nat on lb2/);
});

test('unknown health (not checked yet) against up is not a disagreement', () => {
  const { lb1, lb2 } = pair();
  const rs = lb2.snapshot.virtualServices[0]?.realServers[0];
  assert.ok(rs);
  rs.health.status = 'unknown';
  assert.deepEqual(diff(lb1, lb2), []);
});

test('three directors: a VRRP instance missing on one is named with who has it', () => {
  const { lb1, lb2 } = pair();
  const lb3 = structuredClone(lb2);
  lb3.snapshot.node = 'lb3';
  for (const i of lb3.snapshot.vrrp) { i.state = 'BACKUP'; i.basePriority = 50; }
  lb3.snapshot.vrrp = lb3.snapshot.vrrp.filter((i) => i.name === 'VI_1');
  const ds = clusterDifferences([{ name: 'lb1', member: lb1 }, { name: 'lb2', member: lb2 }, { name: 'lb3', member: lb3 }]);
  assert.deepEqual(ds.map((d) => d.kind), ['instance-set']);
  assert.match(ds[0]?.detail ?? '', /VI_2 is on lb1, lb2 but not on lb3/);
});

test('a peer with many virtual and real servers is compared in linear work, not one pass per server', () => {
  // Counts the reads of service and real-server ids: the work, not the time (the old comparison scanned every
  // director's whole list once per service and per real server: 20,000 services blocked the event loop for seconds).
  const { lb1, lb2 } = pair();
  const template = lb1.snapshot.virtualServices[0];
  assert.ok(template);
  let reads = 0;
  const counted = <T extends object>(o: T, id: string): T => {
    Object.defineProperty(o, 'id', { get: () => { reads++; return id; }, enumerable: true });
    return o;
  };
  const services = 5_000;
  const realServers = 500;
  for (const m of [lb1, lb2]) {
    m.snapshot.virtualServices = Array.from({ length: services }, (_, i) => counted({ ...structuredClone(template), realServers: [] }, `tcp:10.0.${i >> 8}.${i & 255}:80`));
    const big = m.snapshot.virtualServices[0];
    const rs = template.realServers[0];
    assert.ok(big && rs);
    big.realServers = Array.from({ length: realServers }, (_, i) => counted(structuredClone(rs), `10.1.${i >> 8}.${i & 255}:80`));
  }
  lb2.snapshot.virtualServices.pop();
  const ds = diff(lb1, lb2);
  assert.deepEqual(ds.map((d) => d.kind), ['service-set']);
  assert.ok(reads < 20 * (services + realServers), `${reads} id reads for ${services} services and ${realServers} real servers`);
});

test('a peer that repeats one VRRP instance many times is compared in linear work', () => {
  // Counts array iteration steps (spread, for-of): the old comparison copied the list at every repeat.
  const { lb1, lb2 } = pair();
  const vi = lb2.snapshot.vrrp[0];
  assert.ok(vi);
  const repeats = 20_000;
  lb2.snapshot.vrrp = Array.from({ length: repeats }, () => ({ ...structuredClone(vi), syncGroup: 'G', state: 'MASTER' as const }));
  const iterate = Array.prototype[Symbol.iterator];
  let steps = 0;
  Array.prototype[Symbol.iterator] = function* counted(this: unknown[]) {
    for (const x of iterate.call(this) as IterableIterator<unknown>) {
      steps++;
      yield x;
    }
  } as typeof iterate;
  let ds;
  try {
    ds = diff(lb1, lb2);
  } finally {
    Array.prototype[Symbol.iterator] = iterate;
  }
  assert.ok(ds.some((d) => d.kind === 'two-masters'));
  assert.ok(steps < 50 * repeats, `${steps} iteration steps for ${repeats} repeats`);
});
