import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findCommand, usage, COMMANDS } from '../../daemon/cli/commands.js';
import type { Command, Io } from '../../daemon/cli/command.js';

// main.ts runs itself on import (it is the bin), so the dispatcher's pieces are tested here and
// the bin as a whole in cli-bin.test.ts.

const cmd = (name: string): Command => ({ name, summary: name, usage: name, run: () => Promise.resolve(0) });

test('the table has the four foundation commands', () => {
  assert.deepEqual(COMMANDS.map((c) => c.name), ['run', 'check-config', 'status', 'version']);
});

test('findCommand: longest multi-word name wins, the rest are its arguments', () => {
  const table = [cmd('user'), cmd('user add'), cmd('reload')];
  assert.deepEqual(findCommand(['user', 'add', 'alice'], table)?.command.name, 'user add');
  assert.deepEqual(findCommand(['user', 'add', 'alice'], table)?.rest, ['alice']);
  assert.deepEqual(findCommand(['user', 'list'], table)?.command.name, 'user');
  assert.equal(findCommand(['nope'], table), undefined);
});

test('usage lists every command with its summary', () => {
  const text = usage();
  for (const c of COMMANDS) assert.match(text, new RegExp(`^  ${c.name} +${c.summary.replace(/[()]/g, '.')}$`, 'm'));
});

test('check-config in process: usage error for missing FILE', async () => {
  const { checkConfigCommand } = await import('../../daemon/cli/check-config.js');
  const out: string[] = [];
  const io: Io = { out: (t) => out.push(t), err: (t) => out.push(t) };
  await assert.rejects(checkConfigCommand.run([], io), /exactly one FILE/);
  await assert.rejects(checkConfigCommand.run(['--frobnicate', 'x'], io), /Unknown option/);
});
