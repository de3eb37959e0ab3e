// Operator actions: overrides (drain / enable / weight / maintenance) and forced failover; validation,
// 404s, audit entries, persistence, and nothing half-applied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, RS1, RS1_ENC, WEB, WEB_ENC } from '../support/api-harness.js';
import { openStore, type AuditEntry } from '../../daemon/state/store.js';
import { FakeDirector } from '../support/fake-director.js';

const rsUrl = `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`;

test('drain a real server: the dataplane weight goes to 0, the store keeps it, the audit says before → after', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  assert.equal(h.director.dataplane().get(`${WEB}/${RS1}`), 10);
  const res = await h.call(op, 'PUT', rsUrl, { drain: true });
  assert.equal(res.statusCode, 200);
  const body = res.json<{ target: string; override: unknown; audit: AuditEntry }>();
  assert.equal(body.target, `${WEB}/${RS1}`);
  assert.deepEqual(body.override, { drain: true });
  assert.equal(body.audit.who, 'operator');
  assert.equal(body.audit.action, 'override.set');
  assert.equal(body.audit.before, null);
  assert.deepEqual(body.audit.after, { drain: true });
  assert.equal(h.director.dataplane().get(`${WEB}/${RS1}`), 0);
  const snap = (await h.call(op, 'GET', '/api/v1/status')).json<{ virtualServices: { realServers: { id: string; override: unknown; weight: { effective: number } }[] }[] }>();
  const rs = snap.virtualServices[0]?.realServers.find((r) => r.id === RS1);
  assert.deepEqual(rs?.override, { drain: true });
  assert.equal(rs.weight.effective, 0);
  // survives a restart: a new store on the same file, a new director fed from it
  const { store } = await openStore(h.stateFile);
  const again = new FakeDirector({ overrides: store.overrideMap() });
  assert.equal(again.dataplane().get(`${WEB}/${RS1}`), 0);
});

test('set a weight, then enable (DELETE) restores the configured weight', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  assert.equal((await h.call(op, 'PUT', rsUrl, { weight: 3 })).statusCode, 200);
  assert.equal(h.director.dataplane().get(`${WEB}/${RS1}`), 3);
  const del = await h.call(op, 'DELETE', rsUrl);
  assert.equal(del.statusCode, 200);
  assert.equal(del.json<{ override: unknown }>().override, null);
  assert.equal(h.director.dataplane().get(`${WEB}/${RS1}`), 10);
  const log = h.store.auditLog();
  assert.equal(log[0]?.action, 'override.clear');
  assert.deepEqual(log[0].before, { weight: 3 });
  assert.equal(h.store.overrides().length, 0);
  // PUT {} clears too
  await h.call(op, 'PUT', rsUrl, { maintenance: true });
  assert.equal(h.director.dataplane().has(`${WEB}/${RS1}`), false, 'maintenance takes it out of the table');
  await h.call(op, 'PUT', rsUrl, {});
  assert.equal(h.store.overrides().length, 0);
});

test('a whole virtual server can be drained or put in maintenance', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  assert.equal((await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/override`, { drain: true })).statusCode, 200);
  for (const [k, w] of h.director.dataplane()) if (k.startsWith(WEB)) assert.equal(w, 0, k);
  assert.equal((await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/override`, { maintenance: true })).statusCode, 200);
  assert.equal([...h.director.dataplane().keys()].filter((k) => k.startsWith(WEB)).length, 0);
  assert.equal((await h.call(op, 'DELETE', `/api/v1/services/${WEB_ENC}/override`)).statusCode, 200);
  assert.equal([...h.director.dataplane().keys()].filter((k) => k.startsWith(WEB)).length, 3);
});

const badBodies: [string, unknown, RegExp][] = [
  ['weight above 65535', { weight: 70000 }, /body\.weight: must be <= 65535/],
  ['negative weight', { weight: -1 }, /body\.weight: must be >= 0/],
  ['fractional weight', { weight: 1.5 }, /body\.weight: must be integer/],
  ['unknown field', { drian: true }, /unknown field "drian"/],
  ['not an object', [1], /body: must be object/],
  // no type coercion (issue 17): each of these used to be accepted as 5 / true / false
  ['a weight as a string', { weight: '5' }, /body\.weight: must be integer/],
  ['a drain as a string', { drain: 'true' }, /body\.drain: must be boolean/],
  ['a drain of null (used to clear the override)', { drain: null }, /body\.drain: must be boolean/],
  ['a weight as a list', { weight: [5] }, /body\.weight: must be integer/],
  ['a maintenance as a list', { maintenance: [true] }, /body\.maintenance: must be boolean/],
  ['a weight of true', { weight: true }, /body\.weight: must be integer/],
];
for (const [what, body, msg] of badBodies) {
  test(`override with ${what} → 400 naming the field; nothing changes`, async (t) => {
    const h = await harness();
    t.after(() => h.close());
    const res = await h.call(await h.as('operator'), 'PUT', rsUrl, body);
    assert.equal(res.statusCode, 400);
    assert.match(res.json<{ message: string }>().message, msg);
    assert.deepEqual(h.director.calls, []);
    assert.equal(h.store.auditLog().length, 3, 'only the three user.add entries');
  });
}

