// The state machine against RFC 5798 §6.4 (and keepalived's extras), one table row per rule, on a
// virtual clock: `now` is just a number we move.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  createMachine,
  masterDownIntervalMs,
  nextDeadline,
  skewTimeMs,
  step,
  type Action,
  type Machine,
  type MachineConfig,
  type MachineEvent,
} from '../../daemon/vrrp/machine.js';

const ME = Buffer.from([10, 0, 0, 2]);
const LOW = Buffer.from([10, 0, 0, 1]);
const HIGH = Buffer.from([10, 0, 0, 3]);

function cfg(over: Partial<MachineConfig> = {}): MachineConfig {
  return { version: 3, intervalCs: 100, preempt: true, preemptDelayMs: 0, primaryAddress: ME, ...over };
}

/** Runs events in order, each at its time; returns the final machine and every action, stamped. */
function run(m: Machine, events: [number, MachineEvent][]): { m: Machine; log: [number, Action][] } {
  const log: [number, Action][] = [];
  for (const [t, ev] of events) {
    const r = step(m, ev, t);
    m = r.machine;
    for (const a of r.actions) log.push([t, a]);
  }
  return { m, log };
}

/** Drives the machine like the runtime does: fire timers until `until`, interleaving the given events. */
function simulate(m: Machine, events: [number, MachineEvent][], until: number): { m: Machine; log: [number, Action][] } {
  const log: [number, Action][] = [];
  const queue = [...events].sort((a, b) => a[0] - b[0]);
  for (;;) {
    const d = nextDeadline(m);
    const ev = queue[0];
    const tEv = ev?.[0] ?? Infinity;
    const t = Math.min(d ?? Infinity, tEv);
    if (t > until) break;
    const r = t === tEv && ev !== undefined ? step(m, (queue.shift() ?? ev)[1], t) : step(m, { type: 'timer' }, t);
    m = r.machine;
    for (const a of r.actions) log.push([t, a]);
  }
  return { m, log };
}

const transitions = (log: [number, Action][]): string[] =>
  log.flatMap(([t, a]) => (a.type === 'transition' ? [`${t}:${a.from}->${a.to}`] : []));
const lowerPriority = (log: [number, Action][]): [number, number][] =>
  log.flatMap(([t, a]) => (a.type === 'lowerPriorityAdvert' ? [[t, a.priority] as [number, number]] : []));
const adverts = (log: [number, Action][]): [number, number][] =>
  log.flatMap(([t, a]) => (a.type === 'sendAdvert' ? [[t, a.priority] as [number, number]] : []));

test('RFC 5798 §6.1: Skew_Time and Master_Down_Interval', () => {
  // priority 100 at 1 s: skew = 156/256 s = 609.375 ms; MDI = 3609.375 ms (keepalived measured 3.61 s).
  assert.equal(skewTimeMs(100, 100), 609.375);
  assert.equal(masterDownIntervalMs(100, 100), 3609.375);
  // 0.1 s: 360.9375 ms (keepalived measured 0.362–0.372 s); 20 ms: 72.1875 ms.
  assert.equal(masterDownIntervalMs(100, 10), 360.9375);
  assert.equal(masterDownIntervalMs(100, 2), 72.1875);
  assert.equal(skewTimeMs(255, 100), 10 / 2.56);
});

