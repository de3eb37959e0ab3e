// unrunnable(): which track scripts keepalived would disable at load (not found, not a file, not executable).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unrunnable } from '../../daemon/vrrp/track.js';

test('unrunnable: absolute paths and PATH lookups, with the reason', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-unrunnable-'));
  try {
    const exe = join(dir, 'check');
    const plain = join(dir, 'plain');
    writeFileSync(exe, '#!/bin/sh\nexit 0\n');
    chmodSync(exe, 0o755);
    writeFileSync(plain, 'x');
    chmodSync(plain, 0o644);
    assert.equal(unrunnable(`${exe} --flag "a b"`), null);
    assert.equal(unrunnable('check -x', dir), null, 'found in PATH');
    assert.equal(unrunnable('/usr/local/bin/check-bird'), '/usr/local/bin/check-bird not found');
    assert.equal(unrunnable('nope-not-here', dir), 'nope-not-here not found in PATH');
    assert.equal(unrunnable(dir), `${dir} is not a file`);
    if (process.getuid?.() !== 0) assert.equal(unrunnable(plain), `${plain} is not executable`);
    else assert.equal(unrunnable(plain), `${plain} is not executable`, 'root too: X_OK needs an x bit somewhere');
    assert.equal(unrunnable(''), 'empty command');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
