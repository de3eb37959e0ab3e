// The monitor on a virtual clock with fake probes: detection time, timeouts on hung targets, bounded
// concurrency, spread over the interval, retry, quorum and sorry server, hooks, reloads, omega.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthMonitor, type HealthTarget, type MonitorClock, type QuorumEvent, type TransitionEvent, type WeightEvent } from '../../daemon/health/monitor.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import { fail, OK_VERDICT, type CheckVerdict } from '../../daemon/health/types.js';
import type { Probe } from '../../daemon/health/checkers/index.js';
import { Writable } from 'node:stream';
import { createLogger } from '../../daemon/log.js';

const EPOCH = 1_800_000_000_000;

class VirtualClock implements MonitorClock {
  t = 0;
  private timers: { at: number; seq: number; fn: () => void }[] = [];
  private seq = 0;
  now(): number {
    return this.t;
  }
  wall(): number {
    return EPOCH + this.t;
  }
  setTimer(fn: () => void, ms: number): unknown {
    const h = { at: this.t + ms, seq: this.seq++, fn };
    this.timers.push(h);
    return h;
  }
  clearTimer(h: unknown): void {
    this.timers = this.timers.filter((x) => x !== h);
  }
  /** Time passes without any timer running (a blocked event loop). */
  stall(ms: number): void {
    this.t += ms;
  }
  /** Runs every timer due up to now + ms in order, letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: (typeof this.timers)[number] | undefined;
      for (const x of this.timers) if (x.at <= end && (next === undefined || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      if (next === undefined) break;
      this.timers = this.timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
    await flush();
  }
}
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Deterministic [0,1) sequence. */
function lcg(seed = 42): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

type Behaviour = { verdict: CheckVerdict; delayMs?: number } | 'hang';

interface Rig {
  clock: VirtualClock;
  mon: HealthMonitor;
  behave: Map<string, Behaviour>;
  inFlight: Map<string, number>;
  maxInFlight: { total: number; perTarget: number };
  starts: { id: string; at: number }[];
  transitions: TransitionEvent[];
  quorums: QuorumEvent[];
  weights: WeightEvent[];
  hooks: { command: string; env: Readonly<Record<string, string>> }[];
}

function rig(concurrency = 1000, logger?: NonNullable<ConstructorParameters<typeof HealthMonitor>[0]>['logger']): Rig {
  const clock = new VirtualClock();
  const behave = new Map<string, Behaviour>();
  const inFlight = new Map<string, number>();
  const r: Rig = {
    clock, behave, inFlight, maxInFlight: { total: 0, perTarget: 0 }, starts: [], transitions: [], quorums: [], weights: [], hooks: [],
    mon: undefined as unknown as HealthMonitor,
  };
  let total = 0;
  const probeFactory = (t: HealthTarget): Probe => (signal) => {
    r.starts.push({ id: t.id, at: clock.now() });
    total++;
    const n = (inFlight.get(t.id) ?? 0) + 1;
    inFlight.set(t.id, n);
    r.maxInFlight.total = Math.max(r.maxInFlight.total, total);
    r.maxInFlight.perTarget = Math.max(r.maxInFlight.perTarget, n);
    const end = (v: CheckVerdict): CheckVerdict => {
      total--;
      inFlight.set(t.id, (inFlight.get(t.id) ?? 1) - 1);
      return v;
    };
    // A further checker (moreChecks) is told apart by its connectPort: `${id}@${port}`.
    const b = behave.get(`${t.id}@${t.check.connectPort ?? ''}`) ?? behave.get(t.id) ?? { verdict: OK_VERDICT };
    return new Promise((resolve) => {
      if (b === 'hang') {
        signal.addEventListener('abort', () => { resolve(end(fail('timeout', 'aborted'))); }, { once: true });
        return;
      }
      if (b.delayMs === undefined) resolve(end(b.verdict));
      else clock.setTimer(() => { resolve(end(b.verdict)); }, b.delayMs);
    });
  };
  r.mon = new HealthMonitor({ clock, concurrency, random: lcg(), probeFactory, notifier: (command, env) => r.hooks.push({ command, env }), ...(logger !== undefined ? { logger } : {}) });
  r.mon.on('transition', (e) => r.transitions.push(e));
  r.mon.on('quorum', (e) => r.quorums.push(e));
  r.mon.on('weight', (e) => r.weights.push(e));
  return r;
}

function check(o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type: 'tcp', intervalMs: 1000, timeoutMs: 500, rise: 2, fall: 3, ...o };
}

