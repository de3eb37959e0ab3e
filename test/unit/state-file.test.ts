// The state file on disk: corrupt, null, wrong-shaped and missing files; the start-from-empty escape hatch;
// writes that survive kill -9.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, StateFileError } from '../../daemon/state/store.js';
import { AUDIT_TOTAL_MAX, AUDIT_VALUE_MAX, boundAudit, parseState, STATE_FILE_MAX } from '../../daemon/state/file-adapter.js';
import { addUserLocally } from '../../daemon/api/user-cli.js';
import type { AuditEntry } from '../../daemon/state/schema.js';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-state-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a missing file is created with an empty state, mode 0600', async (t) => {
  const file = join(await tempDir(t), 'sub', 'state.json');
  const { store, created } = await openStore(file);
  assert.equal(created, true);
  assert.equal(store.users().length, 0);
  const st = await stat(file);
  assert.equal(st.mode & 0o777, 0o600);
  const again = await openStore(file);
  assert.equal(again.created, false);
  assert.equal(again.store.cookieSecret, store.cookieSecret, 'the cookie secret survives a restart');
});

const bad: [string, string, RegExp][] = [
  // JSON that does not parse is placed: FILE:LINE:COL, not "at position N"
  ['truncated JSON', '{"version": 1, "overr', /:1:22: not valid JSON \(Unterminated string\)/],
  ['a broken second line', '{"version": 1,\n  x: 2}', /:2:3: not valid JSON \(Expected double-quoted property name\)/],
  ['empty file', '', /:1:1: not valid JSON \(Unexpected end of JSON input\)/],
  ['null', 'null', /expected a JSON object at the top level, found null/],
  ['an array', '[]', /found an array/],
  ['wrong version', JSON.stringify({ version: 2, overrides: [], users: [], audit: [], bootstrapTokenHash: null, cookieSecret: 'x'.repeat(40) }), /\/version/],
  ['weight out of range', JSON.stringify({ version: 1, overrides: [{ service: 's', override: { weight: 70000 }, by: 'a', at: 'b' }], users: [], audit: [], bootstrapTokenHash: null, cookieSecret: 'x'.repeat(40) }), /\/overrides\/0\/override\/weight: must be <= 65535/],
  ['unknown role', JSON.stringify({ version: 1, overrides: [], users: [{ name: 'a', hash: 'scrypt$x', role: 'root', createdAt: 'x' }], audit: [], bootstrapTokenHash: null, cookieSecret: 'x'.repeat(40) }), /\/users\/0\/role/],
  ['missing users', JSON.stringify({ version: 1, overrides: [], audit: [], bootstrapTokenHash: null, cookieSecret: 'x'.repeat(40) }), /wrong shape/],
];

for (const [what, text, problem] of bad) {
  test(`a state file holding ${what} is refused, named, and left untouched`, async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'state.json');
    await writeFile(file, text);
    await assert.rejects(openStore(file), (e: unknown) => {
      assert.ok(e instanceof StateFileError);
      assert.equal(e.file, file);
      assert.ok(e.message.startsWith(`${file}:`), e.message);
      assert.match(e.message, problem);
      assert.match(e.message, /state-from-empty/);
      return true;
    });
    assert.equal(await readFile(file, 'utf8'), text, 'the bad file is never replaced');
    assert.deepEqual(await readdir(dir), ['state.json']);
  });
}

test('startEmpty moves a bad file aside and starts from an empty state', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  await writeFile(file, 'null');
  const { store, movedAside } = await openStore(file, { startEmpty: true, now: () => new Date('2026-01-02T03:04:05.678Z') });
  assert.equal(movedAside, `${file}.bad-2026-01-02T03-04-05-678Z`);
  assert.equal(await readFile(movedAside, 'utf8'), 'null');
  assert.equal(store.users().length, 0);
  parseState(file, await readFile(file, 'utf8'));
});

test('startEmpty leaves a good file alone', async (t) => {
  const file = join(await tempDir(t), 'state.json');
  const first = await openStore(file);
  await first.store.setOverride({ service: 'tcp:10.0.0.1:80' }, { drain: true }, 'alice');
  const { store, movedAside } = await openStore(file, { startEmpty: true });
  assert.equal(movedAside, null);
  assert.deepEqual(store.getOverride({ service: 'tcp:10.0.0.1:80' }), { drain: true });
});

test('writes survive kill -9 at any moment: the file always parses and holds the schema', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  const writer = fileURLToPath(new URL('../support/state-writer.js', import.meta.url));
  for (let round = 0; round < 8; round++) {
    const child = spawn(process.execPath, [writer, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => { resolve(); });
      child.once('exit', (code) => { reject(new Error(`writer exited early with ${String(code)}`)); });
    });
    await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    const state = parseState(file, await readFile(file, 'utf8'));
    assert.ok(state.overrides.length >= 1, `round ${round}: the writer's changes are there`);
    assert.equal(state.audit.length >= state.overrides.length, true, 'each override came with its audit entry');
  }
  // tmp files of killed writers may stay behind, but never in place of the state file, and the next
  // start removes them
  const { store } = await openStore(file);
  assert.ok(store.overrides().length > 0);
  assert.deepEqual(await readdir(dir), ['state.json']);
});

