// Quorum with hysteresis, table-driven: a walk of live weights and the quorum state after each step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialQuorum, nextQuorum } from '../../daemon/health/quorum.js';

const rows: { name: string; quorum: number; hysteresis: number; start: number; walk: number[]; states: string }[] = [
  { name: 'default quorum 1: any live weight keeps it up', quorum: 1, hysteresis: 0, start: 3, walk: [2, 1, 0, 1], states: 'uudu' },
  { name: 'quorum 3 without hysteresis flips at 3', quorum: 3, hysteresis: 0, start: 3, walk: [2, 3, 2], states: 'dud' },
  { name: 'hysteresis 1 around quorum 3: down below 2, up again at 4', quorum: 3, hysteresis: 1, start: 4, walk: [3, 2, 1, 2, 3, 4, 3, 2, 1], states: 'uuddduuud' },
  { name: 'starting below quorum', quorum: 2, hysteresis: 1, start: 1, walk: [2, 3], states: 'du' },
];

for (const r of rows) {
  test(`quorum: ${r.name}`, () => {
    const opts = { quorum: r.quorum, hysteresis: r.hysteresis };
    let q = initialQuorum(r.start, opts);
    let got = '';
    for (const w of r.walk) {
      q = nextQuorum(q, w, opts);
      got += q ? 'u' : 'd';
    }
    assert.equal(got, r.states);
  });
}

test('quorum: the initial state ignores hysteresis', () => {
  assert.equal(initialQuorum(3, { quorum: 3, hysteresis: 2 }), true);
  assert.equal(initialQuorum(2, { quorum: 3, hysteresis: 2 }), false);
});
