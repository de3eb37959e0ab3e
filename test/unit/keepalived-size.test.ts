// `lvsd import-keepalived` reads no file past the config's own limit (MAX_CONFIG_BYTES, read-capped.ts):
// /dev/zero, an endless pipe, a huge file and a huge included file are refused with one error naming the
// file and the limit (it used to read /dev/zero until the heap ran out), and lvsd's config loader says
// the same of an endless device.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importKeepalivedCommand } from '../../daemon/config/keepalived/index.js';
import { loadConfig } from '../../daemon/config/load.js';
import { formatError, MAX_CONFIG_BYTES } from '../../daemon/config/errors.js';

async function importFile(file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await importKeepalivedCommand([file], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const LIMIT = 'lvsd parses at most 1 MiB — not parsed';

test('/dev/zero: refused once reading passes the limit, exit 1, nothing on stdout (named as given)', async () => {
  const r = await importFile('/dev/zero');
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, `lvsd import-keepalived: /dev/zero: the config is more than 1 MiB (reading stopped at ${MAX_CONFIG_BYTES + 1} bytes); ${LIMIT}\n`);
});

test('a huge file and a huge included file: refused by their size, naming the file (and the include line)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-ksize-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const big = path.join(dir, 'big.conf');
  fs.writeFileSync(big, `# ${'x'.repeat(2 * 1024 * 1024)}\n`);
  const main = path.join(dir, 'keepalived.conf');
  fs.writeFileSync(main, 'global_defs {\n}\ninclude big.conf\n');
  const direct = await importFile(big);
  assert.equal(direct.code, 1);
  assert.equal(direct.stderr, `lvsd import-keepalived: ${big}: the config is 2.0 MiB (2097155 bytes); ${LIMIT}\n`);
  const included = await importFile(main);
  assert.equal(included.code, 1);
  assert.equal(included.stderr, `lvsd import-keepalived: ${main}:3:1: included file ${big}: the config is 2.0 MiB (2097155 bytes); ${LIMIT}\n`);
  // at the limit exactly, a file is read
  fs.writeFileSync(big, `# ${'x'.repeat(MAX_CONFIG_BYTES - 3)}\n`);
  const at = await importFile(main);
  assert.equal(at.code, 0, at.stderr);
});

test('an endless pipe (FIFO): refused past the limit, the writer sees the pipe closed', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kfifo-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const fifo = path.join(dir, 'keepalived.conf');
  const mk = spawn('mkfifo', [fifo]);
  assert.equal(await new Promise((resolve) => mk.on('exit', resolve)), 0, 'mkfifo failed');
  // The test holds the pipe open (read-write, which does not wait): the importer, which opens it non-blocking,
  // then finds a writer even if `yes` has not opened it yet, and `yes` opens it without waiting for a reader.
  const hold = fs.openSync(fifo, fs.constants.O_RDWR);
  // `yes` writes forever; it ends with SIGPIPE once the importer and the test have closed the pipe
  const writer = spawn('sh', ['-c', `exec yes 'vrrp_script chk { script "/bin/true" }' > '${fifo}'`], { stdio: 'ignore' });
  const ended = new Promise((resolve) => writer.on('exit', (code, signal) => { resolve(signal ?? code); }));
  const r = await importFile(fifo);
  fs.closeSync(hold);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `lvsd import-keepalived: ${fifo}: the config is more than 1 MiB (reading stopped at ${MAX_CONFIG_BYTES + 1} bytes); ${LIMIT}\n`);
  assert.notEqual(await ended, 0);
});

test('a binary file (a NUL byte) is "not a text file" at the NUL, as lvsd\'s loader says, not an unterminated string', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lvsd-kbin-'));
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }); });
  const bin = path.join(dir, 'keepalived.conf');
  fs.writeFileSync(bin, Buffer.from('global_defs {\n "x\0\x01\x02\n}\n', 'binary'));
  const r = await importFile(bin);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, `lvsd import-keepalived: ${bin}:2:4: not a text file (a NUL byte here); a keepalived.conf is text\n`);
});

test('lvsd\'s own loader: /dev/zero is "more than 1 MiB", not a 1.0 MiB file', async () => {
  const r = await loadConfig('/dev/zero');
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map(formatError), [`/dev/zero:1:1: the config is more than 1 MiB (reading stopped at ${MAX_CONFIG_BYTES + 1} bytes); ${LIMIT}`]);
});
