// The BGP operator action (POST /api/v1/bgp/withdraw) and the BGP gauges of /metrics, on the FakeDirector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../support/api-harness.js';
import type { AuditEntry } from '../../daemon/state/store.js';

const VIP = '192.0.2.10/32';

test('withdraw one prefix and restore it: audited, operators only, unknown prefix 404, no bgp 409, bad "how" 400', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const none = await h.call(op, 'POST', '/api/v1/bgp/withdraw', { prefix: VIP, how: 'withdraw' });
  assert.equal(none.statusCode, 409, 'no bgp section: nothing to withdraw');
  h.director.bgpPrefixes = [VIP, '198.51.100.0/24'];

  const viewer = await h.as('viewer');
  assert.equal((await h.call(viewer, 'POST', '/api/v1/bgp/withdraw', { prefix: VIP, how: 'withdraw' })).statusCode, 403);
  assert.deepEqual(h.director.calls.filter((c) => c.startsWith('forceBgp')), [], 'a viewer changed nothing');

  const res = await h.call(op, 'POST', '/api/v1/bgp/withdraw', { prefix: VIP, how: 'withdraw' });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json<{ prefix: string; announced: boolean; withdrawnBy: string | null; audit: AuditEntry }>();
  assert.deepEqual([body.prefix, body.announced, body.withdrawnBy], [VIP, false, 'operator']);
  assert.equal(body.audit.action, 'bgp.withdraw');
  assert.equal(body.audit.target, VIP);
  assert.deepEqual(body.audit.before, { announced: true, withdrawnBy: null });
  assert.deepEqual(body.audit.after, { announced: false, withdrawnBy: 'operator' });
  const other = h.director.snapshot().bgp?.announcements.find((a) => a.prefix === '198.51.100.0/24');
  assert.equal(other?.announced, true, 'only the one prefix');

  const m = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(m, /^lvsd_bgp_announced\{prefix="192\.0\.2\.10\/32",kind="announced"\} 0$/m);
  assert.match(m, /^lvsd_bgp_announced\{prefix="192\.0\.2\.10\/32",kind="withdrawn_by_operator"\} 1$/m);
  assert.match(m, /^lvsd_bgp_announced\{prefix="198\.51\.100\.0\/24",kind="announced"\} 1$/m);
  assert.match(m, /^lvsd_bgp_session_up\{session="upstream"\} 1$/m);

  const back = await h.call(op, 'POST', '/api/v1/bgp/withdraw', { prefix: VIP, how: 'restore' });
  assert.equal(back.statusCode, 200);
  assert.equal(back.json<{ audit: AuditEntry }>().audit.action, 'bgp.restore');
  assert.equal(h.director.snapshot().bgp?.announcements.find((a) => a.prefix === VIP)?.announced, true);

  const unknown = await h.call(op, 'POST', '/api/v1/bgp/withdraw', { prefix: '203.0.113.0/24', how: 'withdraw' });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json<{ message: string }>().message, 'prefix 203.0.113.0/24 is not in bgp.announce');
  const bad = await h.call(op, 'POST', '/api/v1/bgp/withdraw', { prefix: VIP, how: 'later' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json<{ message: string }>().message, /body\.how/);
  const audits = (await h.call(op, 'GET', '/api/v1/audit')).json<AuditEntry[] | { entries: AuditEntry[] }>();
  const list = Array.isArray(audits) ? audits : audits.entries;
  assert.deepEqual(list.filter((e) => e.action.startsWith('bgp.')).map((e) => e.action).sort(), ['bgp.restore', 'bgp.withdraw']);
});

test('the OpenAPI document describes the route', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
  assert.deepEqual(Object.keys(doc.paths['/api/v1/bgp/withdraw']?.post?.responses ?? {}).sort(), ['200', '400', '401', '403', '404', '409']);
});