function target(id: string, o: Partial<HealthTarget> = {}, c: Partial<CheckOptions> = {}): HealthTarget {
  return { id, service: 'web', address: '10.0.1.1', port: 80, weight: 1, check: check(c), ...o };
}

const refused = fail('refused', 'ECONNREFUSED');

test('monitor: a dead server is detected within interval × fall, with reason and time in state', async () => {
  const r = rig();
  r.mon.upsert(target('rs1', { notify: { down: '/hooks/down.sh', up: '/hooks/up.sh' } }));
  await r.clock.advance(10_000);
  assert.equal(r.mon.state('rs1'), 'up');
  r.behave.set('rs1', { verdict: refused });
  const killedAt = r.clock.now();
  await r.clock.advance(5_000);
  assert.equal(r.transitions.length, 1);
  const e = r.transitions[0] as TransitionEvent;
  assert.deepEqual([e.id, e.from, e.to, e.reason, e.detail, e.weight], ['rs1', 'up', 'down', 'refused', 'ECONNREFUSED', 0]);
  const detection = e.at - EPOCH - killedAt;
  assert.ok(detection > 2 * 1000 && detection <= 3 * 1000, `detected after ${detection} ms`);
  assert.ok(e.inPreviousStateMs >= 12_000 && e.inPreviousStateMs <= 13_000, `in state ${e.inPreviousStateMs}`);
  assert.deepEqual(r.hooks.map((h) => [h.command, h.env.LVSD_EVENT, h.env.LVSD_REASON]), [['/hooks/down.sh', 'down', 'refused']]);
  r.behave.delete('rs1');
  await r.clock.advance(3_000);
  assert.equal(r.mon.state('rs1'), 'up');
  assert.equal(r.transitions[1]?.reason, 'ok');
  assert.equal(r.hooks[1]?.command, '/hooks/up.sh');
});

test('monitor: a hung target times out every check and never has two checks in flight', async () => {
  const r = rig();
  r.mon.upsert(target('hung', {}, { fall: 2, timeoutMs: 700 }));
  r.behave.set('hung', 'hang');
  await r.clock.advance(10_000);
  assert.equal(r.maxInFlight.perTarget, 1);
  assert.equal(r.mon.state('hung'), 'down');
  assert.equal(r.transitions[0]?.reason, 'timeout');
  const starts = r.starts.map((s) => s.at);
  for (let i = 1; i < starts.length; i++) assert.ok((starts[i] ?? 0) - (starts[i - 1] ?? 0) >= 1000, `checks ${starts[i - 1]} → ${starts[i]}`);
  // Detection bound: the first timeout lands at phase + timeout, the fall-th one interval × (fall-1) later.
  const first = starts[0] ?? 0;
  const down = r.transitions.at(0);
  assert.ok(down !== undefined);
  assert.equal(down.at - EPOCH, first + 1000 + 700);
  assert.ok(r.mon.stats().timeouts >= 9);
});

test('monitor: concurrency is bounded; a queue of due checks drains in order without losing any', async () => {
  const r = rig(10);
  for (let i = 0; i < 100; i++) r.mon.upsert(target(`rs${i}`, {}, { timeoutMs: 200 }));
  for (let i = 0; i < 100; i++) r.behave.set(`rs${i}`, { verdict: OK_VERDICT, delayMs: 50 });
  await r.clock.advance(5_000);
  assert.equal(r.maxInFlight.total, 10);
  const perTarget = new Map<string, number>();
  for (const s of r.starts) perTarget.set(s.id, (perTarget.get(s.id) ?? 0) + 1);
  assert.equal(perTarget.size, 100);
  // 100 checks of 50 ms with 10 slots fit in an interval: every target keeps ~1 check per second.
  for (const [id, n] of perTarget) assert.ok(n >= 4 && n <= 6, `${id}: ${n} checks in 5 s`);
});

