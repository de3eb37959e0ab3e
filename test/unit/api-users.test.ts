// User management through the API (admin only): add, change role/password, delete; errors are 4xx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from '../support/api-harness.js';

test('list users shows names and roles, never hashes', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const res = await h.call(await h.as('admin'), 'GET', '/api/v1/users');
  assert.deepEqual(res.json<{ name: string; role: string }[]>().map((u) => `${u.name}:${u.role}`), ['admin:admin', 'operator:operator', 'viewer:viewer']);
  assert.ok(!res.body.includes('scrypt'));
});

test('add, change role, change password, delete; each audited; the deleted user is logged out', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const admin = await h.as('admin');
  const add = await h.call(admin, 'POST', '/api/v1/users', { name: 'carol', password: 'carol password', role: 'viewer' });
  assert.equal(add.statusCode, 201);
  assert.equal(add.json<{ role: string }>().role, 'viewer');
  const carol = await h.login('carol', 'carol password');
  assert.equal((await h.call(carol, 'PUT', '/api/v1/services/web/override', { drain: true })).statusCode, 403);
  const promote = await h.call(admin, 'PATCH', '/api/v1/users/carol', { role: 'operator' });
  assert.equal(promote.json<{ role: string }>().role, 'operator');
  const get = await h.call(carol, 'GET', '/api/v1/session');
  assert.equal(get.json<{ role: string }>().role, 'operator', 'a role change applies to live sessions at once');
  assert.equal((await h.call(admin, 'PATCH', '/api/v1/users/carol', { password: 'another password' })).statusCode, 200);
  assert.equal((await h.call(carol, 'GET', '/api/v1/status')).statusCode, 401, 'a password reset ends the sessions');
  const carol2 = await h.login('carol', 'another password');
  assert.equal((await h.call(admin, 'DELETE', '/api/v1/users/carol')).statusCode, 204);
  assert.equal((await h.call(carol2, 'GET', '/api/v1/status')).statusCode, 401);
  assert.deepEqual(h.store.auditLog({ action: 'user' }).slice(0, 4).map((e) => `${e.who} ${e.action} ${e.target}`), [
    'admin user.delete carol', 'admin user.password carol', 'admin user.role carol', 'admin user.add carol',
  ]);
});

const errors: [string, string, string, unknown, number, RegExp][] = [
  ['duplicate name', 'POST', '/api/v1/users', { name: 'viewer', password: 'whatever pass', role: 'viewer' }, 409, /already exists/],
  ['short password', 'POST', '/api/v1/users', { name: 'dave', password: 'short', role: 'viewer' }, 400, /body\.password: must NOT have fewer than 8 characters/],
  ['unknown role', 'POST', '/api/v1/users', { name: 'dave', password: 'long enough', role: 'root' }, 400, /body\.role/],
  ['bad name', 'POST', '/api/v1/users', { name: 'da ve', password: 'long enough', role: 'viewer' }, 400, /user name "da ve"/],
  ['role as a list (no coercion)', 'POST', '/api/v1/users', { name: 'dave', password: 'long enough', role: ['viewer'] }, 400, /body\.role/],
  ['password as a number (no coercion)', 'POST', '/api/v1/users', { name: 'dave', password: 12345678, role: 'viewer' }, 400, /body\.password: must be string/],
  ['unknown user', 'PATCH', '/api/v1/users/zed', { role: 'viewer' }, 404, /no user "zed"/],
  ['empty patch', 'PATCH', '/api/v1/users/viewer', {}, 400, /must NOT have fewer than 1 properties/],
  ['demote last admin', 'PATCH', '/api/v1/users/admin', { role: 'viewer' }, 409, /last admin/],
  ['delete last admin', 'DELETE', '/api/v1/users/admin', undefined, 409, /last admin/],
  ['delete unknown', 'DELETE', '/api/v1/users/zed', undefined, 404, /no user "zed"/],
];
for (const [what, method, url, body, status, msg] of errors) {
  test(`users: ${what} → ${status}`, async (t) => {
    const h = await harness();
    t.after(() => h.close());
    const before = h.store.auditLog().length;
    const res = await h.call(await h.as('admin'), method, url, body);
    assert.equal(res.statusCode, status, res.body);
    assert.match(res.json<{ message: string }>().message, msg);
    assert.equal(h.store.auditLog().length, before, 'nothing changed');
  });
}
