// The state store's operations: overrides, users, roles, the audit log, the first-admin bootstrap token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { addUser, openStore, StoreError, type StateStore } from '../../daemon/state/store.js';
import { verifyPassword } from '../../daemon/state/password.js';

async function fresh(t: { after: (fn: () => Promise<void>) => void }): Promise<{ store: StateStore; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'state.json');
  let clock = Date.parse('2026-03-01T10:00:00Z');
  const { store } = await openStore(file, { now: () => new Date((clock += 1000)) });
  return { store, file };
}

test('overrides persist across reopen and are audited before → after', async (t) => {
  const { store, file } = await fresh(t);
  const rs = { service: 'tcp:10.0.0.1:80', realServer: '10.0.1.11:80' };
  await store.setOverride(rs, { drain: true }, 'alice');
  await store.setOverride(rs, { drain: true, weight: 5 }, 'bob');
  await store.setOverride({ service: 'tcp:10.0.0.1:80' }, { maintenance: true }, 'bob');
  const { store: again } = await openStore(file);
  assert.deepEqual(again.getOverride(rs), { drain: true, weight: 5 });
  assert.deepEqual([...again.overrideMap().keys()].sort(), ['tcp:10.0.0.1:80', 'tcp:10.0.0.1:80/10.0.1.11:80']);
  const log = again.auditLog({ action: 'override' });
  assert.deepEqual(log.map((e) => e.who), ['bob', 'bob', 'alice']);
  const second = log[1];
  assert.ok(second);
  assert.deepEqual(second.before, { drain: true });
  assert.deepEqual(second.after, { drain: true, weight: 5 });
  assert.equal(second.target, 'tcp:10.0.0.1:80/10.0.1.11:80');
});

test('an empty override clears the target', async (t) => {
  const { store } = await fresh(t);
  const rs = { service: 's', realServer: 'r' };
  await store.setOverride(rs, { drain: true }, 'a');
  await store.setOverride(rs, { drain: false }, 'a');
  assert.equal(store.getOverride(rs), null);
  await store.setOverride(rs, { weight: 0 }, 'a');
  assert.deepEqual(store.getOverride(rs), { weight: 0 }, 'weight 0 is an override, not a clear');
  await store.setOverride(rs, null, 'a');
  assert.equal(store.overrides().length, 0);
  assert.deepEqual(store.auditLog()[0]?.before, { weight: 0 });
  assert.equal(store.auditLog()[0]?.after, null);
});

test('users: scrypt hashes, no plain text, authenticate, roles, last admin protected', async (t) => {
  const { store } = await fresh(t);
  await addUser(store, 'root', 'correct horse', 'admin');
  const u = store.getUser('root');
  assert.ok(u);
  assert.match(u.hash, /^scrypt\$16384\$8\$1\$/);
  assert.ok(!u.hash.includes('correct horse'));
  assert.equal(await verifyPassword('correct horse', u.hash), true);
  assert.equal((await store.authenticate('root', 'correct horse'))?.role, 'admin');
  assert.equal(await store.authenticate('root', 'wrong horse!'), null);
  assert.equal(await store.authenticate('nobody', 'correct horse'), null);
  await assert.rejects(store.addUser('root', 'another pass', 'viewer', 'x'), (e: unknown) => e instanceof StoreError && e.code === 'conflict');
  await assert.rejects(store.addUser('bad name', 'another pass', 'viewer', 'x'), /user name/);
  await assert.rejects(store.addUser('v', 'short', 'viewer', 'x'), /at least 8/);
  await assert.rejects(store.addUser('v', 'long enough', 'superuser' as 'viewer', 'x'), /role "superuser"/);
  await assert.rejects(store.setRole('root', 'viewer', 'x'), /last admin/);
  await assert.rejects(store.deleteUser('root', 'x'), /last admin/);
  await store.addUser('ops', 'ops password', 'operator', 'root');
  await store.setRole('ops', 'admin', 'root');
  await store.setRole('root', 'viewer', 'ops');
  await store.setPassword('root', 'new password', 'root');
  assert.equal(await store.authenticate('root', 'correct horse'), null);
  assert.ok(await store.authenticate('root', 'new password'));
  await store.deleteUser('root', 'ops');
  assert.equal(store.getUser('root'), undefined);
  await assert.rejects(store.deleteUser('root', 'ops'), (e: unknown) => e instanceof StoreError && e.code === 'not-found');
  const actions = store.auditLog().map((e) => e.action).reverse();
  assert.deepEqual(actions, ['user.add', 'user.add', 'user.role', 'user.role', 'user.password', 'user.delete']);
  assert.ok(!JSON.stringify(store.auditLog()).includes('new password'), 'passwords never reach the audit log');
});