test('monitor: checks are spread over the interval, not bunched', async () => {
  const r = rig();
  for (let i = 0; i < 1000; i++) r.mon.upsert(target(`rs${i}`));
  await r.clock.advance(3_000);
  const buckets = new Array<number>(10).fill(0);
  for (const s of r.starts) if (s.at >= 1000 && s.at < 2000) {
    const i = Math.floor((s.at - 1000) / 100);
    buckets[i] = (buckets[i] ?? 0) + 1;
  }
  assert.equal(buckets.reduce((a, b) => a + b, 0), 1000);
  for (const b of buckets) assert.ok(b >= 60 && b <= 140, `bucket sizes ${buckets.join(',')}`);
});

test('monitor: retry with delay_before_retry, then the attempt counts as failed', async () => {
  const r = rig();
  r.mon.upsert(target('rs1', {}, { retry: 2, delayBeforeRetryMs: 150, fall: 1 }));
  r.behave.set('rs1', { verdict: refused });
  await r.clock.advance(1_000);
  const [a, b, c] = r.starts.map((s) => s.at);
  assert.equal((b ?? 0) - (a ?? 0), 150);
  assert.equal((c ?? 0) - (b ?? 0), 150);
  assert.equal(r.transitions.length, 1, 'down after the third try of the first attempt');
  assert.equal((r.transitions[0]?.at ?? 0) - EPOCH, c);
});

test('monitor: logAllFailures (keepalived log_all_failures) logs every failed try while the checker is up, none once down', async () => {
  for (const on of [true, false]) {
    const lines: { msg: string; retry?: number }[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().trim().split('\n')) lines.push(JSON.parse(l) as { msg: string; retry?: number });
        cb();
      },
    });
    const r = rig(1000, createLogger({ destination: stream, level: 'info' }));
    r.mon.upsert(target('rs1', {}, { retry: 1, delayBeforeRetryMs: 100, fall: 2, logAllFailures: on }));
    r.behave.set('rs1', { verdict: refused });
    await r.clock.advance(6_000);
    assert.equal(r.transitions.length, 1, 'down after two failed attempts of two tries each');
    const failed = lines.filter((l) => l.msg === 'check failed: ECONNREFUSED');
    // Two attempts × (try + retry) while up; nothing after the change to down, as keepalived (checker->is_up).
    assert.deepEqual(failed.map((l) => l.retry), on ? [0, 1, 0, 1] : []);
  }
});

test('monitor: rise/fall suppress flapping of a server failing every other check', async () => {
  const r = rig();
  r.mon.upsert(target('flappy', {}, { rise: 2, fall: 2 }));
  let n = 0;
  for (let i = 0; i < 20; i++) {
    r.behave.set('flappy', { verdict: n++ % 2 === 0 ? refused : OK_VERDICT });
    await r.clock.advance(1_000);
  }
  assert.ok(r.starts.length >= 19);
  assert.equal(r.transitions.length, 0);
});

test('monitor: quorum with hysteresis switches the sorry server and runs quorum hooks', async () => {
  const r = rig();
  r.mon.upsertService({ name: 'web', quorum: 3, hysteresis: 1, notify: { quorumUp: 'qup', quorumDown: 'qdown' } });
  r.mon.reconcile([{ name: 'web', quorum: 3, hysteresis: 1, notify: { quorumUp: 'qup', quorumDown: 'qdown' } }],
    [1, 2, 3, 4].map((i) => target(`rs${i}`, {}, { fall: 1, rise: 1 })));
  await r.clock.advance(2_000);
  assert.equal(r.quorums.length, 0, 'no quorum event while building the service');
  r.behave.set('rs1', { verdict: refused });
  r.behave.set('rs2', { verdict: refused });
  await r.clock.advance(2_000);
  assert.equal(r.quorums.length, 0, 'live weight 2 is within the hysteresis band');
  r.behave.set('rs3', { verdict: refused });
  await r.clock.advance(2_000);
  assert.equal(r.quorums.length, 1);
  assert.deepEqual([r.quorums[0]?.up, r.quorums[0]?.sorryServer, r.quorums[0]?.aliveWeight], [false, true, 1]);
  assert.equal(r.mon.snapshot().services[0]?.sorryServer, true);
  r.behave.delete('rs1');
  r.behave.delete('rs2');
  await r.clock.advance(2_000);
  assert.equal(r.quorums.length, 1, 'weight 3 is not enough to come back with hysteresis 1');
  r.behave.delete('rs3');
  await r.clock.advance(2_000);
  assert.deepEqual(r.quorums.map((q) => q.up), [false, true]);
  assert.deepEqual(r.hooks.filter((h) => h.command.startsWith('q')).map((h) => h.command), ['qdown', 'qup']);
});

