// Sessions, cookies, CSRF, login rate limit, bootstrap token, and the role matrix over every route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FailedAttempts } from '../../daemon/api/attempts.js';
import { cookieOf, harness, RS1_ENC, WEB_ENC, type Client, type Harness } from '../support/api-harness.js';

test('login sets a signed HttpOnly SameSite=Strict cookie; wrong password is 401 and names nothing secret', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const bad = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'admin', password: 'nope nope' } });
  assert.equal(bad.statusCode, 401);
  assert.equal(bad.json<{ message: string }>().message, 'wrong user name or password');
  assert.equal(bad.headers['set-cookie'], undefined);
  const unknown = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'ghost', password: 'nope nope' } });
  assert.equal(unknown.statusCode, 401);
  assert.equal(unknown.body, bad.body, 'unknown user and wrong password look the same');
  const ok = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'operator', password: 'operator password' } });
  assert.equal(ok.statusCode, 200);
  const set = String(ok.headers['set-cookie']);
  assert.match(set, /^lvsd_session=[^;]+\.[^;]+;/, 'signed value');
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  assert.doesNotMatch(set, /Secure/, 'plain http: no Secure flag');
  const body = ok.json<{ user: string; role: string; csrfToken: string }>();
  assert.equal(body.user, 'operator');
  assert.equal(body.role, 'operator');
  assert.ok(body.csrfToken.length >= 40);
  const me = await h.app.inject({ method: 'GET', url: '/api/v1/session', headers: { cookie: cookieOf(ok) } });
  assert.equal(me.json<{ csrfToken: string }>().csrfToken, body.csrfToken);
});

test('a tampered or unknown cookie is not a session', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const c = await h.as('admin');
  const tampered = c.cookie.replace(/=./, (m) => (m === '=A' ? '=B' : '=A'));
  assert.equal((await h.call({ ...c, cookie: tampered }, 'GET', '/api/v1/status')).statusCode, 401);
  assert.equal((await h.call({ ...c, cookie: 'lvsd_session=abc' }, 'GET', '/api/v1/status')).statusCode, 401);
  assert.equal((await h.call(c, 'GET', '/api/v1/status')).statusCode, 200);
});

test('logout ends the session on the server, not just in the browser', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const c = await h.login('viewer');
  assert.equal((await h.call(c, 'DELETE', '/api/v1/session')).statusCode, 204);
  assert.equal((await h.call(c, 'GET', '/api/v1/status')).statusCode, 401);
});

test('CSRF: state-changing requests need the session token in x-csrf-token', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const c = await h.as('operator');
  const url = `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`;
  const none = await h.app.inject({ method: 'PUT', url, headers: { cookie: c.cookie }, payload: { drain: true } });
  assert.equal(none.statusCode, 403);
  assert.match(none.json<{ message: string }>().message, /x-csrf-token/);
  const wrong = await h.call(c, 'PUT', url, { drain: true }, { 'x-csrf-token': 'x'.repeat(43) });
  assert.equal(wrong.statusCode, 403);
  const other = await h.login('admin');
  assert.equal((await h.call(c, 'PUT', url, { drain: true }, { 'x-csrf-token': other.csrf })).statusCode, 403, "another session's token");
  assert.equal(h.director.calls.length, 0, 'refused requests reach nothing');
  assert.equal((await h.call(c, 'PUT', url, { drain: true })).statusCode, 200);
});

test('login from a foreign Origin is refused', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.app.inject({ method: 'POST', url: '/api/v1/session', headers: { origin: 'https://evil.example', host: 'localhost:9180' }, payload: { name: 'admin', password: 'admin password' } });
  assert.equal(res.statusCode, 403);
  assert.match(res.body, /cross-origin/);
  const same = await h.app.inject({ method: 'POST', url: '/api/v1/session', headers: { origin: 'http://localhost:9180', host: 'localhost:9180' }, payload: { name: 'admin', password: 'admin password' } });
  assert.equal(same.statusCode, 200);
});

test('login is rate-limited', async (t) => {
  const h = await harness({ loginRateLimit: { max: 3, timeWindowMs: 60_000 } });
  t.after(() => h.close());
  const codes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'admin', password: 'guess ' + String(i) } });
    codes.push(r.statusCode);
    if (r.statusCode === 429) assert.match(r.json<{ message: string }>().message, /too many login attempts/);
  }
  assert.deepEqual(codes, [401, 401, 401, 429, 429]);
  const right = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'admin', password: 'admin password' } });
  assert.equal(right.statusCode, 429, 'even the right password waits out the window');
});