const rows: { rule: string; priority?: number; config?: Partial<MachineConfig>; events: [number, MachineEvent][]; until: number; expect: { state: string; transitions: string[]; adverts?: [number, number][]; lowerPriority?: [number, number][] } }[] = [
  {
    rule: '§6.4.1 Initialize, priority < 255 → Backup; no advert within Master_Down_Interval → Master',
    events: [[0, { type: 'startup' }]],
    until: 3700,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '3609.375:BACKUP->MASTER'], adverts: [[3609.375, 100]] },
  },
  {
    rule: '§6.4.1 Initialize, priority 255 (owner) → Master at once with an advert',
    priority: 255,
    events: [[0, { type: 'startup' }]],
    until: 2500,
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [1000, 255], [2000, 255]] },
  },
  {
    rule: '§6.4.2 (6)(ii) Backup: adverts at or above our priority keep resetting Master_Down_Timer',
    events: [[0, { type: 'startup' }], [3000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }], [6000, { type: 'advert', from: HIGH, priority: 100, intervalCs: 100 }]],
    until: 9000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->BACKUP'], adverts: [] },
  },
  {
    rule: '§6.4.2 (6)(ii) …and the master falling silent makes us Master one Master_Down_Interval after its last advert',
    events: [[0, { type: 'startup' }], [3000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }]],
    until: 7000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '6609.375:BACKUP->MASTER'] },
  },
  {
    rule: '§6.4.2 (5) Backup: priority 0 advert → Master after Skew_Time',
    events: [[0, { type: 'startup' }], [1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }], [1500, { type: 'advert', from: HIGH, priority: 0, intervalCs: 100 }]],
    until: 3000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '2109.375:BACKUP->MASTER'] },
  },
  {
    rule: '§6.4.2 (6)(iii) Backup with preempt: a lower-priority advert is discarded, we take over',
    events: [[0, { type: 'startup' }], [1000, { type: 'advert', from: LOW, priority: 50, intervalCs: 100 }], [2000, { type: 'advert', from: LOW, priority: 50, intervalCs: 100 }]],
    until: 3700,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '3609.375:BACKUP->MASTER'] },
  },
  {
    rule: '§6.4.2 (6)(ii) Preempt_Mode false (nopreempt): a lower-priority master keeps its role',
    config: { preempt: false },
    events: [[0, { type: 'startup' }], ...[1, 2, 3, 4, 5, 6].map((i): [number, MachineEvent] => [i * 1000, { type: 'advert', from: LOW, priority: 50, intervalCs: 100 }])],
    until: 7000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->BACKUP'] },
  },
  {
    rule: 'keepalived preempt_delay: the lower-priority master is tolerated for the delay, then preempted',
    config: { preemptDelayMs: 5000 },
    events: [[0, { type: 'startup' }], ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((i): [number, MachineEvent] => [i * 1000, { type: 'advert', from: LOW, priority: 50, intervalCs: 100 }])],
    until: 13000,
    // Tolerated until 6000 (first lower advert at 1000 + 5 s); the advert at 5000 resets the timer a last
    // time, so Master_Down_Timer fires at 5000 + 3609.375.
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '8609.375:BACKUP->MASTER'] },
  },
  {
    rule: '§6.4.2 (6)(ii)(a) v3 Backup learns the master\'s interval: 10 cs master → MDI 360.9 ms',
    events: [[0, { type: 'startup' }], [1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 10 }]],
    until: 2000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '1360.9375:BACKUP->MASTER'] },
  },
  {
    rule: 'v2 has no interval learning: MDI stays at our own interval',
    config: { version: 2 },
    events: [[0, { type: 'startup' }], [1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 200 }]],
    until: 5000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '4609.375:BACKUP->MASTER'] },
  },
  {
    rule: '§6.4.3 (6) Master: higher priority advert → Backup (VIPs removed)',
    priority: 255,
    events: [[0, { type: 'startup' }], [500, { type: 'setPriority', priority: 100 }], [1200, { type: 'advert', from: LOW, priority: 200, intervalCs: 100 }]],
    until: 1300,
    expect: { state: 'BACKUP', transitions: ['0:INIT->MASTER', '1200:MASTER->BACKUP'] },
  },
  {
    rule: '§6.4.3 (6)(ii) Master: equal priority from a higher address → Backup',
    priority: 255,
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [200, { type: 'advert', from: HIGH, priority: 100, intervalCs: 100 }]],
    until: 300,
    expect: { state: 'BACKUP', transitions: ['0:INIT->MASTER', '200:MASTER->BACKUP'] },
  },
  {
    rule: 'keepalived (not §6.4.3 (7) discard): Master hears equal priority from a lower address, or lower priority → answers at once with its advert, restarts Adver_Timer, refreshes ARP',
    priority: 255,
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [200, { type: 'advert', from: LOW, priority: 100, intervalCs: 100 }], [300, { type: 'advert', from: HIGH, priority: 99, intervalCs: 100 }]],
    until: 1400,
    // Measured on keepalived 2.2.7: answer 1.5 ms after the lower advert, next advert one interval after the answer.
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [100, 100], [200, 100], [300, 100], [1300, 100]], lowerPriority: [[200, 100], [300, 99]] },
  },
  {
    rule: 'keepalived lower_prio_no_advert: Master hears lower priority → no answer, cadence kept, ARP still refreshed',
    priority: 255,
    config: { lowerPrioNoAdvert: true },
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [300, { type: 'advert', from: HIGH, priority: 99, intervalCs: 100 }]],
    until: 1400,
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [100, 100], [1100, 100]], lowerPriority: [[300, 99]] },
  },
  {
    rule: 'Master: equal priority from our own address (a looped-back copy) → discarded, no answer',
    priority: 255,
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [200, { type: 'advert', from: ME, priority: 100, intervalCs: 100 }]],
    until: 1150,
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [100, 100], [1100, 100]], lowerPriority: [] },
  },
  {
    rule: 'keepalived higher_prio_send_advert: Master hears higher priority → sends its own advert once, then Backup',
    priority: 255,
    config: { higherPrioSendAdvert: true },
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [200, { type: 'advert', from: LOW, priority: 150, intervalCs: 100 }]],
    until: 1000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->MASTER', '200:MASTER->BACKUP'], adverts: [[0, 255], [100, 100], [200, 100]], lowerPriority: [] },
  },
  {
    rule: '§6.4.3 (6) without higher_prio_send_advert: Master hears higher priority → Backup, silent',
    priority: 255,
    events: [[0, { type: 'startup' }], [100, { type: 'setPriority', priority: 100 }], [200, { type: 'advert', from: LOW, priority: 150, intervalCs: 100 }]],
    until: 1000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->MASTER', '200:MASTER->BACKUP'], adverts: [[0, 255], [100, 100]] },
  },
  {
    rule: 'Backup hears a lower-priority master: no answer and no ARP refresh (only a master answers)',
    events: [[0, { type: 'startup' }], [1000, { type: 'advert', from: LOW, priority: 50, intervalCs: 100 }]],
    until: 2000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->BACKUP'], adverts: [], lowerPriority: [] },
  },
  {
    rule: '§6.4.3 (5) Master: priority 0 advert from another router → advert at once',
    priority: 255,
    events: [[0, { type: 'startup' }], [300, { type: 'advert', from: LOW, priority: 0, intervalCs: 100 }]],
    until: 1500,
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [300, 255], [1300, 255]] },
  },
  {
    rule: '§6.4.3 (4) Master shutdown: priority 0 advert, → Initialize, no more timers',
    priority: 255,
    events: [[0, { type: 'startup' }], [1500, { type: 'shutdown' }]],
    until: 5000,
    expect: { state: 'INIT', transitions: ['0:INIT->MASTER', '1500:MASTER->INIT'], adverts: [[0, 255], [1000, 255], [1500, 0]] },
  },
  {
    rule: 'tracking fault: Master → Fault with a priority 0 advert; cleared → Initialize rules again (owner → Master)',
    priority: 255,
    events: [[0, { type: 'startup' }], [500, { type: 'setFault', fault: true }], [800, { type: 'setFault', fault: false }], [900, { type: 'setPriority', priority: 100 }], [1000, { type: 'advert', from: HIGH, priority: 200, intervalCs: 100 }]],
    until: 1100,
    expect: { state: 'BACKUP', transitions: ['0:INIT->MASTER', '500:MASTER->FAULT', '800:FAULT->MASTER', '1000:MASTER->BACKUP'], adverts: [[0, 255], [500, 0], [800, 255], [900, 100]] },
  },
  {
    rule: 'tracking fault at startup: Initialize → Fault, no adverts until cleared',
    events: [[0, { type: 'setFault', fault: true }], [0, { type: 'startup' }], [2000, { type: 'setFault', fault: false }]],
    until: 5700,
    expect: { state: 'MASTER', transitions: ['0:INIT->FAULT', '2000:FAULT->BACKUP', '5609.375:BACKUP->MASTER'] },
  },
  {
    rule: 'tracking lowers a master\'s priority: it advertises the new priority at once',
    priority: 255,
    events: [[0, { type: 'startup' }], [250, { type: 'setPriority', priority: 80 }]],
    until: 1300,
    expect: { state: 'MASTER', transitions: ['0:INIT->MASTER'], adverts: [[0, 255], [250, 80], [1250, 80]] },
  },
  {
    rule: 'keepalived vrrp_startup_delay: a Backup that hears nobody becomes Master one Master_Down_Interval after the delay ends (keepalived measured: 6.72 s for 3 s + 3.61 s)',
    events: [[0, { type: 'startup', holdUntil: 3000 }]],
    until: 7000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '6609.375:BACKUP->MASTER'] },
  },
  {
    rule: 'a rebooting backup deaf for its first 5 s (a bond still coming up) grabs MASTER without a start-up delay…',
    events: [[0, { type: 'startup' }], ...[5, 6, 7, 8, 9, 10].map((i): [number, MachineEvent] => [i * 1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }])],
    until: 11_000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->BACKUP', '3609.375:BACKUP->MASTER', '5000:MASTER->BACKUP'] },
  },
  {
    rule: '…and with vrrp_startup_delay 6 s it does not: adverts heard during the delay hold its timer at delay end + Master_Down_Interval (keepalived measured alike)',
    events: [[0, { type: 'startup', holdUntil: 6000 }], ...[5, 6, 7, 8, 9, 10].map((i): [number, MachineEvent] => [i * 1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }])],
    until: 11_000,
    expect: { state: 'BACKUP', transitions: ['0:INIT->BACKUP'], adverts: [] },
  },
  {
    rule: 'vrrp_startup_delay holds an address owner in INIT; it becomes Master when the delay ends (keepalived measured: MASTER at 2.05 s with a 2 s delay)',
    priority: 255,
    events: [[0, { type: 'startup', holdUntil: 2000 }]],
    until: 3500,
    expect: { state: 'MASTER', transitions: ['2000:INIT->MASTER'], adverts: [[2000, 255], [3000, 255]] },
  },
  {
    rule: 'vrrp_startup_delay: a priority-0 advert during the delay gives Master at delay end + Skew_Time',
    events: [[0, { type: 'startup', holdUntil: 4000 }], [1000, { type: 'advert', from: HIGH, priority: 150, intervalCs: 100 }], [1500, { type: 'advert', from: HIGH, priority: 0, intervalCs: 100 }]],
    until: 5000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', '4609.375:BACKUP->MASTER'] },
  },
  {
    rule: 'vrrp_startup_delay: a higher-priority node preempts a lower master at delay end + Master_Down_Interval (keepalived drifts later, see docs/vrrp.md)',
    priority: 150,
    events: [[0, { type: 'startup', holdUntil: 4000 }], ...[1, 2, 3, 4, 5, 6, 7, 8].map((i): [number, MachineEvent] => [i * 1000, { type: 'advert', from: LOW, priority: 100, intervalCs: 100 }])],
    until: 9000,
    expect: { state: 'MASTER', transitions: ['0:INIT->BACKUP', `${4000 + masterDownIntervalMs(150, 100)}:BACKUP->MASTER`] },
  },
  {
    rule: 'sync group: a Backup member follows another member to Master, and back',
    events: [[0, { type: 'startup' }], [100, { type: 'sync', state: 'MASTER' }], [200, { type: 'sync', state: 'BACKUP' }], [300, { type: 'sync', state: 'FAULT' }]],
    until: 400,
    expect: { state: 'FAULT', transitions: ['0:INIT->BACKUP', '100:BACKUP->MASTER', '200:MASTER->BACKUP', '300:BACKUP->FAULT'] },
  },
];

