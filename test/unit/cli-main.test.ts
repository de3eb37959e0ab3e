import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCommand, usage, COMMANDS } from '../../daemon/cli/commands.js';
import type { Command, Io } from '../../daemon/cli/command.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

// main.ts runs itself on import (it is the bin), so the dispatcher's pieces are tested here and
// the bin as a whole in cli-bin.test.ts.

const cmd = (name: string): Command => ({ name, summary: name, usage: name, run: () => Promise.resolve(0) });

test('the table has every command', () => {
  assert.deepEqual(COMMANDS.map((c) => c.name), ['run', 'check-config', 'status', 'top', 'version', 'import-keepalived', 'reload', 'user add', 'doctor', 'bgp withdraw', 'bgp restore', 'peer-token']);
});

test('findCommand: longest multi-word name wins, the rest are its arguments', () => {
  const table = [cmd('user'), cmd('user add'), cmd('reload')];
  assert.deepEqual(findCommand(['user', 'add', 'alice'], table)?.command.name, 'user add');
  assert.deepEqual(findCommand(['user', 'add', 'alice'], table)?.rest, ['alice']);
  assert.deepEqual(findCommand(['user', 'list'], table)?.command.name, 'user');
  assert.equal(findCommand(['nope'], table), undefined);
});

test('usage lists every command with its summary; each entry loads the command of its name', async () => {
  const text = await usage();
  for (const e of COMMANDS) {
    const c = await e.load();
    assert.equal(c.name, e.name, 'the table\'s name is the module\'s');
    assert.match(text, new RegExp(`^  ${c.name} +${c.summary.replace(/[()]/g, '.')}$`, 'm'));
  }
});

test('check-config in process: usage error for missing FILE', async () => {
  const { checkConfigCommand } = await import('../../daemon/cli/check-config.js');
  const out: string[] = [];
  const io: Io = { out: (t) => out.push(t), err: (t) => out.push(t) };
  await assert.rejects(checkConfigCommand.run([], io), /exactly one FILE/);
  await assert.rejects(checkConfigCommand.run(['--frobnicate', 'x'], io), /Unknown option/);
});

test('check-config in process: warnings go to stderr but the check passes; --quiet prints nothing on success', async () => {
  const { checkConfigCommand } = await import('../../daemon/cli/check-config.js');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-check-'));
  try {
    const f = join(dir, 'w.yaml');
    writeFileSync(f, 'vrrp:\n  instances: [{ name: A, interface: eth0, virtualRouterId: 9, virtualIpaddresses: [192.0.2.1/24] }]\nvirtualServers: [{ address: 192.0.2.99, port: 80 }]\n');
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (t) => out.push(t), err: (t) => err.push(t) };
    assert.equal(await checkConfigCommand.run([f], io), 0);
    assert.deepEqual(err, [`${f}:3:29: virtualServers[0].address: 192.0.2.99 is not a VIP of any VRRP instance on this director (warning)`]);
    assert.match(out[0] ?? '', /: ok \(1 VRRP instance, 1 virtual server, 0 real servers\)$/);
    out.length = 0;
    err.length = 0;
    assert.equal(await checkConfigCommand.run(['-q', f], io), 0);
    assert.deepEqual(out, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check-config in process: a file with 500 errors says 500 in its count line, not the 101 lines it prints', async () => {
  const { checkConfigCommand } = await import('../../daemon/cli/check-config.js');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-check-'));
  try {
    const f = join(dir, 'm.yaml');
    writeFileSync(f, `virtualServers:\n${Array.from({ length: 500 }, (_, i) => `  - { address: 192.0.2.1, port: ${String(1000 + i)}, bogus${String(i)}: 1 }`).join('\n')}\n`);
    const err: string[] = [];
    const io: Io = { out: () => undefined, err: (t) => err.push(t) };
    assert.equal(await checkConfigCommand.run([f], io), 1);
    assert.equal(err.length, 102);
    assert.equal(err.at(-1), `${f}: 500 errors (the first 100 shown)`);
    const two = join(dir, 't.yaml');
    writeFileSync(two, 'virtualServers:\n  - { address: 192.0.2.1, port: 80, a: 1 }\n  - { address: 192.0.2.2, port: 80, b: 1 }\n');
    err.length = 0;
    assert.equal(await checkConfigCommand.run([two], io), 1);
    assert.equal(err.at(-1), `${two}: 2 errors`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