test('login is limited per account too: guesses from many addresses at one account; other accounts unaffected', async (t) => {
  const h = await harness({ loginRateLimit: { max: 3, timeWindowMs: 60_000 } });
  t.after(() => h.close());
  const login = (name: string, password: string, i: number) =>
    h.app.inject({ method: 'POST', url: '/api/v1/session', remoteAddress: `198.51.100.${String(i)}`, payload: { name, password } });
  const codes: number[] = [];
  for (let i = 1; i <= 5; i++) codes.push((await login('admin', `guess ${String(i)}`, i)).statusCode);
  assert.deepEqual(codes, [401, 401, 401, 429, 429], 'each address tried at most twice: the account limit, not the address limit');
  const right = await login('admin', 'admin password', 9);
  assert.equal(right.statusCode, 429, 'even the right password waits out the window');
  assert.match(right.json<{ message: string }>().message, /too many failed password attempts for this account; try again in \d+ s/);
  assert.equal((await login('operator', 'operator password', 10)).statusCode, 200, 'another account is not locked');
  // a name that is no account behaves the same (a 429 tells nothing about who exists)
  const ghost: number[] = [];
  for (let i = 11; i <= 14; i++) ghost.push((await login('ghost', 'nope nope', i)).statusCode);
  assert.deepEqual(ghost, [401, 401, 401, 429]);
});

test('the current-password check of a password change counts against the account as well', async (t) => {
  const h = await harness({ loginRateLimit: { max: 3, timeWindowMs: 60_000 } });
  t.after(() => h.close());
  const c = await h.login('viewer');
  const codes: number[] = [];
  for (let i = 0; i < 4; i++) codes.push((await h.call(c, 'PUT', '/api/v1/session/password', { currentPassword: `guess ${String(i)}`, password: 'brand new pass' })).statusCode);
  assert.deepEqual(codes, [403, 403, 403, 429]);
  assert.equal((await h.call(c, 'PUT', '/api/v1/session/password', { currentPassword: 'viewer password', password: 'brand new pass' })).statusCode, 429);
  const login = await h.app.inject({ method: 'POST', url: '/api/v1/session', remoteAddress: '198.51.100.7', payload: { name: 'viewer', password: 'viewer password' } });
  assert.equal(login.statusCode, 429, 'one count per account, login and password change together');
});

test('FailedAttempts: a window per name, the right password clears it, flooding made-up names never evicts an account', () => {
  let now = 0;
  const f = new FailedAttempts(2, 1000, () => now, 3);
  f.fail('admin', true);
  f.fail('admin', true);
  assert.equal(f.retryAfter('admin'), 1000);
  now = 400;
  assert.equal(f.retryAfter('admin'), 600);
  now = 1001;
  assert.equal(f.retryAfter('admin'), 0, 'the window slid past both');
  f.fail('admin', true);
  f.fail('admin', true);
  for (let i = 0; i < 100; i++) f.fail(`made-up-${String(i)}`, false);
  assert.ok(f.size <= 3);
  assert.ok(f.retryAfter('admin') > 0, 'the account keeps its count');
  f.succeed('admin');
  assert.equal(f.retryAfter('admin'), 0);
});

test('bad login bodies are 400 naming the field', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const r = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'admin' } });
  assert.equal(r.statusCode, 400);
  assert.match(r.json<{ message: string }>().message, /body: missing field "password"/);
  const r2 = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'admin', password: 'x', extra: 1 } });
  assert.equal(r2.statusCode, 400);
  assert.match(r2.json<{ message: string }>().message, /unknown field "extra"/);
});

test('TLS: cookies get Secure and answers carry HSTS', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-tls-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  const h = await harness({ https: { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) } });
  t.after(() => h.close());
  const ok = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name: 'viewer', password: 'viewer password' } });
  assert.match(String(ok.headers['set-cookie']), /; Secure/);
  assert.match(String(ok.headers['strict-transport-security']), /max-age=/);
});

