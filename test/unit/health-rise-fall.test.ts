// The rise/fall machine, table-driven on a virtual clock: each row is a sequence of check results
// ("o" pass, "x" fail), the options, and the transitions and delays that must come out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyResult, firstDelayMs, forceDown, newHealth, nextDelayMs, type RiseFallOptions } from '../../daemon/health/rise-fall.js';
import type { CheckResult } from '../../daemon/health/types.js';

const base: RiseFallOptions = { intervalMs: 1000, rise: 1, fall: 1, retry: 0, delayBeforeRetryMs: 500, warmupMs: 0, alpha: false };

const pass: CheckResult = { ok: true, reason: 'ok', detail: 'ok', latencyMs: 3 };
const timeout: CheckResult = { ok: false, reason: 'timeout', detail: 'no answer in 1000 ms', latencyMs: 1000 };

interface Row {
  name: string;
  opts: Partial<RiseFallOptions>;
  seq: string;
  /** "index:to" for every transition expected, in order. */
  transitions: string[];
  /** Delays chosen after each result (virtual clock advances by them). */
  delays?: number[];
}

const rows: Row[] = [
  { name: 'optimistic start, one failure is enough with fall 1', opts: {}, seq: 'oxo', transitions: ['1:down', '2:up'] },
  { name: 'fall 3 needs three consecutive failures', opts: { fall: 3 }, seq: 'xxoxxx', transitions: ['5:down'] },
  { name: 'rise 2 needs two consecutive passes', opts: { rise: 2 }, seq: 'xoxoo', transitions: ['0:down', '4:up'] },
  { name: 'alpha starts down, rise brings it up', opts: { alpha: true, rise: 2 }, seq: 'oxoo', transitions: ['3:up'] },
  { name: 'alpha with rise 1: first pass is up', opts: { alpha: true }, seq: 'o', transitions: ['0:up'] },
  { name: 'alternating results never flap with rise 2 / fall 2', opts: { rise: 2, fall: 2 }, seq: 'xoxoxoxoxo', transitions: [] },
  {
    name: 'retry 2: a try that passes saves the attempt',
    opts: { retry: 2 },
    seq: 'xxoxxx',
    transitions: ['5:down'],
    delays: [500, 500, 1000, 500, 500, 1000],
  },
  {
    name: 'retry 1 with fall 2: four failed tries make two failed attempts',
    opts: { retry: 1, fall: 2 },
    seq: 'xxxx',
    transitions: ['3:down'],
    delays: [500, 1000, 500, 1000],
  },
  { name: 'failures while down do not re-announce down', opts: {}, seq: 'xxxx', transitions: ['0:down'] },
];

for (const row of rows) {
  test(`rise/fall: ${row.name}`, () => {
    const opts = { ...base, ...row.opts };
    let now = 10_000;
    const h = newHealth(opts, now);
    const got: string[] = [];
    const delays: number[] = [];
    Array.from(row.seq).forEach((c, i) => {
      const t = applyResult(h, opts, c === 'o' ? pass : timeout, now);
      if (t !== null) got.push(`${i}:${t.to}`);
      const d = nextDelayMs(h, opts);
      delays.push(d);
      now += d;
    });
    assert.deepEqual(got, row.transitions);
    if (row.delays !== undefined) assert.deepEqual(delays, row.delays);
  });
}

test('a transition carries reason, detail and the time spent in the previous state', () => {
  const opts = { ...base, fall: 2 };
  const h = newHealth(opts, 1_000);
  assert.equal(applyResult(h, opts, pass, 2_000), null);
  assert.equal(applyResult(h, opts, { ok: false, reason: 'status', detail: 'status 503', latencyMs: 4 }, 3_000), null);
  const t = applyResult(h, opts, { ok: false, reason: 'status', detail: 'status 503', latencyMs: 4 }, 4_000);
  assert.deepEqual(t, { from: 'up', to: 'down', reason: 'status', detail: 'status 503', atMs: 4_000, inPreviousStateMs: 3_000 });
  const back = applyResult(h, opts, pass, 9_500);
  assert.deepEqual(back, { from: 'down', to: 'up', reason: 'ok', detail: 'ok', atMs: 9_500, inPreviousStateMs: 5_500 });
  assert.equal(h.checks, 4);
  assert.equal(h.failures, 2);
});

test('dynamic weight is kept from passing results', () => {
  const h = newHealth(base, 0);
  applyResult(h, base, { ...pass, weight: 7 }, 1);
  assert.equal(h.dynamicWeight, 7);
  applyResult(h, base, pass, 2);
  assert.equal(h.dynamicWeight, 7);
});

test('warmup spreads the first check over warmup, or over one interval without it', () => {
  assert.equal(firstDelayMs({ intervalMs: 1000, warmupMs: 0 }, 0.5), 500);
  assert.equal(firstDelayMs({ intervalMs: 1000, warmupMs: 10_000 }, 0.5), 5_000);
  assert.equal(firstDelayMs({ intervalMs: 1000, warmupMs: 0 }, 0), 0);
});

test('forceDown (removal / shutdown with omega) reports the lifecycle reason once', () => {
  const h = newHealth(base, 100);
  assert.deepEqual(forceDown(h, 'shutdown', 'lvsd stopping', 600), {
    from: 'up', to: 'down', reason: 'shutdown', detail: 'lvsd stopping', atMs: 600, inPreviousStateMs: 500,
  });
  assert.equal(forceDown(h, 'shutdown', 'again', 700), null);
});

test('property: state changes only after rise passes / fall failed attempts in a row', () => {
  fc.assert(
    fc.property(
      fc.array(fc.boolean(), { maxLength: 60 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 4 }),
      fc.boolean(),
      (seq, rise, fall, alpha) => {
        const opts = { ...base, rise, fall, alpha };
        const h = newHealth(opts, 0);
        let state = h.state;
        let run = 0;
        let last: boolean | undefined;
        seq.forEach((ok, i) => {
          run = ok === last ? run + 1 : 1;
          last = ok;
          const t = applyResult(h, opts, ok ? pass : timeout, i);
          if (t !== null) {
            assert.equal(t.from, state);
            assert.equal(t.to, ok ? 'up' : 'down');
            assert.ok(run >= (ok ? rise : fall), `moved after ${run} results`);
            state = t.to;
          } else if (state === 'down' && ok) {
            assert.ok(run < rise);
          } else if (state === 'up' && !ok) {
            assert.ok(run < fall);
          }
          assert.equal(h.state, state);
        });
      },
    ),
  );
});