test('bootstrap token: one use, only while no admin exists, only its hash stored', async (t) => {
  const { store, file } = await fresh(t);
  const token = await store.issueBootstrapToken();
  assert.ok(token !== null && token.length >= 30);
  assert.ok(!(await readFile(file, 'utf8')).includes(token), 'the token itself is never written');
  await assert.rejects(store.redeemBootstrapToken('wrong', 'admin', 'admin password'), /not valid/);
  await store.redeemBootstrapToken(token, 'admin', 'admin password');
  assert.equal(store.getUser('admin')?.role, 'admin');
  await assert.rejects(store.redeemBootstrapToken(token, 'admin2', 'admin password'), /not valid/);
  assert.equal(await store.issueBootstrapToken(), null, 'no token once an admin exists');
});

test('audit log filters: who, action prefix, since, limit, newest first', async (t) => {
  const { store } = await fresh(t);
  for (let i = 0; i < 5; i++) await store.audit(i % 2 === 0 ? 'alice' : 'bob', i < 3 ? 'config.apply' : 'failover', `x${i}`, i, i + 1);
  assert.deepEqual(store.auditLog({ who: 'alice' }).map((e) => e.target), ['x4', 'x2', 'x0']);
  assert.deepEqual(store.auditLog({ action: 'config' }).map((e) => e.target), ['x2', 'x1', 'x0']);
  assert.deepEqual(store.auditLog({ limit: 2 }).map((e) => e.target), ['x4', 'x3']);
  const third = store.auditLog().at(-3);
  assert.ok(third);
  assert.deepEqual(store.auditLog({ since: third.at }).map((e) => e.target), ['x4', 'x3', 'x2']);
  assert.deepEqual(store.auditLog().map((e) => e.id), [5, 4, 3, 2, 1]);
});

test('a failed write leaves memory as it was', async (t) => {
  const { store, file } = await fresh(t);
  await store.setOverride({ service: 's' }, { drain: true }, 'a');
  if (process.getuid?.() === 0) {
    // root ignores directory permissions: make the directory vanish instead
    await rm(dirname(file), { recursive: true, force: true });
  } else {
    await chmod(dirname(file), 0o500);
    t.after(() => chmod(dirname(file), 0o700));
  }
  await assert.rejects(store.setOverride({ service: 's' }, { weight: 3 }, 'a'));
  assert.deepEqual(store.getOverride({ service: 's' }), { drain: true });
  assert.equal(store.auditLog().length, 1);
});

test('concurrent changes all land, in order, each with its audit entry', async (t) => {
  const { store, file } = await fresh(t);
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.setOverride({ service: 's', realServer: `r${i}` }, { weight: i }, 'a')));
  const { store: again } = await openStore(file);
  assert.equal(again.overrides().length, 20);
  assert.deepEqual(again.auditLog().map((e) => e.id), Array.from({ length: 20 }, (_, i) => 20 - i));
});

test('concurrent user changes are checked against each other: two demotions keep one admin, one name is added once', async (t) => {
  const { store, file } = await fresh(t);
  await addUser(store, 'a', 'a password', 'admin');
  await addUser(store, 'b', 'b password', 'admin');
  // two admins demote each other at once (two panels): each check alone sees another admin
  const demotions = await Promise.allSettled([store.setRole('a', 'viewer', 'b'), store.setRole('b', 'viewer', 'a')]);
  assert.deepEqual(demotions.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  assert.ok(store.hasAdmin(), 'one admin is left');
  const deletions = await Promise.allSettled([store.deleteUser('a', 'x'), store.deleteUser('b', 'x')]);
  assert.ok(store.hasAdmin(), 'one admin is left after concurrent deletes');
  assert.ok(deletions.some((r) => r.status === 'rejected' && r.reason instanceof StoreError && /last admin/.test(r.reason.message)));
  // the same name added twice at once (a double click): hashing the password takes a while, both checks ran before it
  const adds = await Promise.allSettled([store.addUser('c', 'c password', 'viewer', 'x'), store.addUser('c', 'c password', 'operator', 'x')]);
  assert.deepEqual(adds.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  assert.ok(adds.some((r) => r.status === 'rejected' && r.reason instanceof StoreError && r.reason.code === 'conflict'));
  assert.equal(store.users().filter((u) => u.name === 'c').length, 1);
  const { store: again } = await openStore(file);
  assert.equal(again.users().filter((u) => u.name === 'c').length, 1, 'the file has it once too');
  assert.ok(again.hasAdmin());
});