test('bootstrap: the first admin comes from the one-time token, never a default password', async (t) => {
  const h = await harness({ users: false, loginRateLimit: { max: 100, timeWindowMs: 60_000 } });
  t.after(() => h.close());
  assert.deepEqual((await h.app.inject({ method: 'GET', url: '/api/v1/bootstrap' })).json(), { needed: true });
  for (const name of ['admin', 'root', 'lvsd']) {
    for (const password of ['admin', 'password', 'lvsd', '']) {
      const r = await h.app.inject({ method: 'POST', url: '/api/v1/session', payload: { name, password: password || 'x' } });
      assert.equal(r.statusCode, 401, `no default login ${name}/${password}`);
    }
  }
  const token = await h.store.issueBootstrapToken();
  assert.ok(token !== null);
  const wrong = await h.app.inject({ method: 'POST', url: '/api/v1/bootstrap', payload: { token: 'nope', name: 'alice', password: 'alice password' } });
  assert.equal(wrong.statusCode, 400);
  assert.match(wrong.json<{ message: string }>().message, /^bootstrap token is not valid/);
  const foreign = await h.app.inject({ method: 'POST', url: '/api/v1/bootstrap', headers: { origin: 'https://evil.example', host: 'localhost:9180' }, payload: { token, name: 'alice', password: 'alice password' } });
  assert.equal(foreign.statusCode, 403);
  const weak = await h.app.inject({ method: 'POST', url: '/api/v1/bootstrap', payload: { token, name: 'alice', password: 'short' } });
  assert.equal(weak.statusCode, 400);
  assert.match(weak.body, /at least 8/);
  const ok = await h.app.inject({ method: 'POST', url: '/api/v1/bootstrap', payload: { token, name: 'alice', password: 'alice password' } });
  assert.equal(ok.statusCode, 200);
  assert.equal(ok.json<{ role: string }>().role, 'admin');
  const c: Client = { cookie: cookieOf(ok), csrf: ok.json<{ csrfToken: string }>().csrfToken };
  assert.equal((await h.call(c, 'GET', '/api/v1/users')).statusCode, 200, 'logged in as the new admin');
  const again = await h.app.inject({ method: 'POST', url: '/api/v1/bootstrap', payload: { token, name: 'mallory', password: 'mallory password' } });
  assert.equal(again.statusCode, 400, 'the token is single-use');
  assert.deepEqual((await h.app.inject({ method: 'GET', url: '/api/v1/bootstrap' })).json(), { needed: false });
});

test('changing my own password needs the current one and ends my other sessions', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const a = await h.login('viewer');
  const b = await h.login('viewer');
  assert.equal((await h.call(a, 'PUT', '/api/v1/session/password', { currentPassword: 'wrong one', password: 'brand new pass' })).statusCode, 403);
  assert.equal((await h.call(a, 'PUT', '/api/v1/session/password', { currentPassword: 'viewer password', password: 'brand new pass' })).statusCode, 204);
  assert.equal((await h.call(a, 'GET', '/api/v1/status')).statusCode, 200, 'this session lives on');
  assert.equal((await h.call(b, 'GET', '/api/v1/status')).statusCode, 401, 'the other one ended');
  await h.login('viewer', 'brand new pass');
});

test('the bootstrap answers are the ones docs/api.md and the OpenAPI document list', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
  const openapi = Object.keys(doc.paths['/api/v1/bootstrap']?.post?.responses ?? {}).sort();
  const md = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
  const row = md.split('\n').find((l) => l.startsWith('| `GET /api/v1/bootstrap` / `POST /api/v1/bootstrap`'));
  assert.ok(row !== undefined, 'docs/api.md has the bootstrap row');
  const documented = [...new Set(row.match(/\b[2-5]\d\d\b/g) ?? [])].sort();
  assert.deepEqual(documented, openapi);
  assert.deepEqual(openapi, ['200', '400', '403', '429']);
});

// ---- the role matrix: every route, every role --------------------------------------------------

