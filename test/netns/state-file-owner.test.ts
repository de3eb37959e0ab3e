// The state file's owner under root (issue 17, item 3): lvsd runs as its own user; `lvsd user add` run
// as root while lvsd is stopped writes the file directly and must hand it back as it found it, or lvsd
// cannot start. Needs root (chown to another user, and a child process running as that user).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireRoot } from '../support/prereq.js';
import { openStore } from '../../daemon/state/store.js';
import { addUserLocally } from '../../daemon/api/user-cli.js';

// the unprivileged user lvsd would run as (Debian's nobody stands in for the packaged lvsd user)
const LVSD_UID = 65534;
const LVSD_GID = 65534;
const OPEN = fileURLToPath(new URL('../support/open-state-main.js', import.meta.url));

function openAs(uid: number, gid: number, file: string, mode = ''): { ok: boolean; name?: string; message?: string; users?: string[] } {
  const out = execFileSync(process.execPath, [OPEN, file, mode], { uid, gid, encoding: 'utf8' });
  return JSON.parse(out) as { ok: boolean; name?: string; message?: string; users?: string[] };
}

async function lvsdOwnedState(t: { after: (fn: () => Promise<void>) => void }): Promise<{ dir: string; file: string }> {
  requireRoot();
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-owner-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755); // the tmp dir is root's 0700: let the child in
  const state = join(dir, 'lib');
  const file = join(state, 'state.json');
  await openStore(file);
  await chown(state, LVSD_UID, LVSD_GID);
  await chown(file, LVSD_UID, LVSD_GID);
  await chmod(file, 0o600);
  assert.equal(openAs(LVSD_UID, LVSD_GID, file).ok, true, 'lvsd can open its own file');
  return { dir, file };
}

test('`lvsd user add` as root with lvsd stopped keeps the owner and mode; lvsd (its own user) still starts', async (t) => {
  const { file } = await lvsdOwnedState(t);
  const r = await addUserLocally({ socket: null, stateFile: file, name: 'alice', password: 'alice password', role: 'admin' });
  assert.equal(r.via, 'file');
  const st = await stat(file);
  assert.deepEqual({ uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 }, { uid: LVSD_UID, gid: LVSD_GID, mode: 0o600 });
  assert.deepEqual(openAs(LVSD_UID, LVSD_GID, file), { ok: true, users: ['alice'] });
});

test('a state file lvsd may not read is an access error naming owner and mode, never "start from empty", and --state-from-empty leaves it in place', async (t) => {
  const { file } = await lvsdOwnedState(t);
  await chown(file, 0, 0); // as a root-run writer without the fix left it
  const r = openAs(LVSD_UID, LVSD_GID, file);
  assert.equal(r.ok, false);
  assert.equal(r.name, 'StateFileAccessError');
  assert.match(r.message ?? '', /cannot read \(EACCES.*as uid 65534 gid 65534; it belongs to uid 0 gid 0, mode 0600; .*chown/);
  assert.doesNotMatch(r.message ?? '', /state-from-empty/);
  const empty = openAs(LVSD_UID, LVSD_GID, file, 'start-empty');
  assert.equal(empty.name, 'StateFileAccessError');
  assert.deepEqual(await readdir(join(file, '..')), ['state.json'], 'nothing moved aside');
});

test('a writer that cannot keep the owner refuses, naming it, and leaves the file as it was', async (t) => {
  const { file } = await lvsdOwnedState(t);
  await chown(file, 0, 0);
  await chmod(file, 0o644); // readable by lvsd, owned by root: lvsd may not give it back to root
  const before = await stat(file);
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { openStore } from ${JSON.stringify(new URL('../../daemon/state/store.js', import.meta.url).href)};
    const { store } = await openStore(${JSON.stringify(file)});
    try { await store.setOverride({ service: 's' }, { drain: true }, 'a'); console.log('written'); }
    catch (e) { console.log(e.name + ': ' + e.message); }
  `], { uid: LVSD_UID, gid: LVSD_GID, encoding: 'utf8' });
  assert.match(out, /^StateFileAccessError: .*cannot keep its owner uid 0 gid 0 as uid 65534 gid 65534/);
  const after = await stat(file);
  assert.deepEqual([after.uid, after.ino, after.mtimeMs], [before.uid, before.ino, before.mtimeMs]);
  assert.deepEqual(await readdir(join(file, '..')), ['state.json'], 'no tmp file left');
});
