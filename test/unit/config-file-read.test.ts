// A reload reads the config file as lvsd's loader does: a file swapped for /dev/zero, a FIFO with no writer
// or a huge file refuses the reload with one error naming the file, and the running config is kept. The
// reload used to readFile() it: /dev/zero until the heap ran out, a FIFO for ever (the reload queue with it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigFile } from '../../daemon/director/config-file.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { MAX_CONFIG_BYTES } from '../../daemon/config/errors.js';

const TEXT = 'node:\n  name: lb1\n';

function running(t: { after: (fn: () => void) => void }): { file: ConfigFile; at: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-cfread-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const at = path.join(dir, 'lvsd.yaml');
  fs.writeFileSync(at, TEXT);
  const r = loadConfigText(TEXT, at);
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  return { file: new ConfigFile({ config: r.config, text: TEXT }), at };
}

test('the config swapped for /dev/zero: the reload is refused at the limit, the running text kept', { timeout: 30_000 }, async (t) => {
  const { file, at } = running(t);
  fs.rmSync(at);
  fs.symlinkSync('/dev/zero', at);
  const r = await file.read();
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map((e) => e.message), [`${at}:1:1: the config is more than 1 MiB (reading stopped at ${MAX_CONFIG_BYTES + 1} bytes); lvsd parses at most 1 MiB — not parsed`]);
  assert.equal(await file.onDisk(), null);
  assert.equal(file.running.text, TEXT);
});

test('the config swapped for a FIFO nobody writes to: refused at once, not waited on', { timeout: 30_000 }, async (t) => {
  const { file, at } = running(t);
  fs.rmSync(at);
  assert.equal(spawnSync('mkfifo', [at]).status, 0);
  const r = await file.read();
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map((e) => e.message), [`${at}:1:1: cannot read: a pipe with no writer: nothing to read`]);
});

test('a file that is not there: one "cannot read: ENOENT" (the code said once)', async (t) => {
  const { file, at } = running(t);
  fs.rmSync(at);
  const r = await file.read();
  assert.ok(!r.ok);
  assert.match(r.errors[0]?.message ?? '', new RegExp(`^${at}:1:1: cannot read: ENOENT: no such file or directory, open '${at}'$`));
});
