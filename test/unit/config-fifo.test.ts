// A FIFO nobody writes to, given as lvsd's config or as the keepalived.conf to import: refused at once with
// a clear error. open(2) used to wait for a writer for ever, taking `lvsd check-config`, the importer and,
// on a reload, one of libuv's four threads with it. A pipe with a writer is still read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { importKeepalivedCommand } from '../../daemon/config/keepalived/index.js';
import { readCapped, readCappedSync } from '../../daemon/read-capped.js';
import { MAX_CONFIG_BYTES } from '../../daemon/config/errors.js';

// a guard against the old behaviour hanging the run, not a timing assertion
const GUARD = { timeout: 30_000 };

function fifo(t: { after: (fn: () => void) => void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-fifo-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const p = path.join(dir, 'keepalived.conf');
  assert.equal(spawnSync('mkfifo', [p]).status, 0, 'mkfifo failed');
  return p;
}

test('lvsd\'s loader: a FIFO with no writer is "a pipe with no writer" at FILE:1:1', GUARD, async (t) => {
  const p = fifo(t);
  const r = await loadConfig(p);
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map(formatError), [`${p}:1:1: cannot read: a pipe with no writer: nothing to read`]);
});

test('import-keepalived: a FIFO with no writer is refused, exit 1', GUARD, async (t) => {
  const p = fifo(t);
  let stderr = '';
  const code = await importKeepalivedCommand([p], { stdout: () => undefined, stderr: (s) => (stderr += s) });
  assert.equal(code, 1);
  assert.match(stderr, /cannot read: a pipe with no writer: nothing to read\n$/);
});

/** A writer that has the FIFO open (read-write: its open does not wait) before it resolves; it writes `script` later. */
async function writer(p: string, script: string): Promise<{ exited: Promise<unknown>; kill: () => void }> {
  const child = spawn('sh', ['-c', `exec 3<>'${p}'; echo ready; ${script}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve) => child.stdout.once('data', () => { resolve(); }));
  return { exited, kill: () => child.kill() };
}

test('a FIFO whose writer is there: read to its end, by both readers', GUARD, async (t) => {
  const p = fifo(t);
  for (const read of [(f: string) => readCapped(f, { max: MAX_CONFIG_BYTES }), (f: string) => Promise.resolve(readCappedSync(f, { max: MAX_CONFIG_BYTES }))]) {
    const w = await writer(p, "sleep 0.2; echo 'vrrp_script chk {' >&3; echo '}' >&3");
    const r = await read(p);
    await w.exited;
    assert.deepEqual(r, { ok: true, text: 'vrrp_script chk {\n}\n' });
  }
});

test('a pipe whose writer stays silent: given up after idleMs', GUARD, async (t) => {
  const p = fifo(t);
  const w = await writer(p, 'sleep 30');
  t.after(() => { w.kill(); });
  assert.throws(() => readCappedSync(p, { max: MAX_CONFIG_BYTES, idleMs: 50 }), /nothing to read for 0.05 s/);
  await assert.rejects(readCapped(p, { max: MAX_CONFIG_BYTES, idleMs: 50 }), /nothing to read for 0.05 s/);
});

test('import-keepalived: an include of a FIFO, a device or a directory says what it is, not "no file matches"', GUARD, async (t) => {
  const p = fifo(t);
  const dir = path.dirname(p);
  assert.equal(spawnSync('mkfifo', [path.join(dir, 'pipe.conf')]).status, 0);
  fs.mkdirSync(path.join(dir, 'conf.d'));
  fs.writeFileSync(path.join(dir, 'main.conf'), 'include pipe.conf\ninclude /dev/tty\ninclude conf.d\ninclude nothing.conf\n');
  let stderr = '';
  const code = await importKeepalivedCommand([path.join(dir, 'main.conf')], { stdout: () => undefined, stderr: (s) => (stderr += s) });
  assert.equal(code, 2);
  const main = path.join(dir, 'main.conf');
  assert.deepEqual(stderr.trimEnd().split('\n').slice(0, 4), [
    `${main}:1: include: pipe.conf is a FIFO (named pipe), not a file; not included`,
    `${main}:2: include: /dev/tty is a device, not a file; not included`,
    `${main}:3: include: conf.d is a directory (include dir/*.conf?), not a file; not included`,
    `${main}:4: include: no file matches nothing.conf`,
  ]);
});