test('unknown service or real server → 404 naming it; nothing changes', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const a = await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/real-servers/10.9.9.9%3A80/override`, { drain: true });
  assert.equal(a.statusCode, 404);
  assert.equal(a.json<{ message: string }>().message, `virtual server "${WEB}" has no real server "10.9.9.9:80"`);
  const b = await h.call(op, 'PUT', '/api/v1/services/udp%3A1.1.1.1%3A53/override', { drain: true });
  assert.equal(b.statusCode, 404);
  assert.match(b.json<{ message: string }>().message, /no virtual server "udp:1\.1\.1\.1:53"/);
  assert.deepEqual(h.director.calls, []);
  assert.equal(h.store.overrides().length, 0);
});

test('the director refusing → its status and message; the store is untouched', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const { DirectorRejection } = await import('../../daemon/director/port.js');
  h.director.setOverride = () => Promise.reject(new DirectorRejection(409, 'dataplane busy'));
  const res = await h.call(await h.as('operator'), 'PUT', rsUrl, { weight: 2 });
  assert.equal(res.statusCode, 409);
  assert.equal(res.json<{ message: string }>().message, 'dataplane busy');
  assert.equal(h.store.overrides().length, 0);
});

test('the store failing to write → the director is put back as it was (nothing half-applied)', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  await h.call(op, 'PUT', rsUrl, { weight: 4 });
  h.store.setOverride = () => Promise.reject(new Error('disk full'));
  const res = await h.call(op, 'PUT', rsUrl, { drain: true });
  assert.equal(res.statusCode, 500);
  assert.equal(res.json<{ message: string }>().message, 'internal error');
  assert.equal(h.director.dataplane().get(`${WEB}/${RS1}`), 4, 'back to the weight override');
});

test('forced failover: lower priority, maintenance, restore; unknown instance 404; bad "how" 400', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const lower = await h.call(op, 'POST', '/api/v1/vrrp/VI_1/failover', { how: 'lower-priority' });
  assert.equal(lower.statusCode, 200);
  const audit = lower.json<{ audit: AuditEntry }>().audit;
  assert.equal(audit.action, 'failover.lower-priority');
  assert.deepEqual(audit.before, { state: 'MASTER', priority: 150, forced: null });
  assert.deepEqual(audit.after, { state: 'BACKUP', priority: 50, forced: 'lower-priority' });
  assert.equal(h.director.snapshot().vrrp[0]?.state, 'BACKUP');
  const restore = await h.call(op, 'POST', '/api/v1/vrrp/VI_1/failover', { how: 'restore' });
  assert.equal(restore.statusCode, 200);
  assert.equal(h.director.snapshot().vrrp[0]?.state, 'MASTER');
  const none = await h.call(op, 'POST', '/api/v1/vrrp/VI_7/failover', { how: 'restore' });
  assert.equal(none.statusCode, 404);
  assert.equal(none.json<{ message: string }>().message, 'no VRRP instance "VI_7"');
  const bad = await h.call(op, 'POST', '/api/v1/vrrp/VI_1/failover', { how: 'now' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json<{ message: string }>().message, /body\.how/);
});

test('GET /api/v1/overrides lists what the store holds', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  await h.call(op, 'PUT', rsUrl, { weight: 7 });
  const res = await h.call(op, 'GET', '/api/v1/overrides');
  const list = res.json<{ service: string; realServer: string; override: unknown; by: string }[]>();
  assert.equal(list.length, 1);
  assert.equal(list[0]?.realServer, RS1);
  assert.deepEqual(list[0].override, { weight: 7 });
  assert.equal(list[0].by, 'operator');
});

test('malformed JSON, a wrong content type, or no body → 4xx saying so', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const headers = { cookie: op.cookie, 'x-csrf-token': op.csrf };
  const broken = await h.app.inject({ method: 'PUT', url: rsUrl, headers: { ...headers, 'content-type': 'application/json' }, payload: '{"drain": tru' });
  assert.equal(broken.statusCode, 400);
  assert.match(broken.json<{ message: string }>().message, /JSON/i);
  const text = await h.app.inject({ method: 'PUT', url: rsUrl, headers: { ...headers, 'content-type': 'text/plain' }, payload: 'drain' });
  assert.equal(text.statusCode, 400);
  assert.equal(text.json<{ message: string }>().message, 'body: must be object');
  const empty = await h.app.inject({ method: 'PUT', url: rsUrl, headers });
  assert.equal(empty.statusCode, 400);
  assert.match(empty.json<{ message: string }>().message, /body/);
  assert.deepEqual(h.director.calls, []);
});