test('monitor: reload — identical upsert keeps history, weight change keeps it, check change reconfigures', async () => {
  const r = rig();
  const t = target('rs1');
  assert.equal(r.mon.upsert(t), 'added');
  await r.clock.advance(5_000);
  const before = r.mon.snapshot().targets[0];
  assert.equal(r.mon.upsert({ ...t, check: { ...t.check } }), 'unchanged');
  assert.equal(r.mon.snapshot().targets[0]?.checks, before?.checks);
  assert.equal(r.mon.upsert({ ...t, weight: 5 }), 'updated');
  assert.deepEqual(r.weights.map((w) => [w.weight, w.previous]), [[5, 1]]);
  assert.equal(r.mon.snapshot().targets[0]?.since, before?.since, 'same state since the start');
  assert.equal(r.mon.upsert({ ...t, weight: 5, check: check({ intervalMs: 500 }) }), 'reconfigured');
  assert.equal(r.mon.state('rs1'), 'up');
  assert.equal(r.mon.snapshot().targets[0]?.since, before?.since);
  assert.deepEqual(r.mon.reconcile([], []), { added: 0, unchanged: 0, updated: 0, reconfigured: 0, removed: 1, errors: [] });
  assert.equal(r.mon.snapshot().targets.length, 0);
});

test('monitor: dynamic weight from the check moves the live weight and the quorum', async () => {
  const r = rig();
  r.mon.upsertService({ name: 'web', quorum: 5 });
  r.mon.upsert(target('rs1', { weight: 10 }, { fall: 1 }));
  await r.clock.advance(2_000);
  r.behave.set('rs1', { verdict: { ...OK_VERDICT, weight: 3 } });
  await r.clock.advance(1_000);
  assert.deepEqual(r.weights.map((w) => [w.weight, w.previous]), [[3, 10]]);
  assert.equal(r.quorums[0]?.up, false);
  assert.equal(r.mon.snapshot().targets[0]?.liveWeight, 3);
});

test('monitor: an agent percentage scales the configured weight; drain is weight 0 and still up; events carry the reason', async () => {
  const r = rig();
  r.mon.upsertService({ name: 'web', quorum: 1 });
  r.mon.upsert(target('rs1', { weight: 200 }, { fall: 1, rise: 1 }));
  r.behave.set('rs1', { verdict: { ...OK_VERDICT, detail: 'agent: 50%', weightPercent: 50 } });
  await r.clock.advance(2_000);
  r.behave.set('rs1', { verdict: { ...OK_VERDICT, detail: 'agent: drain', weightPercent: 0 } });
  await r.clock.advance(1_000);
  assert.deepEqual(r.weights.map((w) => [w.previous, w.weight, w.detail]), [[200, 100, 'agent: 50%'], [100, 0, 'agent: drain']]);
  assert.equal(r.mon.state('rs1'), 'up', 'drain is not down');
  assert.equal(r.quorums.at(-1)?.up, false, 'a drained server adds nothing to the quorum');
  // A reload that doubles the configured weight keeps the agent's percentage.
  r.behave.set('rs1', { verdict: { ...OK_VERDICT, detail: 'agent: 50%', weightPercent: 50 } });
  await r.clock.advance(1_000);
  r.mon.upsert(target('rs1', { weight: 400 }, { fall: 1, rise: 1 }));
  assert.deepEqual(r.weights.slice(-2).map((w) => [w.previous, w.weight, w.detail]), [[0, 100, 'agent: 50%'], [100, 200, 'configuration changed']]);
  // Down by the agent (maint): the transition says why; back up with the percentage it had.
  r.behave.set('rs1', { verdict: fail('agent', 'agent: maint (upgrade)') });
  await r.clock.advance(1_000);
  assert.deepEqual(r.transitions.map((t) => [t.to, t.reason, t.detail, t.weight]), [['down', 'agent', 'agent: maint (upgrade)', 0]]);
  r.behave.set('rs1', { verdict: { ...OK_VERDICT, detail: 'agent: 25%', weightPercent: 25 } });
  await r.clock.advance(1_000);
  assert.deepEqual(r.transitions.at(-1) && [r.transitions.at(-1)?.to, r.transitions.at(-1)?.weight], ['up', 100]);
  assert.equal(r.mon.snapshot().targets[0]?.liveWeight, 100);
});

