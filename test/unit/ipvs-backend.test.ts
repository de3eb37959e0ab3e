// The IPVS backend over an in-memory kernel that speaks the real codec: the apply path (cache, one
// message per change, stale-view recovery, ownership, drain) without a kernel. The real kernel is
// exercised by test/vm/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IpvsClient } from '../../daemon/ipvs/client.js';
import { FakeKernel } from '../support/fake-ipvs-kernel.js';
import { InvalidServiceSpec } from '../../daemon/dataplane/ipvs/spec.js';
import { createIpvsDataplane, type IpvsDataplane } from '../../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../../daemon/dataplane/ipvs/ownership.js';
import type { DesiredTable, ServiceSpec } from '../../daemon/dataplane/types.js';

const svc = (n: number, weights: number[]): ServiceSpec => ({
  id: `tcp:10.0.0.${n}:80`, family: 4, protocol: 'tcp', address: `10.0.0.${n}`, port: 80, scheduler: 'wrr',
  realServers: weights.map((w, i) => ({ id: `10.0.1.${i + 1}:80`, address: `10.0.1.${i + 1}`, port: 80, weight: w, method: 'nat' })),
});

async function setup(opts: { now?: () => number; mode?: 'graceful' | 'immediate' | 'inhibit'; owned?: string[] } = {}): Promise<{ k: FakeKernel; dp: IpvsDataplane; own: ReturnType<typeof memoryOwnership> }> {
  const k = new FakeKernel();
  const own = memoryOwnership(opts.owned ?? []);
  const dp = await createIpvsDataplane({
    client: new IpvsClient(k), ownership: own, resyncIntervalMs: 0, drainRecheckMs: 1e9,
    drain: { mode: opts.mode ?? 'graceful', timeoutMs: 10_000 }, ...(opts.now ? { now: opts.now } : {}),
  });
  return { k, dp, own };
}

test('programs an empty kernel, records ownership, then a weight change is one message', async () => {
  const { k, dp, own } = await setup();
  const desired: DesiredTable = { services: [svc(1, [1, 2, 3]), svc(2, [1])] };
  const r = await dp.apply(desired);
  assert.equal(r.operations, 6);
  assert.deepEqual([...own.ids].sort(), ['tcp:10.0.0.1:80', 'tcp:10.0.0.2:80']);
  assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 1, '10.0.1.2:80': 2, '10.0.1.3:80': 3 });
  const before = k.changes;
  const changed = structuredClone(desired);
  const rs = changed.services[0]?.realServers[1];
  assert.ok(rs);
  rs.weight = 7;
  assert.equal((await dp.apply(changed)).operations, 1);
  assert.equal(k.changes - before, 1);
  assert.equal(k.weights('tcp:10.0.0.1:80')['10.0.1.2:80'], 7);
  await dp.close();
});

test('a stale view heals itself: a service deleted behind lvsd is re-created on the next apply', async () => {
  const { k, dp } = await setup();
  const desired: DesiredTable = { services: [svc(1, [1, 2])] };
  await dp.apply(desired);
  k.table.delete('tcp:10.0.0.1:80');
  const changed = structuredClone(desired);
  const rs = changed.services[0]?.realServers[0];
  assert.ok(rs);
  rs.weight = 4;
  const r = await dp.apply(changed); // SET_DEST → ESRCH → full read → re-create
  assert.equal(r.operations, 3);
  assert.deepEqual(r.failures, undefined);
  assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 4, '10.0.1.2:80': 2 });
});

test('resync reports and repairs drift; a restarted backend adopts with 0 operations', async () => {
  const { k, dp, own } = await setup();
  const desired: DesiredTable = { services: [svc(1, [1, 2])] };
  await dp.apply(desired);
  const d = k.table.get('tcp:10.0.0.1:80')?.dests.get('10.0.1.2:80');
  assert.ok(d);
  d.weight = 9;
  const r = await dp.resync();
  assert.deepEqual(r.drift, ['update-real-server tcp:10.0.0.1:80 → 10.0.1.2:80']);
  assert.equal(k.weights('tcp:10.0.0.1:80')['10.0.1.2:80'], 2);
  const dp2 = await createIpvsDataplane({ client: new IpvsClient(k), ownership: own, resyncIntervalMs: 0 });
  assert.equal((await dp2.apply(desired)).operations, 0);
});