for (const row of rows) {
  test(row.rule, () => {
    const { m, log } = simulate(createMachine(cfg(row.config), row.priority ?? 100), row.events, row.until);
    assert.equal(m.state, row.expect.state);
    assert.deepEqual(transitions(log), row.expect.transitions);
    if (row.expect.adverts !== undefined) assert.deepEqual(adverts(log), row.expect.adverts);
    if (row.expect.lowerPriority !== undefined) assert.deepEqual(lowerPriority(log), row.expect.lowerPriority);
  });
}

test('becoming Master: advert first, then VIPs, then GARP', () => {
  const { log } = run(createMachine(cfg(), 255), [[0, { type: 'startup' }]]);
  assert.deepEqual(log.map(([, a]) => a.type), ['sendAdvert', 'addVips', 'garp', 'transition']);
});

test('leaving Master removes the VIPs exactly once, on every path', () => {
  for (const ev of [{ type: 'shutdown' }, { type: 'setFault', fault: true }, { type: 'advert', from: HIGH, priority: 255, intervalCs: 100 }, { type: 'sync', state: 'BACKUP' }] as MachineEvent[]) {
    const { log } = run(createMachine(cfg(), 255), [[0, { type: 'startup' }], [10, ev]]);
    assert.equal(log.filter(([, a]) => a.type === 'removeVips').length, 1, ev.type);
  }
});

