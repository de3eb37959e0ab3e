// Split-brain recovery between lvsd and Debian's keepalived 2.2.7, whichever is the better master:
// a partition (nft drops VRRP in and out of one node) makes both MASTER; when it heals, the better
// master answers the other's advert at once with its own advert and a burst of gratuitous ARPs (and
// again after the lower-priority GARP delay), and the other steps down. The heal is done in two steps
// (the partitioned node's adverts get out first, then it hears again) so the better master is sure
// to hear lower-priority adverts it must answer. Captured in a third namespace on the segment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { garpSenders, labSuite, lvsdOptions, macOf, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions, VrrpOptions } from '../../daemon/vrrp/options.js';


const suite = labSuite('vrrpsb', 3, ['ip', 'keepalived', 'tcpdump', 'nft']);
const { host, own, stopAll } = suite;

async function kad(i: number, o: Partial<KeepalivedInstance> & { priority: number }, globals: string[] = []): Promise<Keepalived> {
  const inst: KeepalivedInstance = { name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 1, vips: [`${VIP4}/24`], ...o };
  return own(await startKeepalived(host(i), keepalivedConf([inst], 'kad', globals)));
}

async function lvsd(i: number, o: Partial<VrrpInstanceOptions> & { priority: number }, extra: Partial<VrrpOptions> = {}): Promise<LvsdNode> {
  return own(await startLvsdNode(host(i), lvsdOptions({ advertIntervalMs: 1000, ...o }, extra)));
}

/** Cuts host i off VRRP in both directions (a partition that leaves everything else alone). */
async function split(i: number): Promise<void> {
  await host(i).sh(
    "nft add table inet split && nft add chain inet split in '{ type filter hook input priority 0; }' && nft add chain inet split out '{ type filter hook output priority 0; }'" +
      ' && nft add rule inet split in ip protocol 112 drop && nft add rule inet split out ip protocol 112 drop',
  );
}
/** First its adverts get out again (the better master hears them, its answers are still dropped)… */
async function healOut(i: number): Promise<void> {
  await host(i).sh('nft delete chain inet split out');
}
/** …then it hears again. */
async function healIn(i: number): Promise<void> {
  await host(i).sh('nft delete table inet split');
}

interface Frame {
  mac: string;
  kind: 'advert' | 'garp';
  priority?: number;
}
/** Adverts (with priority) and GARPs for VIP4 in capture order. */
function frames(capture: string): Frame[] {
  const out: Frame[] = [];
  for (const line of capture.split('\n')) {
    const adv = /^\S+ ([0-9a-f:]{17}) > .*VRRPv3, Advertisement, vrid 51, prio (\d+)/.exec(line);
    if (adv) out.push({ mac: adv[1] ?? '', kind: 'advert', priority: Number(adv[2]) });
    else if (garpSenders(line, VIP4).length > 0) out.push({ mac: garpSenders(line, VIP4)[0] ?? '', kind: 'garp' });
  }
  return out;
}

async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh(`nft delete table inet split 2>/dev/null; ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
}

async function vipOnlyOn(name: string, timeoutMs = 5000): Promise<void> {
  await waitFor(`${VIP4} only on ${name}`, async () => {
    const h = await suite.lab.holders(VIP4);
    return h.length === 1 && h[0] === name;
  }, timeoutMs);
}

test('lvsd is the better master: it answers each of keepalived\'s lower-priority adverts at once (advert + 5 GARPs, 5 more after 1 s); keepalived steps down', { timeout: 120_000 }, async () => {
  // lvsd advertises every 3 s, keepalived every 1 s: an lvsd advert between two of keepalived's can only be an answer.
  const l = await lvsd(1, { priority: 150, advertIntervalMs: 3000, garp: { masterDelayMs: 0, lowerPrioDelayMs: 1000 } });
  await l.waitState('VI_1', 'MASTER', 15_000);
  const k = await kad(2, { priority: 100 });
  await vipOnlyOn('d1');
  await split(2);
  await k.waitForLog(/Entering MASTER STATE/, 10_000);
  await waitFor('both hold the VIP', async () => (await suite.lab.holders(VIP4)).length === 2);
  const mac1 = await macOf(host(1));
  const mac2 = await macOf(host(2));

  const cap = suite.lab.topo.capture('d3', 'eth0', 'arp or ip proto 112');
  await sleep(500);
  await healOut(2);
  await waitFor('lvsd answered three lower-priority adverts', async () => ((await l.snapshot()).instances[0]?.counters.lowerPriorityAdverts ?? 0) >= 3, 10_000);
  await healIn(2);
  await waitFor('keepalived back to BACKUP', () => /Master received advert from 10\.77\.0\.1 with higher priority 150, ours 100[\s\S]*Entering BACKUP STATE/.test(k.log()), 10_000);
  await vipOnlyOn('d1');
  await sleep(1500); // the last delayed GARP burst
  const f = frames(await cap.stop());
  const s = await l.snapshot();
  const heard = s.instances[0]?.counters.lowerPriorityAdverts ?? 0;

  const fromL = f.filter((x) => x.mac === mac1);
  const lAdverts = fromL.filter((x) => x.kind === 'advert');
  const kAdverts = f.filter((x) => x.mac === mac2 && x.kind === 'advert');
  assert.ok(kAdverts.length >= 3 && kAdverts.every((x) => x.priority === 100), `keepalived's adverts: ${JSON.stringify(kAdverts)}`);
  assert.ok(lAdverts.every((x) => x.priority === 150));
  // Every keepalived advert that lvsd heard is followed by lvsd's answer before keepalived's next one.
  for (let i = 0; i < f.length; i++) {
    const x = f[i];
    if (x?.mac !== mac2 || x.kind !== 'advert') continue;
    const next = f.slice(i + 1).find((y) => y.kind === 'advert');
    assert.equal(next?.mac, mac1, `keepalived advert #${i} not answered before the next advert: ${JSON.stringify(f.slice(i, i + 8))}`);
  }
  // Each answer comes with 5 GARPs and 5 more a second later; lvsd sends no other GARP here.
  assert.equal(fromL.filter((x) => x.kind === 'garp').length, heard * 10, `heard ${heard}; frames ${JSON.stringify(f)}`);
  assert.equal(f.filter((x) => x.mac === mac2 && x.kind === 'garp').length, 0, 'keepalived, the worse master, sent no GARP after the heal');
  assert.ok(l.lines.some((x) => typeof x.msg === 'string' && x.msg.startsWith('received advert with lower priority 100, ours 150, forcing new election')));
  assert.equal(l.state('VI_1'), 'MASTER');
  await cleanup();
});

