// keepalived's GARP group queues (garp-queue.ts) on a virtual clock. The expected sequences are the
// ones keepalived 2.2.7 put on the wire here (docs/vrrp.md "GARP groups"; the netns test compares
// lvsd with keepalived on a real link).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGarpQueue, dropOwner, due, nextDue, offer, regroup, type Announcement, type GarpGroupOptions, type GarpQueue } from '../../daemon/vrrp/garp-queue.js';

interface Vip {
  owner: string;
  order: number;
  id: string;
  ifname?: string;
  family?: 4 | 6;
}

/** A virtual clock driving the queue: bursts at given times; returns [time, id] of every send. */
function simulate(groups: GarpGroupOptions[], bursts: { at: number; vips: Vip[]; repeat: number }[]): [number, string][] {
  const q = createGarpQueue<string>(groups);
  const sent: [number, string][] = [];
  const pendingBursts = [...bursts].sort((a, b) => a.at - b.at);
  for (;;) {
    const nextBurst = pendingBursts[0]?.at ?? Infinity;
    const d = nextDue(q) ?? Infinity;
    if (nextBurst === Infinity && d === Infinity) return sent;
    if (nextBurst <= d) {
      const b = pendingBursts.shift();
      if (b === undefined) return sent;
      // keepalived's vrrp_send_link_update: `repeat` rounds, each walking the instance's addresses.
      for (let r = 0; r < b.repeat; r++) {
        for (const v of b.vips) {
          const a: Announcement<string> = { owner: v.owner, order: v.order, ifname: v.ifname ?? 'eth0', family: v.family ?? 4, id: v.id, item: v.id };
          if (offer(q, a, b.at) === 'now') sent.push([b.at, v.id]);
        }
      }
    } else for (const a of due(q, d)) sent.push([d, a.item]);
  }
}

// The measured set-up: V1 (two VIPs .1 and .51), V2, V3, V4, in that order in the config.
const V1 = [{ owner: 'V1', order: 0, id: '1' }, { owner: 'V1', order: 1, id: '51' }];
const V = (n: number): Vip[] => [{ owner: `V${n}`, order: n * 65536, id: String(n) }];

test('a burst of 5 leaves one more GARP per address; the pending ones go out one per interval in configuration order (keepalived 2.2.7, measured)', () => {
  // The four become master within a few ms (keepalived: one after the other in one pass); second burst 3 s later.
  const groups = [{ intervalMs: 300, naIntervalMs: 0 }];
  const bursts = [0, 3000].flatMap((t) => [
    { at: t, vips: V1, repeat: 5 },
    { at: t + 10, vips: V(2), repeat: 5 },
    { at: t + 20, vips: V(3), repeat: 5 },
    { at: t + 30, vips: V(4), repeat: 5 },
  ]);
  assert.deepEqual(simulate(groups, bursts), [
    [0, '1'], [300, '1'], [600, '51'], [900, '2'], [1200, '3'], [1500, '4'],
    [3000, '1'], [3300, '1'], [3600, '51'], [3900, '2'], [4200, '3'], [4500, '4'],
  ]);
});

test('a burst that comes while addresses still wait marks them once: the walk starts again from the first instance (keepalived 2.2.7, seen with strace)', () => {
  // V1's second burst at 1100 lands before V4's turn: V1 goes first again, V4 waits for the end.
  const bursts = [
    { at: 0, vips: V1, repeat: 5 },
    { at: 5, vips: V(2), repeat: 5 },
    { at: 10, vips: V(3), repeat: 5 },
    { at: 15, vips: V(4), repeat: 5 },
    { at: 1100, vips: V1, repeat: 5 },
    { at: 1105, vips: V(2), repeat: 5 },
    { at: 1110, vips: V(3), repeat: 5 },
    { at: 1115, vips: V(4), repeat: 5 },
  ];
  assert.deepEqual(simulate([{ intervalMs: 250, naIntervalMs: 0 }], bursts), [
    [0, '1'], [250, '1'], [500, '51'], [750, '2'], [1000, '3'],
    [1250, '1'], [1500, '51'], [1750, '2'], [2000, '3'], [2250, '4'],
  ]);
});

