// keepalived's script security rules (lib/notify.c check_script_secure, 2.2.7) over a table of paths, and
// the user lookup of script_user; test/netns/vrrp-script-security.test.ts runs them against keepalived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkScript, lookupIdentity, unsafePart, type FileInfo, type ScriptFs } from '../../daemon/vrrp/script-security.js';

const DIR = 0o040000;
const REG = 0o100000;
const LNK = 0o120000;
/** path → [uid, gid, mode]; a symlink maps to its target with `->`. */
function fsOf(table: Record<string, [number, number, number, string?]>): ScriptFs {
  const info = (p: string): FileInfo | null => {
    const e = table[p];
    return e === undefined ? null : { uid: e[0], gid: e[1], mode: e[2] };
  };
  const resolve = (p: string): string | null => {
    const e = table[p];
    if (e === undefined) return null;
    return e[3] === undefined ? p : resolve(e[3]);
  };
  return { lstat: info, stat: (p) => { const r = resolve(p); return r === null ? null : info(r); }, realpath: resolve };
}
const base: Record<string, [number, number, number, string?]> = {
  '/': [0, 0, DIR | 0o755],
  '/etc': [0, 0, DIR | 0o755],
  '/etc/k': [0, 0, DIR | 0o755],
  '/etc/k/ok.sh': [0, 0, REG | 0o755],
  '/etc/k/grp.sh': [0, 50, REG | 0o775],
  '/etc/k/rootgrp.sh': [0, 0, REG | 0o775],
  '/etc/k/world.sh': [0, 0, REG | 0o757],
  '/etc/k/mine.sh': [1000, 1000, REG | 0o755],
  '/etc/k/noexec.sh': [0, 0, REG | 0o644],
  '/etc/k/link.sh': [0, 0, LNK | 0o777, '/tmp/evil.sh'],
  '/tmp': [0, 0, DIR | 0o1777],
  '/tmp/t.sh': [0, 0, REG | 0o755],
  '/tmp/evil.sh': [1000, 1000, REG | 0o755],
  '/home': [0, 0, DIR | 0o755],
  '/home/u': [1000, 1000, DIR | 0o755],
  '/home/u/s.sh': [0, 0, REG | 0o755],
  '/srv': [0, 0, DIR | 0o777],
  '/srv/s.sh': [0, 0, REG | 0o755],
  '/usr': [0, 0, DIR | 0o755],
  '/usr/bin': [0, 0, DIR | 0o755],
  '/usr/bin/true': [0, 0, REG | 0o755],
  '/usr/bin/suid': [0, 0, REG | 0o4755],
};
const fs = fsOf({ ...base, '/srv/u.sh': [0, 0, REG | 0o4755] });
const root = { uid: 0, gid: 0 };
const nobody = { uid: 65534, gid: 65534, name: 'nobody' };

test('as root: every part of the path must be root-owned and not writable by a non-root group or everyone (sticky directories excepted)', () => {
  const cases: [string, string | null][] = [
    ['/etc/k/ok.sh', null],
    ['/etc/k/rootgrp.sh', null], // group-writable, but the group is root
    ['/tmp/t.sh', null], // /tmp is world-writable with the sticky bit
    ['/etc/k/grp.sh', '/etc/k/grp.sh is writable by group 50'],
    ['/etc/k/world.sh', '/etc/k/world.sh is writable by everyone'],
    ['/etc/k/mine.sh', '/etc/k/mine.sh is owned by uid 1000, not root'],
    ['/home/u/s.sh', '/home/u is owned by uid 1000, not root'],
    ['/srv/s.sh', '/srv is writable by everyone'],
  ];
  for (const [path, want] of cases) assert.equal(unsafePart(path, fs), want, path);
  assert.deepEqual(checkScript('/etc/k/ok.sh', root, true, fs), { run: true, path: '/etc/k/ok.sh' });
  // Unsafe: refused with enable_script_security, run (and reported) without it.
  assert.deepEqual(checkScript('/srv/s.sh', root, true, fs), { run: false, reason: 'unsafe permissions: /srv is writable by everyone (enable_script_security)' });
  assert.deepEqual(checkScript('/srv/s.sh', root, false, fs), { run: true, path: '/srv/s.sh', unsafe: '/srv is writable by everyone' });
  // A root-owned link in a safe directory to a file a user owns: the real path is checked too.
  assert.deepEqual(checkScript('/etc/k/link.sh', root, true, fs), { run: false, reason: 'unsafe permissions: /tmp/evil.sh is owned by uid 1000, not root (enable_script_security)' });
});

test('as another user: only executability counts, unless the file is set-uid root; bare names are found in PATH', () => {
  assert.deepEqual(checkScript('/srv/s.sh', nobody, true, fs), { run: true, path: '/srv/s.sh' });
  assert.equal(checkScript('/srv/u.sh', nobody, true, fs).run, false, 'set-uid root in a world-writable directory');
  assert.deepEqual(checkScript('/etc/k/noexec.sh', root, false, fs), { run: false, reason: '/etc/k/noexec.sh is not executable for uid 0 (0:0)' });
  assert.deepEqual(checkScript('/etc/k/mine.sh', { uid: 1000, gid: 1000 }, true, fs), { run: true, path: '/etc/k/mine.sh' });
  assert.deepEqual(checkScript('true', root, true, fs, '/nowhere:/usr/bin'), { run: true, path: '/usr/bin/true' });
  assert.deepEqual(checkScript('nosuch', root, true, fs, '/usr/bin'), { run: false, reason: 'nosuch not found in PATH' });
  assert.deepEqual(checkScript('/etc/k/gone.sh', root, true, fs), { run: false, reason: '/etc/k/gone.sh cannot be accessed' });
});

test('script_user USER[:GROUP] → ids from /etc/passwd and /etc/group; an unknown name is named', () => {
  const passwd = 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n';
  const group = 'root:x:0:\nadm:x:4:\nnogroup:x:65534:\n';
  assert.deepEqual(lookupIdentity('nobody', passwd, group), { uid: 65534, gid: 65534, name: 'nobody' });
  assert.deepEqual(lookupIdentity('nobody:adm', passwd, group), { uid: 65534, gid: 4, name: 'nobody:adm' });
  assert.deepEqual(lookupIdentity('ghost', passwd, group), { error: 'script user ghost does not exist' });
  assert.deepEqual(lookupIdentity('nobody:ghosts', passwd, group), { error: 'script group ghosts does not exist' });
});
