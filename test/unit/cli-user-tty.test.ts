// `lvsd user add` on a terminal: the password is read in raw mode (no echo), where the terminal does no
// line editing. Backspace and Ctrl-U must edit what was typed, Ctrl-C must cancel — not end up in the
// stored password. The pure part (typed-line.ts) on its own, then the bin on a real pty (python's pty
// module, which waits until lvsd has the terminal in raw mode before it types).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { typedLine } from '../../daemon/cli/typed-line.js';
import { openStore } from '../../daemon/state/store.js';
import { requireCommands } from '../support/prereq.js';

const CLI = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../daemon/cli/main.js');

test('typedLine: Backspace, Ctrl-U and arrow keys edit; Enter and Ctrl-D end; Ctrl-C cancels', () => {
  assert.deepEqual(typedLine('secreu\x7ft pass'), { state: 'more' });
  assert.deepEqual(typedLine('secreu\x7ft pass\r'), { state: 'done', line: 'secret pass' });
  assert.deepEqual(typedLine('secreu\bt\n'), { state: 'done', line: 'secret' });
  assert.deepEqual(typedLine('wrong\x15right one\r'), { state: 'done', line: 'right one' });
  assert.deepEqual(typedLine('ab\x1b[Dc\x1bOA\r'), { state: 'done', line: 'abc' });
  assert.deepEqual(typedLine('pässwörd🔑\x7f\x04'), { state: 'done', line: 'pässwörd' }, 'Backspace takes a whole character');
  assert.deepEqual(typedLine('half typed\x03 more\r'), { state: 'cancelled' });
  assert.deepEqual(typedLine('\x7f\x7fok\r'), { state: 'done', line: 'ok' }, 'Backspace on nothing is nothing');
});

/** Runs `lvsd user add NAME --state FILE` on a pty and types `keys` once the terminal is in raw mode. */
function onPty(state: string, name: string, keys: string): { status: number | null; output: string } {
  requireCommands('python3');
  const driver = `
import os, pty, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
deadline = time.time() + 60
while termios.tcgetattr(fd)[3] & termios.ICANON:
    if time.time() > deadline: sys.exit('lvsd never put the terminal in raw mode')
    time.sleep(0.02)
os.write(fd, sys.stdin.buffer.read())
while True:
    try: chunk = os.read(fd, 4096)
    except OSError: break
    if not chunk: break
    out += chunk
sys.stdout.write(out.decode(errors='replace'))
sys.exit(os.waitpid(pid, 0)[1] >> 8)
`;
  const r = spawnSync('python3', ['-c', driver, process.execPath, CLI, 'user', 'add', name, '--state', state], { input: keys, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

test('lvsd user add on a terminal: a typo fixed with Backspace is not in the password; Ctrl-C adds nobody', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-usertty-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const state = join(dir, 'state.json');
  const added = onPty(state, 'carol', 'carol passwx\x7ford\r');
  assert.equal(added.status, 0, added.output);
  assert.match(added.output, /user carol \(viewer\) added/);
  const cancelled = onPty(state, 'dave', 'dave pass\x03');
  assert.notEqual(cancelled.status, 0, cancelled.output);
  assert.match(cancelled.output, /cancelled; no user added/);
  const { store } = await openStore(state);
  assert.ok(await store.authenticate('carol', 'carol password'), 'the password as the user sees it typed');
  assert.equal(await store.authenticate('carol', 'carol passwx\x7ford'), null);
  assert.equal(store.getUser('dave'), undefined);
});