test('when the queue has emptied, the next announcement goes at once', () => {
  const bursts = [{ at: 0, vips: V1, repeat: 1 }, { at: 500, vips: V(2), repeat: 1 }, { at: 700, vips: V(3), repeat: 1 }];
  // .51 waited till 300 and held the queue till 600: V2 at 500 waits, V3 at 700 finds it free again after V2.
  assert.deepEqual(simulate([{ intervalMs: 300, naIntervalMs: 0 }], bursts), [[0, '1'], [300, '51'], [600, '2'], [900, '3']]);
  assert.deepEqual(simulate([{ intervalMs: 300, naIntervalMs: 0 }], bursts.slice(0, 1).concat({ at: 650, vips: V(2), repeat: 1 })), [[0, '1'], [300, '51'], [650, '2']]);
});

test('ARPs and NAs have a queue each (garp_interval, gna_interval); a family with no gap is not paced', () => {
  const vips: Vip[] = [
    { owner: 'A', order: 0, id: 'a4', family: 4 },
    { owner: 'A', order: 1, id: 'b4', family: 4 },
    { owner: 'B', order: 65536, id: 'a6', family: 6 },
    { owner: 'B', order: 65537, id: 'b6', family: 6 },
  ];
  assert.deepEqual(simulate([{ intervalMs: 300, naIntervalMs: 250 }], [{ at: 0, vips, repeat: 1 }]), [[0, 'a4'], [0, 'a6'], [250, 'b6'], [300, 'b4']]);
  assert.deepEqual(simulate([{ intervalMs: 0, naIntervalMs: 250 }], [{ at: 0, vips, repeat: 2 }]), [[0, 'a4'], [0, 'b4'], [0, 'a6'], [0, 'a4'], [0, 'b4'], [250, 'a6'], [500, 'b6']]);
});

test('interfaces of one group share its queue; the group without interfaces gives every other interface a queue of its own; others are not paced', () => {
  const groups: GarpGroupOptions[] = [{ interfaces: ['eth1', 'eth2'], intervalMs: 100, naIntervalMs: 0 }, { intervalMs: 300, naIntervalMs: 0 }];
  const vips: Vip[] = [
    { owner: 'A', order: 0, id: 'eth1', ifname: 'eth1' },
    { owner: 'B', order: 65536, id: 'eth2', ifname: 'eth2' },
    { owner: 'C', order: 131072, id: 'eth3', ifname: 'eth3' },
    { owner: 'D', order: 196608, id: 'eth4', ifname: 'eth4' },
  ];
  assert.deepEqual(simulate(groups, [{ at: 0, vips, repeat: 2 }]), [[0, 'eth1'], [0, 'eth3'], [0, 'eth4'], [100, 'eth1'], [200, 'eth2'], [300, 'eth3'], [300, 'eth4']]);
  // Only the listed group: eth3 and eth4 are not paced at all.
  assert.deepEqual(simulate(groups.slice(0, 1), [{ at: 0, vips, repeat: 2 }]), [[0, 'eth1'], [0, 'eth3'], [0, 'eth4'], [0, 'eth3'], [0, 'eth4'], [100, 'eth1'], [200, 'eth2']]);
});

test('no group: every announcement goes at once', () => {
  const q: GarpQueue<string> = createGarpQueue([]);
  for (let i = 0; i < 5; i++) assert.equal(offer(q, { owner: 'A', order: 0, ifname: 'eth0', family: 4, id: 'x', item: 'x' }, 0), 'now');
  assert.equal(nextDue(q), null);
});

test('an instance that leaves MASTER forgets what it had pending; a reload keeps the rest', () => {
  const q = createGarpQueue<string>([{ intervalMs: 100, naIntervalMs: 0 }]);
  const a = (owner: string, order: number): Announcement<string> => ({ owner, order, ifname: 'eth0', family: 4, id: owner, item: owner });
  assert.equal(offer(q, a('A', 0), 0), 'now');
  assert.equal(offer(q, a('A', 0), 0), 'queued');
  assert.equal(offer(q, a('B', 1), 0), 'queued');
  assert.equal(offer(q, a('C', 2), 0), 'queued');
  dropOwner(q, 'A');
  assert.equal(nextDue(q), 100);
  const q2 = regroup(q, [{ intervalMs: 50, naIntervalMs: 0 }]);
  assert.deepEqual(due(q2, 100).map((x) => x.item), ['B']);
  assert.equal(nextDue(q2), 150);
  assert.deepEqual(due(q2, 120), []);
  assert.deepEqual(due(q2, 150).map((x) => x.item), ['C']);
  assert.equal(nextDue(q2), null);
});
