// VRRP at keepalived users' scale (issue #15 item 6; keepalived #390, #1333, #2191): 255 VRIDs on one
// link, then 500 instances over 250 links (veth pairs standing in for VLANs: this kernel has no 802.1Q), lvsd against Debian's keepalived 2.2.7 on the other
// side. lvsd masters every instance and keepalived backs them up; over a soak neither side makes a
// transition; lvsd crashes and keepalived takes over every instance; lvsd comes back and preempts every
// one; both directions checked by keepalived's own log and lvsd's transitions. The figures (CPU, RSS of
// both) are bench/vrrp-scale.ts's.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { removeStaleNamespaces } from '../support/netns.js';
import { enteredState, keepalivedConf, startKeepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { createLab, sleep, waitFor, type Lab } from '../support/vrrp-lab.js';
import { addScaleLinks, scaleInstances, type ScaleInstance } from '../support/vrrp-scale.js';

/** A start of hundreds of instances (after a crash: each removes its stale VIP) took over 15 s under CI's load. */
const READY_MS = 120_000;

let lab: Lab;
before(async () => {
  requireRoot();
  requireCommands('ip', 'keepalived');
  removeStaleNamespaces();
  lab = await createLab('vrrpscale', 2);
});
after(() => {
  lab.destroy();
});

async function scenario(instances: ScaleInstance[], soakMs: number): Promise<void> {
  const [d1, d2] = lab.hosts;
  assert.ok(d1 && d2);
  const names = instances.map((i) => i.name);
  const kaInstances: KeepalivedInstance[] = instances.map((i) => ({ name: i.name, interface: i.interface, vrid: i.vrid, priority: 100, version: 3, interval: 1, vips: [i.vip] }));
  const lvsdOpts = { instances: instances.map((i) => ({ name: i.name, interface: i.interface, vrid: i.vrid, version: 3 as const, priority: 150, advertIntervalMs: 1000, vips: [i.vip] })), garp: { masterDelayMs: 0 } };

  const l = await startLvsdNode(d1, lvsdOpts, READY_MS);
  try {
    await waitFor(`lvsd MASTER of all ${names.length}`, () => names.every((n) => l.state(n) === 'MASTER'), 30_000, 200);
    const k = await startKeepalived(d2, keepalivedConf(kaInstances, 'kadscale'));
    try {
      await k.waitForLog(new RegExp(`\\(${names.at(-1) ?? ''}\\) Entering BACKUP STATE`), 30_000);
      // The soak: adverts both ways, no transition on either side.
      const lvsdBefore = l.transitions.length;
      const logBefore = k.log().length;
      await sleep(soakMs);
      assert.equal(l.transitions.length, lvsdBefore, `lvsd transitions during the soak: ${JSON.stringify(l.transitions.slice(lvsdBefore, lvsdBefore + 5))}`);
      assert.deepEqual([...enteredState(k.log(), 'MASTER', logBefore)], [], 'keepalived took an instance during the soak');

      // lvsd crashes: keepalived takes every instance (Master_Down_Interval ≈ 3.6 s; generous bound for a loaded host).
      const logAtCrash = k.log().length;
      await l.kill();
      await waitFor(`keepalived MASTER of all ${names.length}`, () => enteredState(k.log(), 'MASTER', logAtCrash).size === names.length, 60_000, 250);

      // lvsd comes back with the higher priority and preempts every instance; keepalived steps down in each.
      const logAtReturn = k.log().length;
      const back = await startLvsdNode(d1, lvsdOpts, READY_MS);
      try {
        await waitFor(`lvsd back as MASTER of all ${names.length}`, () => names.every((n) => back.state(n) === 'MASTER'), 60_000, 250);
        await waitFor(`keepalived BACKUP in all ${names.length}`, () => enteredState(k.log(), 'BACKUP', logAtReturn).size === names.length, 30_000, 250);
        // Each VIP is on d1 only (sampled: the first, the middle and the last instance).
        for (const i of [instances[0], instances[Math.floor(instances.length / 2)], instances.at(-1)]) {
          assert.ok(i);
          await waitFor(`${i.vip} only on d1`, async () => {
            const h = await lab.holders(i.vip.split('/')[0] ?? '', i.interface);
            return h.length === 1 && h[0] === 'd1';
          }, 10_000);
        }
      } finally {
        await back.kill();
      }
    } finally {
      await k.kill();
    }
  } finally {
    await l.kill().catch(() => undefined);
  }
}

test('255 VRIDs on one link: soak without a transition, all fail over to keepalived, all preempted back', { timeout: 300_000 }, async () => {
  await scenario(scaleInstances({ vlans: 0, perLink: 255 }), 15_000);
});

test('500 instances over 250 links (one L2 segment each, as VLANs): the same', { timeout: 400_000 }, async () => {
  const instances = scaleInstances({ vlans: 250, perLink: 2 });
  const [d1, d2] = lab.hosts;
  assert.ok(d1 && d2);
  await addScaleLinks(d1, d2, instances);
  await scenario(instances, 15_000);
});
