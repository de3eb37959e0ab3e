// The API's pure parts: the line diff, the event ring, session expiry; and the helpers other parts call
// (bootstrap announcement, the local socket client).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lineDiff } from '../../daemon/api/line-diff.js';
import { EventLog } from '../../daemon/api/event-log.js';
import { SessionTable } from '../../daemon/api/sessions.js';
import { announceBootstrapToken } from '../../daemon/api/bootstrap.js';
import { localRequest, LocalApiError, STATUS_ROUTE } from '../../daemon/api/local-client.js';
import { startApi } from '../../daemon/api/listen.js';
import { openStore } from '../../daemon/state/store.js';
import { FakeDirector } from '../support/fake-director.js';
import type { DirectorSnapshot } from '../../daemon/director/snapshot.js';

const rebuild = (d: { op: string; text: string }[], side: '-' | '+'): string => d.filter((l) => l.op === ' ' || l.op === side).map((l) => l.text).join('\n');

test('line diff: both texts can be rebuilt from it, and unchanged lines are kept as context', () => {
  const line = fc.constantFrom('a', 'b', 'c', 'priority: 1', 'priority: 2', '');
  fc.assert(fc.property(fc.array(line, { maxLength: 30 }), fc.array(line, { maxLength: 30 }), (a, b) => {
    const before = a.join('\n');
    const after = b.join('\n');
    const d = lineDiff(before + '\n', after + '\n');
    assert.equal(rebuild(d, '-'), before);
    assert.equal(rebuild(d, '+'), after);
    if (before === after) assert.ok(d.every((l) => l.op === ' '));
  }));
  assert.deepEqual(lineDiff('x\ny\nz\n', 'x\nY\nz\n'), [
    { op: ' ', text: 'x' }, { op: '-', text: 'y' }, { op: '+', text: 'Y' }, { op: ' ', text: 'z' },
  ]);
});

/** The longest common subsequence's length, by the table every pair of lines needs (small inputs only). */
function lcsLength(a: string[], b: string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const row = [0];
    for (let j = 0; j < b.length; j++) row.push(x === b[j] ? (prev[j] ?? 0) + 1 : Math.max(prev[j + 1] ?? 0, row[j] ?? 0));
    prev = row;
  }
  return prev[b.length] ?? 0;
}

test('line diff: the fewest changed lines (as many kept as the longest common subsequence)', () => {
  const line = fc.constantFrom('a', 'b', 'c', 'd', '');
  fc.assert(fc.property(fc.array(line, { maxLength: 40 }), fc.array(line, { maxLength: 40 }), (a, b) => {
    const d = lineDiff(a.map((l) => `${l}\n`).join(''), b.map((l) => `${l}\n`).join(''));
    assert.equal(d.filter((l) => l.op === ' ').length, lcsLength(a, b));
  }));
});

test('line diff: a big config with two edits far apart shows those two lines; texts too different show the middle replaced', () => {
  const config = (salt: number, n: number): string[] => Array.from({ length: n }, (_, i) => `      - { address: 10.${salt}.${(i >> 8) & 255}.${i & 255}, port: 80, weight: 1 }`);
  const before = config(1, 15_000);
  const after = [...before];
  after[2_000] = after[2_000]?.replace('weight: 1', 'weight: 5') ?? '';
  after[13_000] = after[13_000]?.replace('weight: 1', 'weight: 0') ?? '';
  const d = lineDiff(before.join('\n'), after.join('\n'));
  assert.deepEqual(d.filter((l) => l.op !== ' '), [
    { op: '-', text: before[2_000] }, { op: '+', text: after[2_000] }, { op: '-', text: before[13_000] }, { op: '+', text: after[13_000] },
  ]);
  assert.equal(rebuild(d, '+'), after.join('\n'));
  // 3,000 lines all different: past the search's budget, the whole middle is replaced (and both sides rebuild).
  const other = config(2, 3_000);
  const r = lineDiff(['head', ...before.slice(0, 3_000), 'tail'].join('\n'), ['head', ...other, 'tail'].join('\n'));
  assert.deepEqual([r.at(0), r.at(-1)], [{ op: ' ', text: 'head' }, { op: ' ', text: 'tail' }]);
  assert.equal(r.filter((l) => l.op === '-').length, 3_000);
  assert.equal(r.filter((l) => l.op === '+').length, 3_000);
  assert.equal(rebuild(r, '+'), ['head', ...other, 'tail'].join('\n'));
});