test('a foreign service is a conflict, left alone; takeOver adopts it', async () => {
  const { k, dp } = await setup();
  const foreign = svc(5, [3]);
  // Someone else (keepalived, ipvsadm) made it.
  const other = await createIpvsDataplane({ client: new IpvsClient(k), ownership: memoryOwnership(), resyncIntervalMs: 0 });
  await other.apply({ services: [foreign] });
  const r = await dp.apply({ services: [svc(5, [1])] });
  assert.deepEqual(r.conflicts, ['tcp:10.0.0.5:80']);
  assert.equal(k.weights('tcp:10.0.0.5:80')['10.0.1.1:80'], 3);
  const r2 = await dp.apply({ services: [{ ...svc(5, [1]), takeOver: true }] });
  assert.equal(r2.operations, 1);
  assert.equal(k.weights('tcp:10.0.0.5:80')['10.0.1.1:80'], 1);
  assert.ok(dp.ownedServices().has('tcp:10.0.0.5:80'));
});

test('graceful removal: weight 0 while connections last, deleted once they drain', async () => {
  let now = 0;
  const { k, dp } = await setup({ now: () => now });
  await dp.apply({ services: [svc(1, [1, 2])] });
  const d = k.table.get('tcp:10.0.0.1:80')?.dests.get('10.0.1.2:80');
  assert.ok(d);
  d.activeConns = 5;
  await dp.apply({ services: [svc(1, [1])] });
  assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 1, '10.0.1.2:80': 0 });
  assert.equal(dp.draining().size, 1);
  now = 1000;
  const left = k.table.get('tcp:10.0.0.1:80')?.dests.get('10.0.1.2:80');
  assert.ok(left);
  left.activeConns = 0;
  await dp.apply({ services: [svc(1, [1])] });
  assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 1 });
  assert.equal(dp.draining().size, 0);
});

test('bad specs fail with the object named', async () => {
  const { dp } = await setup();
  await assert.rejects(dp.apply({ services: [{ ...svc(1, [1]), schedulerFlags: ['sh-port'] }] }), (e: unknown) => e instanceof InvalidServiceSpec && /tcp:10\.0\.0\.1:80: scheduler flag sh-port does not apply to scheduler wrr/.test(e.message));
  const tun: ServiceSpec = { ...svc(1, []), realServers: [{ id: '10.0.1.1:80', address: '10.0.1.1', port: 80, weight: 1, method: 'tun', tunnel: { type: 'gre', checksum: 'remcsum' } }] };
  await assert.rejects(dp.apply({ services: [tun] }), /tcp:10\.0\.0\.1:80 → 10\.0\.1\.1:80: remcsum needs a gue tunnel, not gre/);
  await assert.rejects(dp.apply({ services: [{ ...svc(1, []), address: '10.0.0' }] }), /not an IP address: "10\.0\.0"/);
});

test('incremental applies: a service added and one removed move ownership; the unchanged ones are not looked at again', async () => {
  const { k, dp, own } = await setup();
  let saves = 0;
  const save = own.save.bind(own);
  own.save = (ids) => { saves++; save(ids); };
  const a = svc(1, [1, 2]);
  const b = svc(2, [1]);
  await dp.apply({ services: [a, b] });
  assert.equal(saves, 1);
  // The same objects again: nothing to do, nothing saved.
  const before = k.changes;
  assert.equal((await dp.apply({ services: [a, b] })).operations, 0);
  assert.equal(k.changes, before);
  assert.equal(saves, 1, 'an unchanged apply rewrote the ownership file');
  // One added (a scoped apply): owned from now on, beside the others.
  const c = svc(3, [4]);
  assert.equal((await dp.apply({ services: [a, b, c] })).operations, 2);
  assert.deepEqual([...own.ids].sort(), ['tcp:10.0.0.1:80', 'tcp:10.0.0.2:80', 'tcp:10.0.0.3:80']);
  assert.equal(saves, 2);
  // One removed: deleted from the kernel and from the owned set; the rest stay owned.
  assert.equal((await dp.apply({ services: [a, c] })).operations, 1);
  assert.deepEqual([...own.ids].sort(), ['tcp:10.0.0.1:80', 'tcp:10.0.0.3:80']);
  assert.equal(k.weights('tcp:10.0.0.2:80')['10.0.1.1:80'], undefined);
  // a listed twice is not "every service held": the removal of c is still seen.
  assert.equal((await dp.apply({ services: [a, a] })).operations, 1);
  assert.deepEqual([...own.ids], ['tcp:10.0.0.1:80']);
  await dp.close();
});
