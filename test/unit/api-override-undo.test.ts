// An override whose state file write fails is undone in the director; when the director refuses that undo
// too, the caller still gets the first error (the full disk, 507), and the log holds both. The undo's error
// used to replace the store's, so the operator read "no virtual server" for a full disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { harness, RS1_ENC, WEB_ENC } from '../support/api-harness.js';
import { DiskFullError } from '../../daemon/state/disk-full.js';
import { DirectorRejection } from '../../daemon/director/port.js';

test('store write fails, the undo is refused: 507 with the store\'s error, both errors logged', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  const h = await harness({ logger: pino({ level: 'error' }, sink) });
  t.after(() => h.close());
  const op = await h.as('operator');
  h.store.setOverride = () => Promise.reject(new DiskFullError(h.store.file, 'ENOSPC'));
  h.director.clearOverride = () => Promise.reject(new DirectorRejection(409, 'the director is reloading; try again'));
  const res = await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`, { drain: true });
  assert.equal(res.statusCode, 507, res.body);
  assert.match(res.json<{ message: string }>().message, /no space left on the device/);
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; err?: { message: string }; undoError?: string });
  const both = logged.find((l) => l.undoError !== undefined);
  assert.ok(both, lines.join(''));
  assert.match(both.err?.message ?? '', /no space left/);
  assert.equal(both.undoError, 'the director is reloading; try again');
});