test('monitor: alpha starts down and needs rise passes; omega runs down hooks on removal and shutdown', async () => {
  const r = rig();
  r.mon.upsert(target('a', { omega: true, notify: { down: 'down-a' } }, { alpha: true, rise: 2 }));
  r.mon.upsert(target('b', { omega: true, notify: { down: 'down-b' } }, { alpha: true, rise: 2 }));
  assert.equal(r.mon.state('a'), 'down');
  await r.clock.advance(2_500);
  assert.equal(r.mon.state('a'), 'up');
  assert.equal(r.transitions.length, 2);
  r.mon.remove('a');
  assert.deepEqual([r.transitions[2]?.id, r.transitions[2]?.reason], ['a', 'removed']);
  r.mon.close();
  assert.deepEqual([r.transitions[3]?.id, r.transitions[3]?.reason], ['b', 'shutdown']);
  assert.deepEqual(r.hooks.map((h) => h.command), ['down-a', 'down-b']);
  const starts = r.starts.length;
  await r.clock.advance(5_000);
  assert.equal(r.starts.length, starts, 'no checks after close');
});

test('monitor: bad check options throw and leave the monitor as it was', () => {
  const mon = new HealthMonitor({ clock: new VirtualClock() });
  assert.throws(() => mon.upsert(target('bad', {}, { type: 'http', http: { bodyRegex: '[' } })), /bad: healthCheck\.http\.bodyRegex/);
  assert.equal(mon.snapshot().targets.length, 0);
  mon.upsert(target('rs1'));
  const res = mon.reconcile([], [target('rs1', {}, { type: 'http', http: { status: ['2xx'] } }), target('rs2')]);
  assert.deepEqual([res.added, res.errors.map((e) => e.id)], [1, ['rs1']]);
  assert.match(res.errors[0]?.message ?? '', /^rs1: healthCheck\.http\.status: bad status "2xx"/);
  assert.deepEqual(mon.snapshot().targets.map((t) => [t.id, t.type]), [['rs1', 'tcp'], ['rs2', 'tcp']], 'rs1 kept its previous check');
  mon.close();
});

test('monitor: a scheduler that fell behind re-phases instead of firing missed checks back to back', async () => {
  const r = rig();
  r.mon.upsert(target('rs1'));
  r.behave.set('rs1', { verdict: OK_VERDICT, delayMs: 10 });
  await r.clock.advance(3_000);
  r.clock.stall(2_500); // the event loop was blocked: every timer fires late
  await r.clock.advance(5_000);
  const at = r.starts.map((s) => s.at);
  assert.ok(at.length >= 6, `${at.length} checks`);
  for (let j = 1; j < at.length; j++) assert.ok((at[j] ?? 0) - (at[j - 1] ?? 0) >= 1000, `checks at ${at.join(',')}`);
  assert.equal(r.mon.stats().lateStarts, 1);
});

test('monitor: moving a real server to another service re-evaluates both quorums', async () => {
  const r = rig();
  r.mon.reconcile([{ name: 'a', quorum: 2 }, { name: 'b', quorum: 1 }], [target('x', { service: 'a' }), target('y', { service: 'a' })]);
  await r.clock.advance(2_000);
  r.mon.upsert(target('y', { service: 'b' }));
  assert.deepEqual(r.quorums.map((q) => [q.service, q.up]), [['a', false], ['b', true]], 'b had no server, so no quorum, until y arrived');
  const svcs = r.mon.snapshot().services;
  assert.deepEqual(svcs.map((s) => [s.name, s.targets, s.aliveWeight, s.sorryServer]), [['a', 1, 1, true], ['b', 1, 1, false]]);
});

test('monitor: switching a down server\'s check to "none" brings it up and stops checking it', async () => {
  const r = rig();
  r.mon.upsert(target('rs1', {}, { fall: 1 }));
  r.behave.set('rs1', { verdict: refused });
  await r.clock.advance(2_000);
  assert.equal(r.mon.state('rs1'), 'down');
  assert.equal(r.mon.upsert(target('rs1', {}, { fall: 1, type: 'none' })), 'reconfigured');
  assert.equal(r.mon.state('rs1'), 'up');
  assert.equal(r.transitions.at(-1)?.detail, 'health check disabled (type none)');
  const n = r.starts.length;
  await r.clock.advance(5_000);
  assert.equal(r.starts.length, n);
});

