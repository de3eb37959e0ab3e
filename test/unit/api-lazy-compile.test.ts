// The API's start compiles no schema (lazy-compilers.ts): fastify would otherwise compile every route's
// validators and serializers at ready, in one stretch that holds lvsd's event loop — in the guest a new
// master's sync daemon waited 90 s behind it. Each route compiles on its first request, once, and still
// answers a bad body with the field named. Nothing here is timed: the counts show it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../../daemon/api/listen.js';
import { compiledSchemas } from '../../daemon/api/lazy-compilers.js';
import { startFakeDirector } from '../support/director-fakes.js';

test('starting the API (TCP and socket) compiles no schema; a route compiles on its first request, once', async (t) => {
  const fake = await startFakeDirector('virtualServers: []\n');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-lazy-'));
  t.after(async () => {
    await fake.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  const before = { ...compiledSchemas };
  const api = await startApi({ listen: '127.0.0.1:0', socket: join(dir, 'api.sock') }, { director: fake.d, store: fake.store, logger: false, webuiDir: null });
  t.after(() => api.close());
  assert.ok(api.local !== null);
  // Without the lazy compilers fastify compiles them all here: dozens of each, twice.
  assert.deepEqual(compiledSchemas, before, 'nothing compiled by the start');

  const bad = await api.local.inject({ method: 'POST', url: '/api/v1/config/validate', payload: { text: 5 } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json<{ message: string }>().message, /text/, 'the field is named');
  assert.ok(compiledSchemas.validators > before.validators, 'the body validator compiled on first use');
  const ok = await api.local.inject({ method: 'POST', url: '/api/v1/config/validate', payload: { text: 'virtualServers: []\n' } });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.json<{ ok: boolean }>().ok, true);
  const afterValidate = { ...compiledSchemas };

  const s1 = await api.local.inject({ method: 'GET', url: '/api/v1/status' });
  assert.equal(s1.statusCode, 200);
  assert.equal(compiledSchemas.serializers, afterValidate.serializers + 1, "the status route's 200 serializer, and only it");
  const s2 = await api.local.inject({ method: 'GET', url: '/api/v1/status' });
  assert.equal(s2.statusCode, 200);
  assert.deepEqual(Object.keys(s2.json<object>()), Object.keys(s1.json<object>()), 'the same snapshot shape through the compiled serializer');
  const again = await api.local.inject({ method: 'POST', url: '/api/v1/config/validate', payload: { text: 5 } });
  assert.equal(again.statusCode, 400);
  assert.equal(compiledSchemas.validators, afterValidate.validators, 'compiled once: the second requests reuse it');
  assert.equal(compiledSchemas.serializers, afterValidate.serializers + 1);
});
