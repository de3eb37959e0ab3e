// The facade's snapshot refresh (daemon/vrrp/coalesce.ts): a burst of callers shares one request in flight
// and one queued after it, and every caller gets an answer asked after its call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coalesced } from '../../daemon/vrrp/coalesce.js';

/** A request whose answers the test releases by hand; each answer is the request's sequence number. */
function manual(): { ask: () => Promise<number>; asked: () => number; answer: () => void; fail: () => void } {
  const waiting: { resolve: (n: number) => void; reject: (e: Error) => void; n: number }[] = [];
  let n = 0;
  return {
    ask: () => new Promise<number>((resolve, reject) => { waiting.push({ resolve, reject, n: ++n }); }),
    asked: () => n,
    answer: () => {
      const w = waiting.shift();
      assert.ok(w, 'no request waiting');
      w.resolve(w.n);
    },
    fail: () => { waiting.shift()?.reject(new Error('engine gone')); },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('255 callers during one request in flight cause two requests, not 255', async () => {
  const m = manual();
  const refresh = coalesced(m.ask);
  const first = refresh();
  const rest = Array.from({ length: 254 }, () => refresh());
  assert.equal(m.asked(), 1);
  m.answer();
  assert.equal(await first, 1);
  await tick();
  assert.equal(m.asked(), 2, 'the callers who came during request 1 get one request asked after it');
  m.answer();
  assert.deepEqual(new Set(await Promise.all(rest)), new Set([2]));
  assert.equal(m.asked(), 2);
});

test('a caller after the burst settled asks afresh; a failed request does not stop the queued one', async () => {
  const m = manual();
  const refresh = coalesced(m.ask);
  const a = refresh();
  const b = refresh();
  m.fail();
  await assert.rejects(a, /engine gone/);
  await tick();
  m.answer();
  assert.equal(await b, 2);
  const c = refresh();
  assert.equal(m.asked(), 3);
  m.answer();
  assert.equal(await c, 3);
});
