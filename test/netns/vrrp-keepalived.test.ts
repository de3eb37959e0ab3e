// lvsd's VRRP engine against Debian's keepalived on one segment, both directions: who becomes master,
// where the VIP is, graceful stop (priority 0) and crash (SIGKILL) of either side, preemption,
// priority changes, v2/v3, multicast/unicast, PASS auth, IPv6, GARPs on the wire.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { removeStaleNamespaces } from '../support/netns.js';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { createLab, garpSenders, lvsdOptions, macOf, naSenders, sleep, VIP4, VIP6, waitFor, type Lab } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions } from '../../daemon/vrrp/options.js';

let lab: Lab;
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  requireRoot();
  requireCommands('ip', 'keepalived', 'tcpdump');
  removeStaleNamespaces();
  lab = await createLab('vrrpka', 2);
});
after(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
  lab.destroy();
});

async function kad(host: number, i: Partial<KeepalivedInstance> & { priority: number }): Promise<Keepalived> {
  const inst: KeepalivedInstance = { name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, vips: [`${VIP4}/24`], ...i };
  const k = await startKeepalived(lab.hosts[host - 1] ?? assert.fail('no host'), keepalivedConf([inst]));
  cleanups.push(() => k.kill());
  return k;
}

async function lvsd(host: number, o: Partial<VrrpInstanceOptions> & { priority: number }): Promise<LvsdNode> {
  const n = await startLvsdNode(lab.hosts[host - 1] ?? assert.fail('no host'), lvsdOptions(o));
  cleanups.push(() => n.kill());
  return n;
}

/** The VIP is on exactly this host and nowhere else. */
async function vipOnlyOn(host: string, vip = VIP4, timeoutMs = 5000): Promise<void> {
  await waitFor(`${vip} only on ${host}`, async () => {
    const h = await lab.holders(vip);
    return h.length === 1 && h[0] === host;
  }, timeoutMs);
}

async function cleanup(): Promise<void> {
  for (const c of cleanups.splice(0)) await c();
  // keepalived leaves its VIP behind when it is killed; start every scenario clean.
  for (const h of lab.hosts) await h.sh(`ip addr del ${VIP4}/24 dev eth0 2>/dev/null; ip addr del ${VIP6}/64 dev eth0 2>/dev/null; true`);
}

test('v3 multicast: lvsd master + keepalived backup; GARP on the wire; graceful stop → keepalived; lvsd back preempts; crash → keepalived', { timeout: 120_000 }, async () => {
  const cap = lab.topo.capture('d2', 'eth0', 'arp');
  await sleep(200);
  const l = await lvsd(1, { priority: 150 });
  await l.waitState('VI_1', 'MASTER', 5000);
  const k = await kad(2, { priority: 100 });
  await vipOnlyOn('d1');
  await sleep(500); // keepalived stays BACKUP while it hears us (it would take over after 0.36 s if it did not)
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
  const garps = garpSenders(await cap.stop(), VIP4);
  const mac1 = await macOf(lab.hosts[0] ?? assert.fail());
  assert.ok(garps.filter((m) => m === mac1).length >= 5, `lvsd's GARPs seen: ${garps.join(',')}`);

  // Graceful stop: priority 0 → keepalived takes over after Skew_Time (~0.04 s), not Master_Down_Interval.
  const t0 = Date.now();
  await l.stop();
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  await vipOnlyOn('d2');
  assert.ok(Date.now() - t0 < 2000, `graceful takeover took ${Date.now() - t0} ms`);
  assert.match(l.output(), /"to":"INIT"/);

  // lvsd comes back with the higher priority and preempts.
  const l2 = await lvsd(1, { priority: 150 });
  await l2.waitState('VI_1', 'MASTER', 5000);
  await k.waitForLog(/Entering BACKUP STATE[\s\S]*$/, 3000);
  await vipOnlyOn('d1');

  // Crash: keepalived takes over after Master_Down_Interval; lvsd's stale VIP is cleaned when it restarts as backup… of a higher priority, it preempts again.
  await l2.kill();
  await waitFor('keepalived master after lvsd crash', () => (k.log().match(/Entering MASTER STATE/g)?.length ?? 0) >= 2, 3000);
  const l3 = await lvsd(1, { priority: 150 });
  await l3.waitState('VI_1', 'MASTER', 5000);
  await vipOnlyOn('d1');
  await cleanup();
});

