// Fuzzing every API route from its OpenAPI document (issue 17): for each operation, bodies that are
// valid-looking and mutated (wrong types, extra keys, nulls, huge strings, deep nesting), odd ids and
// query strings, sent as the admin (so access checks pass and the handlers run) against an API with a
// fake director. Never a 500, and every answer is a status the route's schema lists (or a 4xx the
// framework adds: 401/403/404/413/414/415/429). Settings: test/support/fuzz-text.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { statSync } from 'node:fs';
import { harness, WEB_ENC } from '../support/api-harness.js';
import { fuzzSettings } from '../support/fuzz-text.js';

interface Operation { responses?: Record<string, unknown>; requestBody?: unknown }
interface OpenApi { paths: Record<string, Record<string, Operation>> }

// 414: a path parameter over 100 characters is refused before the route runs (lvsd's error shape: server.ts frameworkErrors)
const ALWAYS = new Set([400, 401, 403, 404, 405, 409, 413, 414, 415, 422, 429]);

const idArb = fc.oneof(
  fc.constantFrom(WEB_ENC, 'alice', 'admin', 'viewer', 'VI_1', '%00', '..%2F..%2Fetc', '%E2%80%AE', encodeURIComponent('tcp:192.168.77.100:80'), encodeURIComponent('10.0.0.1:80'), 'x'.repeat(300)),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
);
const scalarArb = fc.oneof(fc.boolean(), fc.integer(), fc.double(), fc.constant(null), fc.string({ maxLength: 30 }), fc.constantFrom('5', 'true', '', 'x'.repeat(5000), -1, 65536, 1e308));
const valueArb: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalarArb, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(fc.constantFrom('drain', 'maintenance', 'weight', 'name', 'password', 'role', 'text', 'how', 'expectedHash', 'allowEmpty', 'currentPassword', 'token', '__proto__', 'x'), tie('v'), { maxKeys: 5 })),
})).v;
const queryArb = fc.dictionary(fc.constantFrom('limit', 'who', 'action', 'since', 'x', 'format'), fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('-1', '0', '1e9', 'NaN', '2026-01-01T00:00:00Z', '')), { maxKeys: 3 });

test('fuzz: every route from the OpenAPI document answers as its schema says, never 500', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const doc = (await h.call(admin, 'GET', '/api/v1/openapi.json')).json<OpenApi>();
  const ops: { method: string; path: string; statuses: Set<number> }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      // logging out or killing the session mid-run would only test 401s from then on
      if (path === '/api/v1/session' && method === 'delete') continue;
      if (path.endsWith('/stream')) continue; // a live stream never ends on its own: api-events.test.ts
      ops.push({ method: method.toUpperCase(), path, statuses: new Set(Object.keys(op.responses ?? {}).map(Number)) });
    }
  }
  assert.ok(ops.length >= 15, `${String(ops.length)} operations`);
  const n = Math.max(ops.length * 20, Math.floor(fuzzSettings().n / 10));
  const started = performance.now();
  let runs = 0;
  const seen = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(fc.nat(ops.length - 1), fc.array(idArb, { minLength: 3, maxLength: 3 }), valueArb, queryArb, async (i, ids, body, query) => {
      const op = ops[i] ?? assert.fail();
      let k = 0;
      const url = op.path.replace(/\{[^}]+\}/g, () => ids[k++] ?? 'x') + (Object.keys(query).length ? `?${new URLSearchParams(query).toString()}` : '');
      const r = await h.call(admin, op.method, url, ['GET', 'DELETE'].includes(op.method) ? undefined : body);
      runs++;
      seen.set(r.statusCode, (seen.get(r.statusCode) ?? 0) + 1);
      assert.ok(r.statusCode < 500, `${op.method} ${url} ${JSON.stringify(body)} → ${String(r.statusCode)} ${r.body}`);
      assert.ok(op.statuses.has(r.statusCode) || ALWAYS.has(r.statusCode), `${op.method} ${op.path} → ${String(r.statusCode)}, not in its schema (${[...op.statuses].join(', ')})`);
    }),
    { numRuns: n, seed: fuzzSettings().seed, plugins: [fc.interruptAfterTimeLimit(fuzzSettings().seconds * 1000, { failOnInterrupt: false })] },
  );
  const s = (performance.now() - started) / 1000;
  process.stdout.write(`# fuzz api routes: ${String(runs)} requests over ${String(ops.length)} operations in ${s.toFixed(1)} s (${(runs / s).toFixed(0)}/s); statuses ${[...seen].sort((a, b) => a[0] - b[0]).map(([c, m]) => `${String(c)}×${String(m)}`).join(' ')}\n`);
  // What the requests left behind: the users they created are state an admin may make; the heap should be that.
  process.stdout.write(`# fuzz api routes: ${String(h.store.users().length)} users, state file ${String(statSync(h.stateFile).size)} bytes, heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB\n`);
  assert.ok(runs > 0);
});
