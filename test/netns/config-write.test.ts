// Where an applied config can be written under the shipped unit. /etc/lvsd is root's and read-only to the lvsd
// user (install.md), and ProtectSystem=strict mounts /etc read-only for the service: the panel's Apply must then
// be refused with a 4xx that names the file and the reason, the file untouched and no temp file left — not a
// bare 500. Both cases are made real here: the writer runs as an unprivileged user against a root-owned file,
// and as root inside a mount namespace where the folder is a read-only bind mount.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireCommands, requireRoot } from '../support/prereq.js';

const MAIN = fileURLToPath(new URL('../support/config-write-main.js', import.meta.url));
const ORIGINAL = 'node: { name: d1 }\n';
const NEXT = 'node: { name: d2 }\n';

function setup(): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-config-write-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'lvsd.yaml');
  writeFileSync(file, ORIGINAL, { mode: 0o644 });
  return { dir, file };
}

function attempt(prefix: string[], file: string): { ok: boolean; status?: number | null; message?: string } {
  const out = execFileSync(prefix[0] ?? '', [...prefix.slice(1), process.execPath, MAIN, file, NEXT], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as { ok: boolean; status?: number | null; message?: string };
}

test('a root-owned config file the lvsd user may not write: 409 naming the file, nothing changed, no temp file left', () => {
  requireRoot();
  requireCommands('runuser');
  const { dir, file } = setup();
  try {
    const r = attempt(['runuser', '-u', 'nobody', '--'], file);
    assert.equal(r.ok, false);
    assert.equal(r.status, 409);
    assert.equal(r.message, `cannot write ${file} (EACCES): lvsd may not change the config file here; edit it and reload instead (see docs/install.md)`);
    assert.equal(readFileSync(file, 'utf8'), ORIGINAL);
    assert.deepEqual(readdirSync(dir), ['lvsd.yaml']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a read-only /etc (ProtectSystem=strict): 409 naming the file and EROFS, nothing changed', () => {
  requireRoot();
  requireCommands('unshare', 'mount');
  const { dir, file } = setup();
  try {
    const r = attempt(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', `mount --bind ${dir} ${dir} && mount -o remount,bind,ro ${dir} && exec "$@"`, 'sh'], file);
    assert.equal(r.ok, false);
    assert.equal(r.status, 409);
    assert.match(r.message ?? '', new RegExp(`^cannot write ${file.replace(/[.]/g, '\\.')} \\(EROFS\\): `));
    assert.equal(readFileSync(file, 'utf8'), ORIGINAL);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a writable file is replaced atomically, keeping its mode', () => {
  requireRoot();
  const { dir, file } = setup();
  try {
    chmodSync(file, 0o640);
    const r = attempt(['env'], file);
    assert.deepEqual(r, { ok: true });
    assert.equal(readFileSync(file, 'utf8'), NEXT);
    assert.equal(execFileSync('stat', ['-c', '%a', file], { encoding: 'utf8' }).trim(), '640');
    assert.deepEqual(readdirSync(dir), ['lvsd.yaml'], 'no temp file left');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
