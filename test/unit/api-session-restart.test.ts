// Browser sessions survive a restart of lvsd (issue 17): a fresh store and API on the same state file
// accept the cookie a browser still holds, with the same CSRF token; a logout, a deleted user or a
// password change still ends them, restart or not. The file holds only hashes of the ids.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, type RunningApi } from '../../daemon/api/listen.js';
import { openStore } from '../../daemon/state/store.js';
import { SessionTable, SESSIONS_PER_USER, type SessionKeeper } from '../../daemon/api/sessions.js';
import { FakeDirector } from '../support/fake-director.js';
import { WEB_ENC } from '../support/api-harness.js';
import type { SessionRecord } from '../../daemon/state/schema.js';

interface Answer { status: number; body: string; cookie: string | null }

async function call(api: RunningApi, method: string, path: string, opts: { cookie?: string; csrf?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.cookie !== undefined) headers.cookie = opts.cookie;
  if (opts.csrf !== undefined) headers['x-csrf-token'] = opts.csrf;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(`${api.url}${path}`, { method, headers, ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }) });
  const set = r.headers.get('set-cookie');
  return { status: r.status, body: await r.text(), cookie: set === null ? null : (set.split(';')[0] ?? null) };
}

const booted: RunningApi[] = [];
async function boot(stateFile: string): Promise<RunningApi> {
  const { store } = await openStore(stateFile, { passwordCost: 1024 });
  const api = await startApi({ listen: '127.0.0.1:0', socket: null }, { director: new FakeDirector(), store, webuiDir: null });
  booted.push(api);
  return api;
}

async function login(api: RunningApi, name: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const r = await call(api, 'POST', '/api/v1/session', { body: { name, password } });
  assert.equal(r.status, 200, r.body);
  assert.ok(r.cookie !== null);
  return { cookie: r.cookie, csrf: (JSON.parse(r.body) as { csrfToken: string }).csrfToken };
}

test('a browser session outlives a restart of lvsd; logout, user deletion and a password change still end it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-sess-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const stateFile = join(dir, 'state.json');
  {
    const { store } = await openStore(stateFile, { passwordCost: 1024 });
    await store.addUser('alice', 'alice password', 'admin', 'test');
    await store.addUser('bob', 'bob password', 'viewer', 'test');
    await store.addUser('carol', 'carol password', 'viewer', 'test');
  }
  t.after(() => Promise.all(booted.map((x) => x.close())));
  let api = await boot(stateFile);
  const a = await login(api, 'alice', 'alice password');
  const a2 = await login(api, 'alice', 'alice password');
  const b = await login(api, 'bob', 'bob password');
  const c = await login(api, 'carol', 'carol password');
  await api.close();

  const text = await readFile(stateFile, 'utf8');
  for (const s of [a, a2, b, c]) {
    const id = decodeURIComponent(s.cookie.split('=')[1] ?? '').replace(/^s:/, '').replace(/\.[^.]*$/, '');
    assert.ok(id.length > 20);
    assert.ok(!text.includes(id), 'the state file holds no session id');
    assert.ok(!text.includes(s.csrf), 'nor a CSRF token');
  }
  assert.equal((JSON.parse(text) as { sessions: unknown[] }).sessions.length, 4);

  api = await boot(stateFile);
  const who = await call(api, 'GET', '/api/v1/session', { cookie: a.cookie });
  assert.equal(who.status, 200, who.body);
  assert.deepEqual(JSON.parse(who.body), { user: 'alice', role: 'admin', csrfToken: a.csrf, local: false });
  // the restored session may still change things: its CSRF token is the one the page holds
  assert.equal((await call(api, 'PUT', `/api/v1/services/${WEB_ENC}/override`, { cookie: a.cookie, csrf: a.csrf, body: { drain: true } })).status, 200);
  // end each a different way
  assert.equal((await call(api, 'DELETE', '/api/v1/session', { cookie: a.cookie, csrf: a.csrf })).status, 204);
  assert.equal((await call(api, 'DELETE', '/api/v1/users/bob', { cookie: a2.cookie, csrf: a2.csrf })).status, 204);
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: c.cookie })).status, 200);
  await api.close();

  const { store } = await openStore(stateFile, { passwordCost: 1024 });
  await store.setPassword('carol', 'carol new password', 'cli');
  api = await boot(stateFile);
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: a.cookie })).status, 401, 'logged out stays logged out');
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: b.cookie })).status, 401, 'a deleted user stays out');
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: a2.cookie })).status, 200, 'the other session of alice lives on');
  // a password changed through the API ends the user's other sessions, restart or not
  const c2 = await login(api, 'carol', 'carol new password');
  assert.equal((await call(api, 'PUT', '/api/v1/session/password', { cookie: c2.cookie, csrf: c2.csrf, body: { currentPassword: 'carol new password', password: 'carol third password' } })).status, 204);
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: c.cookie })).status, 401);
  await api.close();
  api = await boot(stateFile);
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: c.cookie })).status, 401);
  assert.equal((await call(api, 'GET', '/api/v1/session', { cookie: c2.cookie })).status, 200);
  await api.close();
});

test('SessionTable: expired records are dropped at load, the idle clock is saved coarsely, a user holds a bounded number', async () => {
  let now = 1_000_000;
  const saved: SessionRecord[][] = [];
  const keeper = (records: SessionRecord[]): SessionKeeper => ({ load: () => records, save: (r) => { saved.push(r.map((x) => ({ ...x }))); return Promise.resolve(); }, secret: 'k'.repeat(40) });
  const old: SessionRecord = { idHash: 'a'.repeat(64), user: 'u', createdAt: 0, lastSeen: 0 };
  const t1 = new SessionTable(60_000, 3600_000, () => now, keeper([old]));
  await t1.flushed();
  assert.equal(t1.size, 0);
  assert.deepEqual(saved.at(-1), [], 'an expired record is dropped and the drop saved');
  const s = t1.create('u');
  await t1.flushed();
  const n = saved.length;
  now += 1000;
  assert.ok(t1.get(s.id) !== null);
  await t1.flushed();
  assert.equal(saved.length, n, 'a request a second later costs no write');
  now += 60_000 - 1000;
  assert.ok(t1.get(s.id) !== null);
  await t1.flushed();
  assert.equal(saved.length, n + 1);
  assert.equal(saved.at(-1)?.[0]?.lastSeen, now);
  // the same secret gives the same CSRF token to the same id in another process
  const t2 = new SessionTable(60_000, 3600_000, () => now, keeper(saved.at(-1) ?? []));
  assert.equal(t2.get(s.id)?.csrfToken, s.csrfToken);
  for (let i = 0; i < SESSIONS_PER_USER + 5; i++) t2.create('many');
  await t2.flushed();
  assert.equal(t2.size, SESSIONS_PER_USER + 1);
  // a save that fails is reported, the session still works
  let failed = 0;
  const t3 = new SessionTable(60_000, 3600_000, () => now, { load: () => [], save: () => Promise.reject(new Error('ENOSPC')), secret: 'k'.repeat(40), onError: () => { failed++; } });
  const s3 = t3.create('u');
  await t3.flushed();
  assert.equal(failed, 1);
  assert.ok(t3.get(s3.id) !== null);
});