test('keepalived is the better master: it answers lvsd\'s lower-priority adverts with an advert and GARPs; lvsd steps down at once when it hears', { timeout: 120_000 }, async () => {
  // keepalived's defaults for the lower-priority burst: vrrp_garp_master_repeat (5), vrrp_garp_master_delay (set to 1 s here).
  const k = await kad(1, { priority: 150, interval: 3 }, ['vrrp_garp_master_delay 1']);
  await k.waitForLog(/Entering MASTER STATE/, 15_000);
  const l = await lvsd(2, { priority: 100 });
  await sleep(1500);
  assert.equal(l.state('VI_1'), 'BACKUP');
  await split(2);
  await l.waitState('VI_1', 'MASTER', 15_000);
  await waitFor('both hold the VIP', async () => (await suite.lab.holders(VIP4)).length === 2);
  const mac1 = await macOf(host(1));
  const mac2 = await macOf(host(2));

  const cap = suite.lab.topo.capture('d3', 'eth0', 'arp or ip proto 112');
  await sleep(500);
  await healOut(2);
  await waitFor('keepalived answered three lower-priority adverts', () => (k.log().match(/Received advert from 10\.77\.0\.2 with lower priority 100, ours 150, forcing new election/g)?.length ?? 0) >= 3, 10_000);
  const since = performance.timeOrigin + performance.now();
  await healIn(2);
  const back = await l.waitState('VI_1', 'BACKUP', 10_000, since);
  assert.match(back.reason, /higher priority 150/);
  await vipOnlyOn('d1');
  await sleep(1500);
  const f = frames(await cap.stop());
  const answers = k.log().match(/with lower priority 100, ours 150/g)?.length ?? 0;
  for (let i = 0; i < f.length; i++) {
    const x = f[i];
    if (x?.mac !== mac2 || x.kind !== 'advert') continue;
    const next = f.slice(i + 1).find((y) => y.kind === 'advert');
    assert.equal(next?.mac, mac1, `lvsd advert #${i} not answered before the next advert: ${JSON.stringify(f.slice(i, i + 8))}`);
  }
  assert.equal(f.filter((x) => x.mac === mac1 && x.kind === 'garp').length, answers * 10, `answers ${answers}; frames ${JSON.stringify(f)}`);
  assert.equal(f.filter((x) => x.mac === mac2 && x.kind === 'garp').length, 0);
  assert.equal((await l.snapshot()).instances[0]?.counters.lowerPriorityAdverts, 0);
  await cleanup();
});

test('lvsd pair: the better master answers the other\'s adverts, and the other steps down as soon as it hears', { timeout: 120_000 }, async () => {
  const a = await lvsd(1, { priority: 150, garp: { masterDelayMs: 0, lowerPrioDelayMs: 0 } });
  await a.waitState('VI_1', 'MASTER', 15_000);
  const b = await lvsd(2, { priority: 100 });
  await sleep(1500);
  await split(2);
  await b.waitState('VI_1', 'MASTER', 15_000);
  const since = performance.timeOrigin + performance.now();
  await healOut(2);
  await waitFor('a answered', async () => ((await a.snapshot()).instances[0]?.counters.lowerPriorityAdverts ?? 0) >= 1, 10_000);
  await healIn(2);
  await b.waitState('VI_1', 'BACKUP', 10_000, since);
  await vipOnlyOn('d1');
  assert.equal(a.state('VI_1'), 'MASTER');
  await cleanup();
});