interface Route { method: string; url: string; body?: unknown; need: 'viewer' | 'operator' | 'admin' }
const ROUTES: Route[] = [
  { method: 'GET', url: '/api/v1/status', need: 'viewer' },
  { method: 'GET', url: '/api/v1/vrrp/VI_1', need: 'viewer' },
  { method: 'GET', url: `/api/v1/services/${WEB_ENC}`, need: 'viewer' },
  { method: 'GET', url: '/api/v1/overrides', need: 'viewer' },
  { method: 'GET', url: '/api/v1/audit', need: 'viewer' },
  { method: 'GET', url: '/api/v1/events', need: 'viewer' },
  { method: 'GET', url: '/api/v1/history', need: 'viewer' },
  { method: 'GET', url: '/api/v1/cluster', need: 'viewer' },
  { method: 'GET', url: '/api/v1/cluster/member', need: 'viewer' },
  { method: 'POST', url: '/api/v1/cluster/forward', body: { director: 'lb2', action: 'enable', service: 'tcp:192.168.77.100:80', realServer: '10.0.1.11:80' }, need: 'operator' },
  { method: 'PUT', url: `/api/v1/services/${WEB_ENC}/override`, body: { weight: 3 }, need: 'operator' },
  { method: 'DELETE', url: `/api/v1/services/${WEB_ENC}/override`, need: 'operator' },
  { method: 'PUT', url: `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`, body: { drain: true }, need: 'operator' },
  { method: 'DELETE', url: `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`, need: 'operator' },
  { method: 'POST', url: '/api/v1/vrrp/VI_2/failover', body: { how: 'restore' }, need: 'operator' },
  { method: 'POST', url: '/api/v1/bgp/withdraw', body: { prefix: '192.0.2.10/32', how: 'restore' }, need: 'operator' },
  { method: 'GET', url: '/api/v1/config', need: 'operator' },
  { method: 'POST', url: '/api/v1/config/validate', body: { text: 'node: { name: x }\n' }, need: 'operator' },
  { method: 'POST', url: '/api/v1/config/diff', body: { text: 'node: { name: x }\n' }, need: 'operator' },
  { method: 'POST', url: '/api/v1/config/apply', body: { text: ':\n  - [' }, need: 'admin' },
  { method: 'POST', url: '/api/v1/config/rollback', need: 'admin' },
  { method: 'POST', url: '/api/v1/config/reload', body: {}, need: 'admin' },
  { method: 'GET', url: '/api/v1/users', need: 'admin' },
  { method: 'POST', url: '/api/v1/users', body: { name: 'x', password: 'short', role: 'viewer' }, need: 'admin' },
  { method: 'PATCH', url: '/api/v1/users/nobody', body: { role: 'viewer' }, need: 'admin' },
  { method: 'DELETE', url: '/api/v1/users/nobody', need: 'admin' },
];

test('roles are enforced on the server for every route: none → 401, too low → 403, enough → through', async (t) => {
  const h: Harness = await harness();
  t.after(() => h.close());
  const rank = { viewer: 1, operator: 2, admin: 3 } as const;
  for (const r of ROUTES) {
    const anon = await h.call(null, r.method, r.url, r.body);
    assert.equal(anon.statusCode, 401, `${r.method} ${r.url} without login`);
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const res = await h.call(await h.as(role), r.method, r.url, r.body);
      if (rank[role] < rank[r.need]) {
        assert.equal(res.statusCode, 403, `${role} ${r.method} ${r.url}: ${res.body}`);
        assert.match(res.json<{ message: string }>().message, new RegExp(`needs ${r.need}`));
      } else {
        assert.ok(res.statusCode !== 401 && res.statusCode !== 403, `${role} ${r.method} ${r.url}: ${res.statusCode} ${res.body}`);
      }
    }
  }
  // the live event stream never ends by itself: over a real listener, look at the status, then hang up
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const streamStatus = (cookie: string | null): Promise<number> => new Promise((resolve, reject) => {
    const req = request(`${address}/api/v1/events/stream`, { headers: cookie === null ? {} : { cookie } }, (res) => {
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', (e) => { if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e); });
    req.end();
  });
  assert.equal(await streamStatus(null), 401, 'GET /api/v1/events/stream without login');
  assert.equal(await streamStatus('lvsd_session=forged'), 401, 'GET /api/v1/events/stream with a forged cookie');
  for (const role of ['viewer', 'operator', 'admin'] as const) assert.equal(await streamStatus((await h.as(role)).cookie), 200, `${role} GET /api/v1/events/stream`);
  // every /api route in the OpenAPI document is in this matrix (or public)
  const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<{ paths: Record<string, Record<string, { 'x-lvsd-role': string }>> }>();
  const covered = new Set(ROUTES.map((r) => `${r.method} ${decodeURIComponent(r.url).replace(WEB_ENC, '')}`));
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ops)) {
      // the session routes have their own tests above; the stream is checked over a listener just above
      if (op['x-lvsd-role'] === 'public' || path === '/api/v1/session' || path === '/api/v1/session/password' || path === '/api/v1/events/stream') continue;
      const tmpl = path.replace('{instance}', m === 'get' ? 'VI_1' : 'VI_2').replace('{service}', 'tcp:192.168.77.100:80').replace('{realServer}', '10.0.1.11:80').replace('{name}', 'nobody');
      assert.ok(covered.has(`${m.toUpperCase()} ${tmpl}`), `role matrix misses ${m.toUpperCase()} ${path}`);
    }
  }
});
