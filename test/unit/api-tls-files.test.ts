// api.tls.key and api.tls.cert are read before the API starts, as PEM files are: a FIFO nobody writes to
// held the start for ever (systemd then kills lvsd for never saying READY) and /dev/zero filled the heap.
// Each is now an error naming the setting and the file, and nothing is left running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi } from '../../daemon/api/listen.js';
import { openStore } from '../../daemon/state/store.js';
import { FakeDirector } from '../support/fake-director.js';

test('api.tls: a FIFO with no writer, /dev/zero and a missing file are errors naming the setting and the file', { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-tlsfiles-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'), { passwordCost: 1024 });
  const fifo = join(dir, 'key.pem');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const zero = join(dir, 'cert.pem');
  await symlink('/dev/zero', zero);
  const start = (key: string, cert: string): Promise<unknown> =>
    startApi({ listen: '127.0.0.1:0', socket: join(dir, 'lvsd.sock'), tls: { key, cert } }, { director: new FakeDirector(), store, webuiDir: null });
  await assert.rejects(start(fifo, zero), { message: `api.tls.key ${fifo}: a pipe with no writer: nothing to read` });
  await assert.rejects(start(join(dir, 'none.pem'), zero), /^Error: api\.tls\.key .*none\.pem: ENOENT/);
  const key = join(dir, 'real.pem');
  await writeFile(key, '-----BEGIN PRIVATE KEY-----\n');
  await assert.rejects(start(key, zero), { message: `api.tls.cert ${zero}: more than 1048576 bytes; not a PEM file` });
});
