// The VRRP engine process dies (OOM kill, a crash): the director says so (snapshot, status line), restarts
// it with backoff as keepalived's parent restarts its VRRP child, lets a reload bring it back at once, and
// starts nothing once it is stopping. A real Director with a fake engine (test/support/director-fakes.ts);
// the real process is killed in test/netns/vrrp-process.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { statusLine } from '../../daemon/director/status-line.js';
import { ONE_OF_EACH, startFakeDirector } from '../support/director-fakes.js';

const CONFIG = ONE_OF_EACH;

async function until(what: string, ok: () => boolean, timeoutMs = 5000): Promise<number> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
  return Date.now() - t0;
}

test('a dead engine is reported, restarted, and restarted again later when it dies again right away', async () => {
  const t = await startFakeDirector(CONFIG, { vrrpRespawn: { firstMs: 50, maxMs: 400 } });
  try {
    assert.equal(t.d.snapshot().vrrpProblem, null);
    t.engine().die();
    const snap = t.d.snapshot();
    assert.equal(snap.vrrpProblem, 'VRRP engine process exited (signal SIGKILL)');
    assert.equal(snap.vrrp[0]?.name, 'VI_1', 'the last roles it reported stay in view');
    assert.match(statusLine(snap), /^VRRP FAILED: VRRP engine process exited \(signal SIGKILL\) · /);
    assert.match((await t.d.liveness(100)) ?? '', /^VRRP engine failed: /, 'the watchdog is told while it is down');

    await until('a second engine', () => t.engines.length === 2);
    assert.equal(t.d.snapshot().vrrpProblem, null);
    assert.equal(await t.d.liveness(100), null);

    // It died again at once: the next restart waits twice as long.
    const t0 = Date.now();
    t.engine().die('exit code 70');
    await until('a third engine', () => t.engines.length === 3);
    const waited = Date.now() - t0;
    assert.ok(waited >= 95, `restarted after ${waited} ms, not after the doubled 100 ms`);
    assert.equal(t.d.snapshot().vrrpProblem, null);
  } finally {
    await t.cleanup();
  }
});

test('a reload while the engine is dead starts a new one with the new config at once', async () => {
  const t = await startFakeDirector(CONFIG, { vrrpRespawn: { firstMs: 60_000, maxMs: 60_000 } });
  try {
    t.engine().die();
    const next = CONFIG.replace('priority: 150', 'priority: 140');
    const r = await t.d.applyConfig(next, 'alice');
    assert.equal(r.ok, true, JSON.stringify(r.errors));
    assert.equal(t.engines.length, 2);
    assert.equal(t.d.snapshot().vrrp[0]?.basePriority, 140);
    assert.equal(t.d.snapshot().vrrpProblem, null);
  } finally {
    await t.cleanup();
  }
});

test('stopping while a restart is pending starts no engine afterwards', async () => {
  const t = await startFakeDirector(CONFIG, { vrrpRespawn: { firstMs: 30, maxMs: 30 } });
  t.engine().die();
  await t.cleanup();
  await sleep(100);
  assert.equal(t.engines.length, 1);
});