test('monitor: the limit of checks in flight adapts — slow answers cut it, fast answers raise it again', async () => {
  const r = rig(200);
  for (let i = 0; i < 400; i++) r.mon.upsert(target(`rs${i}`, {}, { timeoutMs: 500 }));
  for (let i = 0; i < 400; i++) r.behave.set(`rs${i}`, { verdict: OK_VERDICT, delayMs: 10 });
  await r.clock.advance(3_000);
  assert.equal(r.mon.stats().concurrencyLimit, 200);
  // Now every answer takes 80 % of its timeout, 40× its usual: the time goes into queues, the servers are alive.
  for (let i = 0; i < 400; i++) r.behave.set(`rs${i}`, { verdict: OK_VERDICT, delayMs: 400 });
  await r.clock.advance(8_000);
  const cut = r.mon.stats();
  assert.equal(cut.concurrencyLimit, 16);
  assert.equal(r.mon.snapshot().concurrencyLimit, 16);
  assert.ok(cut.concurrencyCuts >= 7, `cuts ${cut.concurrencyCuts}`);
  await r.clock.advance(1_000);
  r.maxInFlight.total = 0;
  await r.clock.advance(3_000);
  assert.ok(r.maxInFlight.total <= 16, `in flight ${r.maxInFlight.total} with a limit of 16`);
  for (let i = 0; i < 400; i++) r.behave.set(`rs${i}`, { verdict: OK_VERDICT, delayMs: 10 });
  await r.clock.advance(10_000);
  const back = r.mon.stats();
  assert.ok(back.concurrencyLimit > 16 && back.concurrencyRaises > 0, `limit ${back.concurrencyLimit}, raises ${back.concurrencyRaises}`);
  assert.equal(r.transitions.filter((e) => e.to === 'down').length, 0, 'slow but alive servers are never marked down');
});

test('monitor: hung targets do not throttle the others (their repeated timeouts are not congestion)', async () => {
  const r = rig(100);
  for (let i = 0; i < 100; i++) r.mon.upsert(target(`rs${i}`, {}, { timeoutMs: 500 }));
  for (let i = 0; i < 50; i++) r.behave.set(`rs${i}`, 'hang');
  await r.clock.advance(30_000);
  const s = r.mon.stats();
  assert.equal(s.concurrencyLimit, 100);
  assert.equal(s.concurrencyCuts, 0);
  assert.ok(s.timeouts >= 500, `timeouts ${s.timeouts}`);
  const down = new Set(r.transitions.filter((e) => e.to === 'down').map((e) => e.id));
  assert.equal(down.size, 50);
  for (let i = 50; i < 100; i++) assert.equal(r.mon.state(`rs${i}`), 'up');
});

// ——— several checkers on one real server (keepalived: every checker must be up) ———

test('monitor: with several checkers a server is down while any one is down, each with its own fall and rise', async () => {
  const r = rig();
  // tcp: fall 3, rise 2 (the rig's defaults); the http checker on :8080 goes down on its first failure.
  r.mon.upsert(target('rs1', { moreChecks: [check({ type: 'http', connectPort: 8080, http: { path: '/ready' }, fall: 1, rise: 1 })] }));
  await r.clock.advance(5_000);
  assert.equal(r.mon.state('rs1'), 'up');
  const checksBefore = r.starts.length;
  r.behave.set('rs1@8080', { verdict: fail('status', 'status 503') });
  await r.clock.advance(1_000);
  assert.equal(r.mon.state('rs1'), 'down', 'one failed http check (fall 1) takes the server down though tcp still passes');
  assert.equal(r.transitions.length, 1);
  const down = r.transitions[0] as TransitionEvent;
  assert.deepEqual([down.id, down.to, down.reason, down.detail], ['rs1', 'down', 'status', 'http GET /ready :8080: status 503']);
  // The tcp checker fails too, then the http one recovers: still down until tcp has risen (rise 2).
  r.behave.set('rs1', { verdict: refused });
  await r.clock.advance(4_000);
  r.behave.delete('rs1@8080');
  await r.clock.advance(2_000);
  assert.equal(r.mon.state('rs1'), 'down', 'http is up again, tcp is still down');
  assert.equal(r.transitions.length, 1, 'no flap while one checker stays down');
  r.behave.delete('rs1');
  await r.clock.advance(1_000);
  assert.equal(r.mon.state('rs1'), 'down', 'tcp has passed once of rise 2');
  await r.clock.advance(1_000);
  assert.equal(r.mon.state('rs1'), 'up');
  assert.deepEqual(r.transitions.map((e) => [e.to, e.reason]), [['down', 'status'], ['up', 'ok']]);
  assert.match(r.transitions[1]?.detail ?? '', /^tcp: /);
  assert.ok(r.starts.length - checksBefore >= 16, 'both checkers kept running once a second');
});