test('event log: numbered, bounded, filtered by dotted prefix, newest first, fanned out', () => {
  const log = new EventLog(3);
  const seen: number[] = [];
  const off = log.subscribe((e) => seen.push(e.seq));
  const at = '2026-01-01T00:00:00Z';
  log.push({ type: 'vrrp.transition', at, instance: 'A', from: 'BACKUP', to: 'MASTER', reason: 'r' });
  log.push({ type: 'config.reload', at, ok: true, hash: 'h', by: 'x', message: 'm' });
  log.push({ type: 'vrrp.priority', at, instance: 'A', priority: 1, reason: 'r' });
  off();
  log.push({ type: 'audit', at, who: 'a' });
  assert.deepEqual(seen, [1, 2, 3]);
  assert.deepEqual(log.recent().map((e) => e.seq), [4, 3, 2], 'the oldest fell out');
  assert.deepEqual(log.recent({ type: 'vrrp' }).map((e) => e.type), ['vrrp.priority']);
  assert.deepEqual(log.recent({ type: 'vr' }), [], 'prefixes match whole dotted parts');
  assert.deepEqual(log.recent({ after: 2 }).map((e) => e.seq), [4, 3]);
  assert.equal(log.subscribers, 0);
});

test('sessions expire when idle and at their absolute limit', () => {
  let now = 0;
  const t = new SessionTable(1000, 5000, () => now);
  const s = t.create('alice');
  now = 900;
  assert.equal(t.get(s.id)?.user, 'alice');
  now = 1800;
  assert.ok(t.get(s.id), 'activity at 900 kept it alive');
  now = 2900;
  assert.equal(t.get(s.id), null, 'idle too long');
  const s2 = t.create('bob');
  for (now = 3000; now < 8000; now += 800) {
    if (now - s2.createdAt <= 5000) assert.ok(t.get(s2.id));
  }
  assert.equal(t.get(s2.id), null, 'past the absolute lifetime');
  const a = t.create('carol');
  const b = t.create('carol');
  t.deleteUser('carol', a.id);
  assert.ok(t.get(a.id));
  assert.equal(t.get(b.id), null);
});

test('bootstrap announcement: printed only while no admin exists, and the printed token works', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-boot-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'), { passwordCost: 1024 });
  const lines: string[] = [];
  const token = await announceBootstrapToken(store, 'http://127.0.0.1:9180', (l) => lines.push(l));
  assert.ok(token !== null);
  assert.ok(lines.some((l) => l.includes(token) && l.includes('http://127.0.0.1:9180')));
  assert.ok(lines.some((l) => l.includes('lvsd user add')));
  await store.redeemBootstrapToken(token, 'root', 'root password');
  const again: string[] = [];
  assert.equal(await announceBootstrapToken(store, 'x', (l) => again.push(l)), null);
  assert.deepEqual(again, []);
});

test('local client: GET /api/v1/status over the socket; clear errors when lvsd is not running or refuses', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-local-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const socket = join(dir, 'lvsd.sock');
  await assert.rejects(localRequest(socket, 'GET', STATUS_ROUTE), (e: unknown) => e instanceof LocalApiError && /lvsd is not running/.test(e.message) && e.message.startsWith(socket));
  const { store } = await openStore(join(dir, 'state.json'), { passwordCost: 1024 });
  const api = await startApi({ listen: '127.0.0.1:0', socket }, { director: new FakeDirector(), store, webuiDir: null });
  t.after(() => api.close());
  const res = await localRequest<DirectorSnapshot>(socket, 'GET', STATUS_ROUTE);
  assert.equal(res.status, 200);
  assert.equal(res.body.vrrp[0]?.state, 'MASTER');
  await assert.rejects(localRequest(socket, 'PUT', '/api/v1/services/web/override', { weight: 99999 }), (e: unknown) => e instanceof LocalApiError && e.status === 400 && /body\.weight/.test(e.message));
});

test('lvsd user add: through the socket while lvsd runs, into the file when it does not', async (t) => {
  const { addUserLocally } = await import('../../daemon/api/user-cli.js');
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-useradd-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const stateFile = join(dir, 'state.json');
  const socket = join(dir, 'lvsd.sock');
  const offline = await addUserLocally({ socket, stateFile, name: 'root', password: 'root password', role: 'admin' });
  assert.equal(offline.via, 'file');
  const { store } = await openStore(stateFile);
  assert.equal(store.getUser('root')?.role, 'admin');
  const api = await startApi({ listen: '127.0.0.1:0', socket }, { director: new FakeDirector(), store, webuiDir: null });
  t.after(() => api.close());
  const online = await addUserLocally({ socket, stateFile, name: 'ops', password: 'ops password', role: 'operator' });
  assert.equal(online.via, 'socket');
  assert.equal(store.getUser('ops')?.role, 'operator', 'the running daemon has it in memory, so its next write keeps it');
  await store.setOverride({ service: 's' }, { drain: true }, 'x');
  const { store: reread } = await openStore(stateFile);
  assert.ok(reread.getUser('ops'));
  await assert.rejects(addUserLocally({ socket, stateFile, name: 'ops', password: 'ops password', role: 'viewer' }), /already exists/);
});