// ---- issue 17: owner and mode, orphan tmp files, a bounded audit log ----------------------------

test('`lvsd user add` with lvsd stopped keeps the state file\'s mode (the owner: test/netns/state-file-owner)', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  await openStore(file);
  await chmod(file, 0o640);
  const r = await addUserLocally({ socket: null, stateFile: file, name: 'carol', password: 'carol password', role: 'admin' });
  assert.equal(r.via, 'file');
  assert.equal((await stat(file)).mode & 0o7777, 0o640);
  const { store } = await openStore(file);
  assert.equal(store.getUser('carol')?.role, 'admin');
});

test('tmp files a crash left next to the state file are removed at start; a live writer\'s are not', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  await openStore(file);
  const dead = '.state.json.2147483646.7.tmp'; // above any pid_max: no such process
  const live = `.state.json.${String(process.ppid)}.1.tmp`;
  const other = '.other.json.2147483646.1.tmp';
  for (const n of [dead, live, other, 'state.json.notes']) await writeFile(join(dir, n), '{');
  await openStore(file);
  assert.deepEqual((await readdir(dir)).sort(), [live, other, 'state.json', 'state.json.notes'].sort());
});

function entry(id: number, before: unknown, after: unknown): AuditEntry {
  return { id, at: '2026-01-01T00:00:00.000Z', who: 'alice', action: 'config.apply', target: '/etc/lvsd/lvsd.yaml', before, after };
}

test('boundAudit: a big before/after becomes a summary, long fields are cut, the oldest entries go past the total', () => {
  const big = { changes: Array.from({ length: 5000 }, (_, i) => `add real-server web/10.0.${String(i >> 8)}.${String(i & 255)}:80`) };
  const long = { ...entry(2, { hash: 'a' }, { hash: 'b' }), target: 'x'.repeat(10_000) };
  const audit = [entry(1, null, big), long];
  boundAudit(audit);
  const after = audit[0]?.after as { truncated: boolean; chars: number; preview: string };
  assert.equal(after.truncated, true);
  assert.equal(after.chars, JSON.stringify(big).length);
  assert.ok(JSON.stringify(after).length <= AUDIT_VALUE_MAX);
  assert.deepEqual(audit[1]?.before, { hash: 'a' }, 'small values untouched');
  assert.ok(long.target.length <= 256);
  const many = Array.from({ length: 6000 }, (_, i) => entry(i + 1, 'b'.repeat(AUDIT_VALUE_MAX - 10), 'a'.repeat(AUDIT_VALUE_MAX - 10)));
  boundAudit(many);
  const total = many.reduce((n, e) => n + JSON.stringify(e).length, 0);
  assert.ok(total <= AUDIT_TOTAL_MAX, String(total));
  assert.ok(many.length > 100);
  assert.equal(many.at(-1)?.id, 6000, 'the newest entries stay');
  assert.equal(many[0]?.id, 6000 - many.length + 1, 'the oldest went');
});

test('an audit entry with a huge before/after is stored as a summary; an oversized file is trimmed at the next write', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  const { store } = await openStore(file);
  await store.audit('alice', 'config.apply', 'f', { text: 'x'.repeat(1_000_000) }, null);
  assert.ok((await stat(file)).size < 20_000, `${String((await stat(file)).size)} bytes`);
  assert.equal((store.auditLog()[0]?.before as { truncated?: boolean }).truncated, true, 'memory says what the file says');
  // a file grown big before the bound existed
  const state = parseState(file, await readFile(file, 'utf8'));
  state.audit = Array.from({ length: 5000 }, (_, i) => entry(i + 1, 'y'.repeat(4000), null));
  await writeFile(file, JSON.stringify(state));
  const again = await openStore(file);
  await again.store.setOverride({ service: 's' }, { drain: true }, 'alice');
  assert.ok((await stat(file)).size < AUDIT_TOTAL_MAX * 1.5, `${String((await stat(file)).size)} bytes`);
  assert.equal(again.store.auditLog({ limit: 1 })[0]?.action, 'override.set');
});

test('a state file that is /dev/zero or a FIFO with no writer: refused at start, named, not read for ever', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'state.json');
  await symlink('/dev/zero', file);
  await assert.rejects(openStore(file), (e: unknown) => e instanceof StateFileError && e.message.startsWith(`${file}: more than ${STATE_FILE_MAX} bytes (reading stopped there)`));
  await rm(file);
  assert.equal(spawnSync('mkfifo', [file]).status, 0);
  await assert.rejects(openStore(file), (e: unknown) => e instanceof StateFileError && e.message.startsWith(`${file}: cannot read (a pipe with no writer: nothing to read)`));
});
