// Spawns the compiled `lvsd` bin as an operator would: exit codes, stdout/stderr, signals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { BIN, startRun } from '../support/lvsd-run.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = join(ROOT, 'config/lvsd.yaml');

function lvsd(...args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 20_000 });
}

test('the bin starts with a node shebang (package.json "bin" runs it directly)', () => {
  assert.match(readFileSync(BIN, 'utf8'), /^#!\/usr\/bin\/env node\n/);
});

test('lvsd version prints the package version', () => {
  const r = lvsd('version');
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(r.status, 0);
  assert.equal(r.stdout.trim().split(' ')[1], pkg.version);
  assert.match(r.stdout, /^lvsd \S+ \(node v\d+/);
});

test('lvsd with no command prints usage and exits 2; an unknown command too', () => {
  const none = lvsd();
  assert.equal(none.status, 2);
  assert.match(none.stderr, /usage: lvsd <command>/);
  const bad = lvsd('frobnicate');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unknown command "frobnicate"/);
});

test('check-config: the example is valid (exit 0, summary on stdout, nothing on stderr)', () => {
  const r = lvsd('check-config', EXAMPLE);
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
  assert.match(r.stdout, /lvsd\.yaml: ok \(2 VRRP instances, 1 virtual server, 3 real servers\)/);
});

test('check-config: a broken file exits 1 with FILE:LINE:COL: path: message lines on stderr', () => {
  const f = fileURLToPath(new URL('../../../test/fixtures/config/many-errors.yaml', import.meta.url));
  const r = lvsd('check-config', f);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  const expected = readFileSync(f.replace(/\.yaml$/, '.expected'), 'utf8').trimEnd().split('\n').map((l) => l.replace('many-errors.yaml', f));
  assert.deepEqual(lines.slice(0, -1), expected);
  assert.equal(lines.at(-1), `${f}: ${expected.length} errors`);
});

test('check-config: a missing file exits 1 naming it; a missing argument exits 2', () => {
  const r = lvsd('check-config', '/nonexistent/lvsd.yaml');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^\/nonexistent\/lvsd\.yaml:1:1: cannot read: ENOENT/);
  assert.equal(lvsd('check-config').status, 2);
});

test('run: an invalid config at start exits 1 after logging every error', async () => {
  const f = fileURLToPath(new URL('../../../test/fixtures/config/duplicate-vrid.yaml', import.meta.url));
  const run = startRun(['--config', f]);
  try {
    assert.equal(await run.exit, 1);
    assert.ok(run.lines.some((l) => l.level === 'error' && /virtualRouterId 51 is already used/.test(l.msg)));
    assert.match(run.lines.at(-1)?.msg ?? '', /config is invalid \(1 error\); not starting/);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});
