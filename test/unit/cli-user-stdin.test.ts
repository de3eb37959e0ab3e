// `lvsd user add` reads the password's line from stdin, and no more than a password can be: stdin from
// /dev/zero (or a file with no line end) used to be read until the heap ran out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../daemon/cli/main.js');

test('lvsd user add < /dev/zero: refused past the longest password, nothing added', { timeout: 60_000 }, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-ustdin-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const state = path.join(dir, 'state.json');
  const zero = fs.openSync('/dev/zero', 'r');
  t.after(() => { fs.closeSync(zero); });
  const r = spawnSync(process.execPath, [CLI, 'user', 'add', 'alice', '--state', state, '--socket', path.join(dir, 'none.sock')], { stdio: [zero, 'pipe', 'pipe'], encoding: 'utf8', timeout: 50_000 });
  assert.equal(r.signal, null, 'it ended by itself');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /no end of line in the first 1024 characters on stdin: a password is at most 1024; no user added/);
  assert.ok(!fs.existsSync(state) || !fs.readFileSync(state, 'utf8').includes('"alice"'));
});