test('v3 multicast: keepalived master + lvsd backup; keepalived graceful stop → lvsd fast; restart preempts lvsd; crash → lvsd after Master_Down_Interval', { timeout: 120_000 }, async () => {
  const k = await kad(1, { priority: 150 });
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const l = await lvsd(2, { priority: 100 });
  await sleep(800);
  assert.equal(l.state('VI_1'), 'BACKUP');
  await vipOnlyOn('d1');
  let s = await l.snapshot();
  const i0 = s.instances[0];
  assert.ok(i0 !== undefined);
  assert.equal(i0.masterAddress, lab.ip4(1));
  assert.ok(i0.counters.advertsReceived >= 5, `received ${i0.counters.advertsReceived}`);

  const t0 = performance.timeOrigin + performance.now();
  await k.stop();
  const m = await l.waitState('VI_1', 'MASTER', 3000);
  // Skew_Time at priority 100, 0.1 s = 61 ms; allow generous slack on a loaded machine.
  assert.ok(m.mono - t0 < 1000, `lvsd took ${Math.round(m.mono - t0)} ms after keepalived's stop`);
  await vipOnlyOn('d2');

  const k2 = await kad(1, { priority: 150 });
  await l.waitState('VI_1', 'BACKUP', 5000, m.mono);
  await vipOnlyOn('d1');

  const before = performance.timeOrigin + performance.now();
  await k2.kill();
  const m2 = await l.waitState('VI_1', 'MASTER', 3000, before);
  // Master_Down_Interval = 360.9 ms from the last advert; at most one interval of that before the kill.
  assert.ok(m2.mono - before > 200 && m2.mono - before < 2000, `takeover after crash in ${Math.round(m2.mono - before)} ms`);
  await waitFor('lvsd holds the VIP', async () => (await lab.holders(VIP4)).includes('d2'));
  s = await l.snapshot();
  assert.equal(s.instances[0]?.state, 'MASTER');
  await cleanup();
});

test('v3 unicast both ways (with real unicast checksums), then a priority change hands the VIP over and back', { timeout: 120_000 }, async () => {
  const l = await lvsd(1, { priority: 150, unicastSrcIp: lab.ip4(1), unicastPeers: [lab.ip4(2)] });
  await l.waitState('VI_1', 'MASTER', 5000);
  const k = await kad(2, { priority: 100, unicastSrc: lab.ip4(2), unicastPeers: [lab.ip4(1)] });
  await vipOnlyOn('d1');
  await sleep(600);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
  // Operator lowers lvsd to 50: it advertises 50 at once, keepalived (100, preempt) takes over.
  l.command('offset VI_1 -100');
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  await l.waitState('VI_1', 'BACKUP', 3000);
  await vipOnlyOn('d2');
  l.command('offset VI_1 0');
  // keepalived's first BACKUP is its start ("(init)"); the second is lvsd taking the VIP back.
  await waitFor('keepalived back to BACKUP', () => (k.log().match(/Entering BACKUP STATE/g)?.length ?? 0) >= 2, 3000);
  await vipOnlyOn('d1');
  const s = await l.snapshot();
  assert.equal(s.instances[0]?.counters.drops['checksum'], undefined);
  await cleanup();
});

test('v2 multicast with PASS auth at 1 s: lvsd master holds keepalived in BACKUP; wrong password is dropped and named', { timeout: 120_000 }, async () => {
  const l = await lvsd(1, { priority: 150, version: 2, advertIntervalMs: 1000, authPass: 'secret12' });
  await l.waitState('VI_1', 'MASTER', 6000);
  const k = await kad(2, { priority: 100, version: 2, interval: 1, authPass: 'secret12' });
  await vipOnlyOn('d1');
  await sleep(4000); // longer than keepalived's Master_Down_Interval (3.6 s)
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
  await l.stop();
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  await vipOnlyOn('d2');
  // An lvsd with the wrong password: both sides drop the other's adverts.
  const bad = await lvsd(1, { priority: 150, version: 2, advertIntervalMs: 1000, authPass: 'wrong' });
  await bad.waitLine((x) => x.reason === 'auth-mismatch' && x.peer === lab.ip4(2), 5000);
  await cleanup();
});

test('v2 unicast without auth: keepalived master, lvsd backup, keepalived crash → lvsd', { timeout: 120_000 }, async () => {
  const k = await kad(1, { priority: 150, version: 2, interval: 1, unicastSrc: lab.ip4(1), unicastPeers: [lab.ip4(2)] });
  await k.waitForLog(/Entering MASTER STATE/, 6000);
  const l = await lvsd(2, { priority: 100, version: 2, advertIntervalMs: 1000, unicastSrcIp: lab.ip4(2), unicastPeers: [lab.ip4(1)] });
  await sleep(1500);
  assert.equal(l.state('VI_1'), 'BACKUP');
  const t0 = performance.timeOrigin + performance.now();
  await k.kill();
  const m = await l.waitState('VI_1', 'MASTER', 6000, t0);
  assert.ok(m.mono - t0 > 2000, `v2 crash takeover after ${Math.round(m.mono - t0)} ms (Master_Down_Interval 3.6 s from the last advert)`);
  await waitFor('lvsd holds the VIP', async () => (await lab.holders(VIP4)).includes('d2'));
  await cleanup();
});

test('IPv6 v3 multicast: keepalived and lvsd agree, the VIP moves, unsolicited NA on the wire', { timeout: 120_000 }, async () => {
  const cap = lab.topo.capture('d2', 'eth0', 'icmp6');
  await sleep(200);
  const l = await lvsd(1, { priority: 150, vips: [`${VIP6}/64`] });
  await l.waitState('VI_1', 'MASTER', 5000);
  const k = await kad(2, { priority: 100, vips: [`${VIP6}/64`] });
  await vipOnlyOn('d1', VIP6);
  await sleep(500);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
  await l.stop();
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  await vipOnlyOn('d2', VIP6);
  const nas = naSenders(await cap.stop(), VIP6);
  assert.ok(nas.includes(await macOf(lab.hosts[0] ?? assert.fail())), `NAs from: ${nas.join(',')}`);
  await cleanup();
});
