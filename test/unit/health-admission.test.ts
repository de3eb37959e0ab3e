// The adaptive limit of checks in flight (pure AIMD core): converges down under congestion, recovers,
// stays within floor and ceiling, and dead targets do not throttle everyone else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AdmissionLimit, type AdmissionSample } from '../../daemon/health/admission.js';

const TIMEOUT = 1000;
const fast: AdmissionSample = { latencyMs: 20, baselineMs: 20, timeoutMs: TIMEOUT, timedOut: false, answeredBefore: true, saturated: true };
const slow: AdmissionSample = { ...fast, latencyMs: 800 };
const freshTimeout: AdmissionSample = { ...fast, latencyMs: TIMEOUT, timedOut: true };
const deadTimeout: AdmissionSample = { ...freshTimeout, answeredBefore: false };

/** Feeds `perWindow` samples spread over one timeout-long window, `windows` times; returns the limit after each. */
function run(a: AdmissionLimit, windows: number, sample: (i: number) => AdmissionSample, clock = { t: 0 }, perWindow = 100): number[] {
  const seen: number[] = [];
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < perWindow; i++) a.record(sample(i), clock.t + ((i + 1) * TIMEOUT) / perWindow);
    clock.t += TIMEOUT;
    seen.push(a.limit);
  }
  return seen;
}

test('admission: starts at the ceiling and stays there while checks answer fast', () => {
  const a = new AdmissionLimit({ ceiling: 5000 });
  assert.equal(a.limit, 5000);
  run(a, 20, () => fast);
  assert.equal(a.limit, 5000);
  assert.equal(a.cuts, 0);
});

test('admission: slow answers cut the limit multiplicatively, down to the floor and not below', () => {
  const a = new AdmissionLimit({ ceiling: 5000, floor: 16 });
  const seen = run(a, 30, () => slow);
  assert.ok((seen[1] ?? 0) < 5000, `cut after the first window: ${seen[1]}`);
  for (let i = 1; i < seen.length; i++) assert.ok((seen[i] ?? 0) <= (seen[i - 1] ?? 0));
  assert.equal(a.limit, 16);
  // Roughly ×0.7 per window: 5000 → 16 takes ~16 windows, not one.
  assert.ok((seen[3] ?? 0) > 1000, `after 4 windows: ${seen[3]}`);
});

test('admission: timeouts of targets that answered before count as congestion (collapse with no answers at all)', () => {
  const a = new AdmissionLimit({ ceiling: 5000 });
  run(a, 4, () => freshTimeout);
  assert.ok(a.limit < 2000, `limit ${a.limit}`);
});

test('admission: recovers additively to the ceiling once checks are fast again, only while the limit binds', () => {
  const a = new AdmissionLimit({ ceiling: 300, floor: 16, increase: 16 });
  const clock = { t: 0 };
  run(a, 20, () => slow, clock);
  assert.equal(a.limit, 16);
  run(a, 5, () => ({ ...fast, saturated: false }), clock);
  assert.equal(a.limit, 16, 'no demand beyond the limit: no reason to raise it');
  const seen = run(a, 30, () => fast, clock);
  assert.equal((seen[1] ?? 0) - (seen[0] ?? 0), 16, 'additive: one step per window');
  assert.equal(a.limit, 300, 'capped at the ceiling');
});

test('admission: many dead targets (every check times out, others fast) do not move the limit', () => {
  const a = new AdmissionLimit({ ceiling: 1000 });
  // Half the targets are dead: the first timeout of each is "fresh" once, then never again.
  const clock = { t: 0 };
  run(a, 1, (i) => (i % 2 === 0 ? fast : freshTimeout), clock, 1000);
  assert.equal(a.limit, 1000, 'timeouts beside fast answers are dead servers');
  run(a, 50, (i) => (i % 2 === 0 ? fast : deadTimeout), clock, 1000);
  assert.equal(a.limit, 1000);
  assert.equal(a.cuts, 0);
  // Only dead targets: no signal at all, the limit stays.
  const b = new AdmissionLimit({ ceiling: 1000 });
  run(b, 50, () => deadTimeout);
  assert.equal(b.limit, 1000);
});

test('admission: a few slow answers stay under the cut share; timeouts beside slow answers count', () => {
  const a = new AdmissionLimit({ ceiling: 1000 });
  const clock = { t: 0 };
  run(a, 10, (i) => (i < 20 ? slow : fast), clock);
  assert.equal(a.limit, 1000);
  // Answers mostly slow and some checks timing out: congestion, even though the slow share alone is small.
  run(a, 3, (i) => (i < 20 ? slow : i < 35 ? fast : freshTimeout), clock);
  assert.ok(a.cuts > 0, `cuts ${a.cuts}`);
});

test('admission: servers slow by nature (answers near their usual time) are not congestion', () => {
  const a = new AdmissionLimit({ ceiling: 1000 });
  const clock = { t: 0 };
  run(a, 10, () => ({ ...slow, baselineMs: 700 }), clock);
  assert.equal(a.limit, 1000);
  run(a, 3, () => ({ ...slow, latencyMs: 900, baselineMs: 300 }), clock);
  assert.ok(a.cuts > 0, 'three times its usual time is congestion');
});

test('admission: the floor never exceeds the ceiling', () => {
  const a = new AdmissionLimit({ ceiling: 4, floor: 16 });
  assert.equal(a.limit, 4);
  run(a, 10, () => slow);
  assert.equal(a.limit, 4);
});