test('monitor: the snapshot of a server with several checkers shows each one and the failing one first', async () => {
  const r = rig();
  r.mon.upsert(target('rs1', { moreChecks: [check({ type: 'http', connectPort: 8080, fall: 1 })] }));
  r.mon.upsert(target('rs2'));
  await r.clock.advance(3_000);
  r.behave.set('rs1@8080', { verdict: fail('status', 'status 500') });
  await r.clock.advance(2_000);
  const snap = r.mon.snapshot().targets;
  const one = snap.find((t) => t.id === 'rs1');
  assert.ok(one?.checkers !== undefined);
  assert.equal(one.state, 'down');
  assert.deepEqual(one.checkers.map((c) => [c.label, c.type, c.state]), [['tcp', 'tcp', 'up'], ['http GET / :8080', 'http', 'down']]);
  assert.equal(one.last?.detail, 'http GET / :8080: status 500');
  assert.equal(one.checks, one.checkers.reduce((n, c) => n + c.checks, 0));
  const two = snap.find((t) => t.id === 'rs2');
  assert.equal(two?.checkers, undefined, 'one checker: the snapshot keeps its one-check shape');
  assert.equal(two?.last?.detail, 'ok');
});

test('monitor: a reload that adds or drops a checker keeps the other checkers\' history', async () => {
  const r = rig();
  r.mon.upsert(target('rs1'));
  await r.clock.advance(3_000);
  const extra = check({ type: 'http', connectPort: 8080, fall: 1, alpha: false });
  assert.equal(r.mon.upsert(target('rs1', { moreChecks: [extra] })), 'reconfigured');
  r.behave.set('rs1@8080', { verdict: fail('status', 'status 404') });
  await r.clock.advance(2_000);
  assert.equal(r.mon.state('rs1'), 'down');
  const tcpChecks = r.mon.snapshot().targets[0]?.checkers?.[0]?.checks ?? 0;
  assert.ok(tcpChecks >= 4, `the tcp checker kept its count (${tcpChecks})`);
  // Dropping the failing checker brings the server back at once: nothing down is left.
  assert.equal(r.mon.upsert(target('rs1')), 'reconfigured');
  assert.equal(r.mon.state('rs1'), 'up');
  assert.deepEqual(r.transitions.map((e) => [e.to, e.reason, e.detail]), [['down', 'status', 'http GET / :8080: status 404'], ['up', 'initial', 'checkers changed']]);
  assert.equal(r.mon.snapshot().targets[0]?.checkers, undefined);
  assert.equal(r.mon.stats().targets, 1);
});

test('monitor: quorum counts a server with several checkers once, by its combined state', async () => {
  const r = rig();
  r.mon.upsertService({ name: 'web', quorum: 2 });
  r.mon.upsert(target('rs1', { moreChecks: [check({ connectPort: 81, fall: 1 }), check({ connectPort: 82, fall: 1 })] }));
  r.mon.upsert(target('rs2'));
  await r.clock.advance(3_000);
  assert.equal(r.mon.snapshot().services.find((s) => s.name === 'web')?.aliveWeight, 2);
  const before = r.quorums.length;
  r.behave.set('rs1@82', { verdict: refused });
  await r.clock.advance(2_000);
  assert.equal(r.mon.snapshot().services.find((s) => s.name === 'web')?.aliveWeight, 1);
  assert.deepEqual(r.quorums.slice(before).map((q) => [q.up, q.aliveWeight]), [[false, 1]]);
});

