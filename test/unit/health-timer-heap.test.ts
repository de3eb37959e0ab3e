// The scheduler's heap against a sorted-array model, under random push/pop/remove/update sequences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TimerHeap, type HeapEntry } from '../../daemon/health/timer-heap.js';

interface E extends HeapEntry { id: number }

test('timer heap: property — pops in due order and matches a model through remove/update', () => {
  const op = fc.oneof(
    fc.record({ k: fc.constant('push' as const), due: fc.integer({ min: 0, max: 1000 }) }),
    fc.record({ k: fc.constant('pop' as const) }),
    fc.record({ k: fc.constant('remove' as const), pick: fc.nat() }),
    fc.record({ k: fc.constant('update' as const), pick: fc.nat(), due: fc.integer({ min: 0, max: 1000 }) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const heap = new TimerHeap<E>();
      const model = new Set<E>();
      let next = 0;
      for (const o of ops) {
        const live = [...model];
        if (o.k === 'push') {
          const e: E = { id: next++, due: o.due, heapIndex: -1 };
          heap.push(e);
          model.add(e);
        } else if (o.k === 'pop') {
          const min = live.reduce<number | undefined>((m, e) => (m === undefined || e.due < m ? e.due : m), undefined);
          const got = heap.pop();
          assert.equal(got?.due, min);
          if (got !== undefined) model.delete(got);
        } else if (live.length > 0) {
          const e = live[o.pick % live.length] as E;
          if (o.k === 'remove') {
            assert.equal(heap.remove(e), true);
            assert.equal(heap.remove(e), false);
            model.delete(e);
          } else {
            heap.update(e, o.due);
          }
        }
        assert.equal(heap.size, model.size);
      }
      const drained: number[] = [];
      for (let e = heap.pop(); e !== undefined; e = heap.pop()) drained.push(e.due);
      assert.deepEqual(drained, [...model].map((e) => e.due).sort((a, b) => a - b));
    }),
  );
});
