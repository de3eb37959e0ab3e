// Read routes, the OpenAPI document, security headers and the error shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, WEB, WEB_ENC } from '../support/api-harness.js';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DirectorSnapshot } from '../../daemon/director/snapshot.js';

test('GET /api/v1/status is the director snapshot, serialised through its schema', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.call(await h.as('viewer'), 'GET', '/api/v1/status');
  assert.equal(res.statusCode, 200);
  const s = res.json<DirectorSnapshot>();
  const norm = (x: unknown): unknown => JSON.parse(JSON.stringify(x), (k, v: unknown) => (k === 'at' || k === 'lastSeen' ? 'T' : v));
  assert.deepEqual(norm(s), norm(h.director.snapshot()));
  assert.equal(s.node, 'director-1');
  assert.equal(s.vrrp[0]?.state, 'MASTER');
  assert.equal(s.virtualServices[0]?.id, WEB);
  assert.equal(s.virtualServices[0].realServers.length, 3);
  assert.equal(s.config.path, '/etc/lvsd/lvsd.yaml');
});

test('a VRRP engine that is not running travels in the snapshot (vrrpProblem)', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const orig = h.director.snapshot.bind(h.director);
  h.director.snapshot = () => ({ ...orig(), vrrpProblem: 'VRRP engine process exited (signal SIGKILL)' });
  const res = await h.call(await h.as('viewer'), 'GET', '/api/v1/status');
  assert.equal(res.json<DirectorSnapshot>().vrrpProblem, 'VRRP engine process exited (signal SIGKILL)');
});

test('the serialiser drops what the schema does not declare', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const orig = h.director.snapshot.bind(h.director);
  h.director.snapshot = () => ({ ...orig(), secret: 'do not leak' }) as DirectorSnapshot;
  const res = await h.call(await h.as('viewer'), 'GET', '/api/v1/status');
  assert.equal(res.statusCode, 200);
  assert.ok(!res.body.includes('do not leak'));
});

test('one VRRP instance, one service; unknown ones are 404 naming them', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const v = await h.as('viewer');
  const vi = await h.call(v, 'GET', '/api/v1/vrrp/VI_2');
  assert.equal(vi.statusCode, 200);
  assert.equal(vi.json<{ state: string }>().state, 'BACKUP');
  const nv = await h.call(v, 'GET', '/api/v1/vrrp/VI_9');
  assert.equal(nv.statusCode, 404);
  assert.deepEqual(nv.json(), { statusCode: 404, error: 'Not Found', message: 'no VRRP instance "VI_9"' });
  const svc = await h.call(v, 'GET', `/api/v1/services/${WEB_ENC}`);
  assert.equal(svc.json<{ name: string }>().name, 'web');
  const byName = await h.call(v, 'GET', '/api/v1/services/web');
  assert.equal(byName.json<{ id: string }>().id, WEB);
  const ns = await h.call(v, 'GET', '/api/v1/services/tcp%3A1.2.3.4%3A80');
  assert.equal(ns.statusCode, 404);
  assert.match(ns.json<{ message: string }>().message, /no virtual server "tcp:1\.2\.3\.4:80"/);
  const nr = await h.call(v, 'GET', '/api/v1/nothing');
  assert.equal(nr.statusCode, 404);
  assert.match(nr.json<{ message: string }>().message, /no route GET \/api\/v1\/nothing/);
});

test('OpenAPI 3.1 document lists every route with its schemas and role', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  const doc = res.json<{ openapi: string; paths: Record<string, Record<string, { 'x-lvsd-role': string; requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> }; parameters: { name: string; in: string }[] }>> }>();
  assert.equal(doc.openapi, '3.1.0');
  const put = doc.paths['/api/v1/services/{service}/real-servers/{realServer}/override']?.put;
  assert.ok(put);
  assert.equal(put['x-lvsd-role'], 'operator');
  assert.deepEqual(put.parameters.map((p) => `${p.in}:${p.name}`), ['path:service', 'path:realServer']);
  assert.deepEqual(Object.keys(put.requestBody?.content['application/json']?.schema.properties ?? {}), ['drain', 'maintenance', 'weight']);
  assert.equal(doc.paths['/api/v1/config/apply']?.post?.['x-lvsd-role'], 'admin');
  assert.equal(doc.paths['/api/v1/session']?.post?.['x-lvsd-role'], 'public');
  assert.ok(Object.keys(doc.paths).length >= 15);
});

test('security headers on every answer; no panel built → a plain hint at /', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.app.inject({ method: 'GET', url: '/' });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /panel is not built/);
  assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.equal(res.headers['x-frame-options'], 'DENY');
  const api = await h.call(null, 'GET', '/api/v1/status');
  assert.equal(api.headers['cache-control'], 'no-store');
});

test('the built panel is served from webuiDir', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-webui-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>lvsd</title>');
  writeFileSync(join(dir, 'app.js'), 'console.log(1)');
  const h = await harness({ webuiDir: dir });
  t.after(() => h.close());
  const idx = await h.app.inject({ method: 'GET', url: '/' });
  assert.equal(idx.statusCode, 200);
  assert.match(idx.body, /<title>lvsd<\/title>/);
  const js = await h.app.inject({ method: 'GET', url: '/app.js' });
  assert.match(String(js.headers['content-type']), /javascript/);
});
