// The graphs' history: the pure ring (bounded, oldest first, series that come and go), what a sample holds
// (rates from the dataplane's cumulative counters over the period), and GET /api/v1/history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HistoryRing } from '../../daemon/api/history-ring.js';
import { historyKey, sampleOf } from '../../daemon/api/history-sample.js';
import { History } from '../../daemon/api/history.js';
import type { HistoryView } from '../../daemon/api/history-view.js';
import { FakeDirector } from '../support/fake-director.js';
import { harness, WEB } from '../support/api-harness.js';

test('ring: keeps the last N samples oldest first, null where a series had no value', () => {
  const r = new HistoryRing(3, 10);
  r.push(1, new Map([['a', 1]]));
  r.push(2, new Map([['a', 2], ['b', 20]]));
  r.push(3, new Map([['a', 3]]));
  r.push(4, new Map([['a', 4], ['b', 40]]));
  const got = r.read();
  assert.deepEqual(got.t, [2, 3, 4]);
  assert.deepEqual(got.series.get('a'), [2, 3, 4]);
  assert.deepEqual(got.series.get('b'), [20, null, 40]);
  assert.deepEqual(r.read(() => true, 2).t, [3, 4], 'since is exclusive');
  assert.deepEqual([...r.read((k) => k === 'b').series.keys()], ['b']);
});

test('ring: bounded series; a series absent for N samples is forgotten, which frees its place', () => {
  const r = new HistoryRing(2, 2);
  r.push(1, new Map([['a', 1], ['b', 1], ['c', 1]]));
  assert.equal(r.droppedSeries, 1);
  assert.deepEqual([...r.read().series.keys()].sort(), ['a', 'b']);
  r.push(2, new Map([['a', 2]]));
  r.push(3, new Map([['a', 3]]));
  assert.deepEqual([...r.read().series.keys()], ['a'], 'b has no value left in the ring');
  r.push(4, new Map([['a', 4], ['c', 9]]));
  assert.deepEqual(r.read().series.get('c'), [null, 9]);
  assert.throws(() => new HistoryRing(1, 1), /capacity/);
});

test('ring: marks are bounded and fall out with the samples they belong to', () => {
  const r = new HistoryRing(2, 5, 3);
  for (let i = 0; i < 5; i++) r.mark({ at: i, kind: 'vrrp', text: `m${i}` });
  assert.deepEqual(r.read().marks.map((m) => m.text), ['m2', 'm3', 'm4']);
  r.push(10, new Map());
  r.push(11, new Map());
  r.push(12, new Map());
  assert.deepEqual(r.read().marks, [], 'older than the oldest sample kept');
});

test('a sample: per second over the period from cumulative counters, connections, health latency', () => {
  const d = new FakeDirector();
  d.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED');
  d.tick(1);
  const first = sampleOf(d.snapshot(), null, 1000);
  assert.equal(first.values.get(historyKey(WEB, null, 'cps')), undefined, 'no rate without a previous sample');
  const before = d.snapshot().virtualServices.find((v) => v.id === WEB)?.counters?.conns ?? 0;
  d.tick(5);
  const after = d.snapshot().virtualServices.find((v) => v.id === WEB)?.counters?.conns ?? 0;
  assert.ok(after > before);
  const second = sampleOf(d.snapshot(), { at: 1000, counters: first.counters }, 11_000);
  assert.equal(second.values.get(historyKey(WEB, null, 'cps')), (after - before) / 10);
  assert.ok((second.values.get(historyKey(WEB, '10.0.1.11:80', 'outBps')) ?? 0) > 0);
  assert.equal(typeof second.values.get(historyKey(WEB, '10.0.1.11:80', 'active')), 'number');
  const rs = d.snapshot().virtualServices.find((v) => v.id === WEB)?.realServers.find((r) => r.id === '10.0.1.13:80');
  assert.equal(second.values.get(historyKey(WEB, '10.0.1.13:80', 'latencyMs')), rs?.health.lastCheck?.latencyMs);
  // a counter that went down (a flushed table) gives no rate rather than a negative one
  const third = sampleOf({ ...d.snapshot(), virtualServices: d.snapshot().virtualServices.map((v) => ({ ...v, counters: v.counters && { ...v.counters, conns: 0 } })) }, { at: 11_000, counters: second.counters }, 21_000);
  assert.equal(third.values.get(historyKey(WEB, null, 'cps')), undefined);
});

test('GET /api/v1/history: the samples, one service, marks of VRRP transitions', async (t) => {
  const director = new FakeDirector();
  let now = 1_000_000;
  const history = new History(director, { periodMs: 60_000 }, () => now);
  director.tick(1); // the fake dataplane has counters from its first tick on
  history.start();
  t.after(() => { history.stop(); });
  for (let i = 0; i < 3; i++) { director.tick(10); now += 10_000; history.sample(); }
  director.transition('VI_2', 'MASTER', 'master down timer expired');
  const h = await harness({ director, history });
  t.after(() => h.close());
  const viewer = await h.as('viewer');
  const all = (await h.call(viewer, 'GET', '/api/v1/history')).json<HistoryView>();
  assert.equal(all.t.length, 4);
  assert.equal(all.periodMs, 60_000);
  const cps = all.series.find((s) => s.scope === 'virtualServer' && s.service === WEB && s.metric === 'cps');
  assert.ok(cps !== undefined);
  assert.equal(cps.values[0], null);
  assert.ok(cps.values.slice(1).every((v) => v !== null && v > 0), JSON.stringify(cps.values));
  assert.ok(all.marks.some((m) => m.kind === 'vrrp' && m.text === 'VI_2: BACKUP → MASTER'), JSON.stringify(all.marks));
  const one = (await h.call(viewer, 'GET', `/api/v1/history?service=${encodeURIComponent(WEB)}&since=${all.t[1] ?? 0}`)).json<HistoryView>();
  assert.equal(one.t.length, 2);
  assert.ok(one.series.length > 0 && one.series.every((s) => s.service === WEB));
  assert.equal((await h.call(viewer, 'GET', '/api/v1/history?bogus=1')).statusCode, 400);
});
