// The pure parts of the benchmarks' CPU accounting (bench/proc-usage.ts): reading schedstat and turning
// two readings into CPU per request, cores and the share of the round spent waiting for a CPU.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSchedstat, processTree, roundCost, threadShares, usageOf } from '../../bench/proc-usage.js';

test('parseSchedstat: run and wait nanoseconds; an unreadable line is zeros', () => {
  assert.deepEqual(parseSchedstat('123456789 987654321 4242\n'), { runNs: 123456789, waitNs: 987654321, slices: 4242 });
  assert.deepEqual(parseSchedstat(''), { runNs: 0, waitNs: 0, slices: 0 });
});

test('roundCost: µs per request, cores over the round, the share waited', () => {
  // 3 s on a CPU and 9 s waiting over a 5 s round that served 100,000 requests.
  const c = roundCost({ runNs: 1e9, waitNs: 2e9, slices: 1000 }, { runNs: 4e9, waitNs: 11e9, slices: 31_000 }, 5000, 100_000);
  assert.equal(c.usPer, 30);
  assert.equal(c.usWaitPerRun, 300); // 9 s waited over 30,000 times run
  assert.equal(c.cores, 0.6);
  assert.equal(c.waited, 0.75);
  // Nothing served, nothing run: no figure rather than Infinity or 0.
  const none = roundCost({ runNs: 5, waitNs: 5, slices: 1 }, { runNs: 5, waitNs: 5, slices: 1 }, 1000, 0);
  assert.ok(Number.isNaN(none.usPer) && Number.isNaN(none.waited) && Number.isNaN(none.usWaitPerRun));
});

test('usageOf and processTree read this process: its threads ran, a child is found', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn('sleep', ['5']);
  try {
    await new Promise((r) => setTimeout(r, 100));
    const tree = processTree(process.pid);
    assert.ok(tree.includes(child.pid ?? -1), `${child.pid} in ${tree.join(',')}`);
    const a = usageOf([process.pid]);
    let x = 0;
    for (let i = 0; i < 2e6; i++) x += i;
    const b = usageOf([process.pid]);
    assert.ok(x > 0 && b.runNs > a.runNs, `${a.runNs} → ${b.runNs}`);
    assert.deepEqual(usageOf([2 ** 30]), { runNs: 0, waitNs: 0, slices: 0 });
  } finally {
    child.kill();
  }
});

test('threadShares: each busy thread\'s share of the round, largest first; idle ones and new ones', () => {
  const before = new Map([['1/1', 100], ['1/2', 0], ['2/2', 50]]);
  const after = new Map([['1/1', 400], ['1/2', 1], ['2/2', 50], ['3/3', 100]]);
  // deltas 300, 1, 0, 100 of 401: 0.748, 0.249; the 1 ns thread is under 5 %
  assert.deepEqual(threadShares(before, after).map((s) => s.toFixed(3)), ['0.748', '0.249']);
  assert.deepEqual(threadShares(before, before), []);
});
