// The state file on disk: corrupt, null, wrong-shaped and missing files; the start-from-empty escape hatch;
// writes that survive kill -9.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, StateFileError } from '../../daemon/state/store.js';
import { parseState } from '../../daemon/state/file-adapter.js';

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
  ['truncated JSON', '{"version": 1, "overr', /not valid JSON/],
  ['empty file', '', /not valid JSON/],
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
      assert.ok(e.message.startsWith(`${file}: `), e.message);
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
  // tmp files of killed writers may stay behind, but never in place of the state file
  const { store } = await openStore(file);
  assert.ok(store.overrides().length > 0);
});