test('property: VIPs are added and removed alternately, and held exactly while MASTER', () => {
  const evArb: fc.Arbitrary<MachineEvent> = fc.oneof(
    fc.constant<MachineEvent>({ type: 'timer' }),
    fc.record({ type: fc.constant('advert' as const), from: fc.constantFrom(LOW, HIGH), priority: fc.integer({ min: 0, max: 255 }), intervalCs: fc.constantFrom(10, 100) }),
    fc.record({ type: fc.constant('setPriority' as const), priority: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ type: fc.constant('setFault' as const), fault: fc.boolean() }),
    fc.record({ type: fc.constant('sync' as const), state: fc.constantFrom('MASTER' as const, 'BACKUP' as const, 'FAULT' as const) }),
    fc.constant<MachineEvent>({ type: 'shutdown' }),
    fc.constant<MachineEvent>({ type: 'startup' }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 255 }), fc.boolean(), fc.array(fc.tuple(fc.integer({ min: 0, max: 5000 }), evArb), { maxLength: 60 }), (prio, preempt, evs) => {
      let m = createMachine(cfg({ preempt }), prio);
      let held = false;
      let t = 0;
      for (const [dt, ev] of [[0, { type: 'startup' } as MachineEvent] as const, ...evs]) {
        t += dt;
        const r = step(m, ev, t);
        for (const a of r.actions) {
          if (a.type === 'addVips') {
            assert.equal(held, false);
            held = true;
          }
          if (a.type === 'removeVips') {
            assert.equal(held, true);
            held = false;
          }
        }
        m = r.machine;
        assert.equal(held, m.state === 'MASTER', `${JSON.stringify(ev)} → ${m.state}`);
        assert.ok(m.priority >= 1 && m.priority <= 255);
        if (m.state === 'MASTER') assert.notEqual(m.adverTimer, null);
        if (m.state === 'BACKUP') assert.notEqual(m.masterDownTimer, null);
        if (m.state === 'INIT' || m.state === 'FAULT') assert.equal(nextDeadline(m), null);
      }
    }),
    { numRuns: 500 },
  );
});

