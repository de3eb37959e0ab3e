// The config routes: running config, validate, diff, apply (reload), roll back; errors name the place and
// a bad config changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../support/api-harness.js';
import { FAKE_CONFIG } from '../support/fake-director.js';

const lowered = FAKE_CONFIG.replace('priority: 150', 'priority: 120');

test('GET /api/v1/config returns the running file with its hash', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.call(await h.as('operator'), 'GET', '/api/v1/config');
  const c = res.json<{ path: string; hash: string; text: string; canRollback: boolean }>();
  assert.equal(c.text, FAKE_CONFIG);
  assert.equal(c.hash, h.director.snapshot().config.hash);
  assert.equal(c.canRollback, false);
});

test('validate: ok, and errors as FILE:LINE:COL lines; nothing changes', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const ok = await h.call(op, 'POST', '/api/v1/config/validate', { text: lowered });
  assert.deepEqual(ok.json(), { ok: true, errors: [] });
  const bad = await h.call(op, 'POST', '/api/v1/config/validate', { text: FAKE_CONFIG.replace('priority: 150', 'priority: 300') });
  const b = bad.json<{ ok: boolean; errors: { message: string; line: number }[] }>();
  assert.equal(b.ok, false);
  assert.equal(b.errors[0]?.message, '/etc/lvsd/lvsd.yaml:8:17: /vrrp/instances/0/priority: must be an integer 1..255');
  assert.equal(b.errors[0].line, 8);
  const syntax = await h.call(op, 'POST', '/api/v1/config/validate', { text: 'node: [\n' });
  assert.match(syntax.json<{ errors: { message: string }[] }>().errors[0]?.message ?? '', /^\/etc\/lvsd\/lvsd\.yaml:\d+:\d+: /);
  assert.deepEqual(h.director.calls, []);
  const missing = await h.call(op, 'POST', '/api/v1/config/validate', {});
  assert.equal(missing.statusCode, 400);
  assert.match(missing.json<{ message: string }>().message, /missing field "text"/);
});

test('diff: the changes by object and a line diff', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.call(await h.as('operator'), 'POST', '/api/v1/config/diff', { text: lowered.replace('weight: 5 }', 'weight: 6 }') });
  const d = res.json<{ ok: boolean; changes: { kind: string; change: string; name: string; detail?: string }[]; lines: { op: string; text: string }[] }>();
  assert.equal(d.ok, true);
  assert.deepEqual(d.changes, [
    { kind: 'instance', change: 'changed', name: 'VI_1', detail: 'priority 150 → 120' },
    { kind: 'realServer', change: 'changed', name: 'tcp:192.168.77.100:80/10.0.1.13:80', detail: 'weight 5 → 6' },
  ]);
  const changed = d.lines.filter((l) => l.op !== ' ');
  assert.deepEqual(changed, [
    { op: '-', text: '      priority: 150' },
    { op: '+', text: '      priority: 120' },
    { op: '-', text: '      - { address: 10.0.1.13, port: 80, weight: 5 }' },
    { op: '+', text: '      - { address: 10.0.1.13, port: 80, weight: 6 }' },
  ]);
  assert.equal(d.lines.length, FAKE_CONFIG.trimEnd().split('\n').length + 2);
});

test('diff of a text over the 1 MiB config limit: no line diff (4 MB of short lines was 800,000 lines, 90 MB, 20 s)', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  // what the director answers is its own business (the real one: "the config is 1.1 MiB …"); the route adds no lines
  h.director.diffConfig = () => Promise.resolve({ ok: false, errors: [{ message: 'too big' }], changes: [] });
  const text = 'x: 1\n'.repeat(240_000);
  const res = await h.call(await h.as('operator'), 'POST', '/api/v1/config/diff', { text });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json<{ lines: unknown[] }>().lines, []);
  // at the limit, the lines are there
  const fits = await h.call(await h.as('operator'), 'POST', '/api/v1/config/diff', { text: 'x: 1\n'.repeat(200_000) });
  assert.equal(fits.json<{ lines: unknown[] }>().lines.length > 200_000, true);
});

test('apply a bad config → 422 with every error; nothing applied, nothing audited', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const hash = h.director.snapshot().config.hash;
  const bad = FAKE_CONFIG.replace('priority: 150', 'priority: 0').replace('weight: 5 }', 'weight: 70000 }');
  const res = await h.call(admin, 'POST', '/api/v1/config/apply', { text: bad });
  assert.equal(res.statusCode, 422);
  const e = res.json<{ message: string; details: string[] }>();
  assert.equal(e.message, 'config not applied: 2 error(s)');
  assert.equal(e.details.length, 2);
  assert.match(e.details[1] ?? '', /realServers\/2\/weight: must be an integer 0\.\.65535/);
  assert.equal(h.director.snapshot().config.hash, hash);
  assert.equal(h.store.auditLog({ action: 'config' }).length, 0);
});

test('apply, then roll back: reloads counted, audit before → after hash, rollback refused when nothing to go back to', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const none = await h.call(admin, 'POST', '/api/v1/config/rollback');
  assert.equal(none.statusCode, 409);
  assert.match(none.json<{ message: string }>().message, /no previous good config/);
  const h0 = h.director.snapshot().config.hash;
  const res = await h.call(admin, 'POST', '/api/v1/config/apply', { text: lowered, expectedHash: h0 });
  assert.equal(res.statusCode, 200);
  const r = res.json<{ ok: boolean; hash: string }>();
  assert.equal(r.ok, true);
  assert.notEqual(r.hash, h0);
  assert.equal(h.director.snapshot().vrrp[0]?.basePriority, 120);
  assert.equal(h.director.snapshot().config.reloads, 1);
  const stale = await h.call(admin, 'POST', '/api/v1/config/apply', { text: FAKE_CONFIG, expectedHash: h0 });
  assert.equal(stale.statusCode, 409, 'someone else applied in between');
  const back = await h.call(admin, 'POST', '/api/v1/config/rollback');
  assert.equal(back.statusCode, 200);
  assert.equal(back.json<{ hash: string }>().hash, h0);
  assert.equal(h.director.snapshot().vrrp[0]?.basePriority, 150);
  const log = h.store.auditLog({ action: 'config' });
  assert.deepEqual(log.map((e) => e.action), ['config.rollback', 'config.apply']);
  assert.deepEqual(log[1]?.before, { hash: h0 });
  assert.deepEqual(log[1].after, { hash: r.hash, changes: ['changed instance VI_1 (priority 150 → 120)'] });
});
