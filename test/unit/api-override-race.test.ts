// Two concurrent override PUTs of one real server while the first one's store write fails: the failed one
// is undone and the other applies, and the director (what runs) and the store (what a restart runs) agree.
// The two used to interleave: both read the same "before", and the failed one's undo put that stale
// "before" back in the director over the other's change, which the store kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness, RS1, RS1_ENC, WEB, WEB_ENC } from '../support/api-harness.js';
import { DiskFullError } from '../../daemon/state/disk-full.js';
import type { StateStore } from '../../daemon/state/store.js';

/**
 * The store's first override write fails with a full disk — once the second write has started, or after
 * 300 ms if it does not start meanwhile (the changes are then one after the other, as they should be).
 */
function failFirstWrite(store: StateStore): void {
  const real = store.setOverride.bind(store);
  let calls = 0;
  let second: () => void = () => undefined;
  const secondStarted = new Promise<void>((r) => { second = r; });
  store.setOverride = async (...args) => {
    calls++;
    if (calls === 1) {
      await Promise.race([secondStarted, new Promise((r) => setTimeout(r, 300))]);
      throw new DiskFullError(store.file, 'ENOSPC');
    }
    second();
    return real(...args);
  };
}

const rsOverride = (h: Awaited<ReturnType<typeof harness>>): unknown =>
  h.director.snapshot().virtualServices.find((s) => s.id === WEB)?.realServers.find((r) => r.id === RS1)?.override ?? null;

const statuses = (...rs: { statusCode: number }[]): number[] => rs.map((r) => r.statusCode).sort();

test('concurrent PUTs, the first write fails: the other applies, director and store agree', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  failFirstWrite(h.store);
  const url = `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`;
  const [a, b] = await Promise.all([h.call(op, 'PUT', url, { drain: true }), h.call(op, 'PUT', url, { weight: 3 })]);
  // which one the server takes first is its choice; one write failed, the other did not
  assert.deepEqual(statuses(a, b), [200, 507], `${a.body} ${b.body}`);
  const failed = a.statusCode === 507 ? a : b;
  assert.match(failed.json<{ message: string }>().message, /no space left on the device/);
  const stored = h.store.overrides().find((o) => o.service === WEB && o.realServer === RS1)?.override ?? null;
  assert.deepEqual(stored, a.statusCode === 200 ? { drain: true } : { weight: 3 });
  assert.deepEqual(rsOverride(h), stored, 'the director runs what the store holds');
});

test('concurrent PUT and DELETE over an override, the first write fails: director and store agree', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  const url = `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`;
  assert.equal((await h.call(op, 'PUT', url, { weight: 2 })).statusCode, 200);
  failFirstWrite(h.store);
  const [a, b] = await Promise.all([h.call(op, 'PUT', url, { drain: true }), h.call(op, 'DELETE', url)]);
  assert.deepEqual(statuses(a, b), [200, 507], `${a.body} ${b.body}`);
  const stored = h.store.overrides().find((o) => o.service === WEB && o.realServer === RS1)?.override ?? null;
  assert.deepEqual(stored, a.statusCode === 200 ? { drain: true } : null);
  assert.deepEqual(rsOverride(h), stored, 'the director runs what the store holds');
});