test('two machines on a virtual wire elect the higher priority, and the tie by address', () => {
  // A little network: every advert one machine sends reaches the other after 1 ms. With equal
  // priorities a Backup accepts the first Master it hears (§6.4.2), so the address decides only when
  // both became Master at once (started together), and then the higher address wins (§6.4.3).
  for (const [pa, pb, bStart, winner] of [[150, 100, 3, 'a'], [100, 150, 3, 'b'], [100, 100, 0, 'b'], [100, 100, 3, 'a']] as const) {
    const nodes = { a: createMachine(cfg({ primaryAddress: LOW, intervalCs: 10 }), pa), b: createMachine(cfg({ primaryAddress: HIGH, intervalCs: 10 }), pb) };
    const pending: [number, 'a' | 'b', MachineEvent][] = [[0, 'a', { type: 'startup' }], [bStart, 'b', { type: 'startup' }]];
    for (let t = 0; t <= 3000; t += 1) {
      for (const k of ['a', 'b'] as const) {
        const due = pending.filter(([at, to]) => at <= t && to === k);
        for (const p of due) pending.splice(pending.indexOf(p), 1);
        const evs: MachineEvent[] = due.map(([, , e]) => e);
        const d = nextDeadline(nodes[k]);
        if (d !== null && d <= t) evs.push({ type: 'timer' });
        for (const ev of evs) {
          const r = step(nodes[k], ev, t);
          nodes[k] = r.machine;
          for (const a of r.actions) {
            if (a.type === 'sendAdvert') pending.push([t + 1, k === 'a' ? 'b' : 'a', { type: 'advert', from: k === 'a' ? LOW : HIGH, priority: a.priority, intervalCs: 10 }]);
          }
        }
      }
    }
    assert.equal(nodes[winner].state, 'MASTER', `${pa} vs ${pb}`);
    assert.equal(nodes[winner === 'a' ? 'b' : 'a'].state, 'BACKUP', `${pa} vs ${pb}`);
  }
});