test('monitor: a bad option in a further checker names moreChecks[i] and leaves nothing half-added', () => {
  const mon = new HealthMonitor({ nativeProbes: false });
  try {
    assert.throws(
      () => mon.upsert({ id: 'web/10.0.1.1:80', service: 'web', address: '127.0.0.1', port: 80, weight: 1, check: check(), moreChecks: [check({ type: 'http', http: { bodyRegex: 'ok(' } })] }),
      /web\/10\.0\.1\.1:80: moreChecks\[0\]\.http\.bodyRegex: /,
    );
    assert.equal(mon.stats().targets, 0);
  } finally {
    mon.close();
  }
});

test('monitor: ha_suspend — a suspended service is not probed, its servers keep state and counts, resume goes on from there', async () => {
  const r = rig();
  r.mon.upsert(target('a'));
  r.mon.upsert(target('b'));
  r.mon.upsert(target('other', { service: 'api' }));
  await r.clock.advance(5_000);
  r.behave.set('b', { verdict: refused });
  await r.clock.advance(5_000);
  assert.deepEqual([r.mon.state('a'), r.mon.state('b')], ['up', 'down']);
  // b is down; one ok check puts its rise count at 1 of 2.
  r.behave.set('b', { verdict: OK_VERDICT });
  await r.clock.advance(1_000);
  assert.equal(r.mon.snapshot().targets.find((t) => t.id === 'b')?.okStreak, 1);
  const before = r.transitions.length;
  r.mon.suspend('web', true);
  assert.equal(r.mon.suspended('web'), true);
  r.behave.set('a', { verdict: refused });
  const from = r.starts.length;
  await r.clock.advance(20_000);
  const during = r.starts.slice(from).map((s) => s.id);
  assert.equal(during.includes('a') || during.includes('b'), false, `probed while suspended: ${during.join(',')}`);
  assert.ok(during.includes('other'), 'another service keeps being checked');
  // State kept as it was (keepalived: the checker skips its probe, the real server stays as it is).
  assert.deepEqual([r.mon.state('a'), r.mon.state('b')], ['up', 'down']);
  assert.equal(r.transitions.length, before);
  assert.equal(r.mon.snapshot().targets.find((t) => t.id === 'b')?.okStreak, 1);
  // A target added while suspended waits too.
  r.mon.upsert(target('c'));
  await r.clock.advance(5_000);
  assert.equal(r.starts.slice(from).some((s) => s.id === 'c'), false);
  r.mon.suspend('web', false);
  const resumedAt = r.clock.now();
  await r.clock.advance(1_000);
  const after = r.starts.filter((s) => s.at >= resumedAt).map((s) => s.id);
  for (const id of ['a', 'b', 'c']) assert.ok(after.includes(id), `${id} checked within one interval of resuming`);
  // b needed one more ok (rise 2): it is up after its first check since resuming; a counts its failures from there.
  assert.equal(r.mon.state('b'), 'up');
  assert.equal(r.mon.state('a'), 'up');
  await r.clock.advance(3_000);
  assert.equal(r.mon.state('a'), 'down');
  // Resuming a service that left the config does not bring it back as an empty one.
  r.mon.suspend('gone', false);
  assert.equal(r.mon.snapshot().services.some((s) => s.name === 'gone'), false);
});

test('monitor: ha_suspend — a check in flight when suspended is disowned, its late verdict changes nothing', async () => {
  const r = rig();
  r.mon.upsert(target('slow', {}, { fall: 1, timeoutMs: 900 }));
  await r.clock.advance(3_000);
  r.behave.set('slow', { verdict: refused, delayMs: 400 });
  // Step to the moment the next check has started, then suspend.
  const n = r.starts.length;
  while (r.starts.length === n) await r.clock.advance(10);
  r.mon.suspend('web', true);
  await r.clock.advance(5_000);
  assert.equal(r.mon.state('slow'), 'up');
  assert.equal(r.mon.stats().running, 0);
  assert.equal(r.starts.length, n + 1);
});

test('monitor: a fwmark check without the native engine is refused when applied, never run unmarked', () => {
  const r = rig();
  assert.throws(() => r.mon.upsert(target('m', {}, { fwmark: 42 })), /m: healthCheck\.fwmark: fwmark needs the native probe engine/);
  assert.equal(r.mon.state('m'), undefined);
});