test('answering a lower-priority master: the advert goes out before the ARP refresh', () => {
  const { log } = run(createMachine(cfg(), 200), [[0, { type: 'startup' }], [4000, { type: 'timer' }], [4500, { type: 'advert', from: HIGH, priority: 100, intervalCs: 100 }]]);
  assert.deepEqual(log.filter(([t]) => t === 4500).map(([, a]) => a.type), ['sendAdvert', 'lowerPriorityAdvert']);
});

test('split brain healed on a virtual wire: the better master answers the first advert it hears and the other steps down at once', () => {
  // a (150) and b (100) both become Master while the wire drops everything (a partition); when it
  // heals, whichever speaks first, one advert and its answer settle it: within 2 ms of the first
  // advert after the heal, not at the next Adver_Timer (keepalived measured: answer 1.5 ms after).
  const firstSpeakers = new Set<string>();
  for (const bOffset of [0, 300, 700]) {
    const nodes = { a: createMachine(cfg({ primaryAddress: LOW }), 150), b: createMachine(cfg({ primaryAddress: HIGH }), 100) };
    const HEAL = 10_000;
    const pending: [number, 'a' | 'b', MachineEvent][] = [[0, 'a', { type: 'startup' }], [bOffset, 'b', { type: 'startup' }]];
    const seen: { t: number; k: string; a: Action }[] = [];
    for (let t = 0; t <= 14_000; t += 1) {
      for (const k of ['a', 'b'] as const) {
        const due = pending.filter(([at, to]) => at <= t && to === k);
        for (const p of due) pending.splice(pending.indexOf(p), 1);
        const evs: MachineEvent[] = due.map(([, , e]) => e);
        const d = nextDeadline(nodes[k]);
        if (d !== null && d <= t) evs.push({ type: 'timer' });
        for (const ev of evs) {
          const r = step(nodes[k], ev, t);
          nodes[k] = r.machine;
          for (const a of r.actions) {
            seen.push({ t, k, a });
            if (a.type === 'sendAdvert' && t + 1 >= HEAL) pending.push([t + 1, k === 'a' ? 'b' : 'a', { type: 'advert', from: k === 'a' ? LOW : HIGH, priority: a.priority, intervalCs: 100 }]);
          }
        }
      }
      if (t === HEAL - 1) {
        assert.equal(nodes.a.state, 'MASTER');
        assert.equal(nodes.b.state, 'MASTER');
      }
    }
    assert.equal(nodes.a.state, 'MASTER', `b started at ${bOffset}`);
    assert.equal(nodes.b.state, 'BACKUP', `b started at ${bOffset}`);
    const firstAfter = seen.find((x) => x.t >= HEAL - 1 && x.a.type === 'sendAdvert');
    const down = seen.find((x) => x.k === 'b' && x.a.type === 'transition' && x.a.to === 'BACKUP');
    assert.ok(firstAfter !== undefined && down !== undefined);
    assert.ok(down.t - firstAfter.t <= 2, `b stepped down ${down.t - firstAfter.t} ms after the first advert past the heal`);
    // a answered b (and refreshed ARP) only when b spoke first.
    const answers = seen.filter((x) => x.k === 'a' && x.a.type === 'lowerPriorityAdvert');
    assert.equal(answers.length, firstAfter.k === 'b' ? 1 : 0, `b started at ${bOffset}`);
    firstSpeakers.add(firstAfter.k);
  }
  assert.deepEqual([...firstSpeakers].sort(), ['a', 'b'], 'both orders after the heal were exercised');
});
