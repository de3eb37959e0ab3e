// keepalived's virtual_ipaddress_excluded and address-less VRRPv2 instances, lvsd against Debian's
// keepalived 2.2.7: the excluded addresses follow the state on both sides but stay out of the adverts,
// so neither side rejects the other's ("unexpected ip number count") and there is one master.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { garpSenders, labSuite, lvsdOptions, macOf, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions } from '../../daemon/vrrp/options.js';

const EX4 = '10.77.0.200';
const EX6 = 'fd77::200';

const suite = labSuite('vrrpex', 2, ['ip', 'keepalived', 'tcpdump']);
const { host, own, stopAll } = suite;

async function kad(i: number, o: Partial<KeepalivedInstance> & { priority: number }): Promise<Keepalived> {
  const inst: KeepalivedInstance = { name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, vips: [`${VIP4}/24`], ...o };
  return own(await startKeepalived(host(i), keepalivedConf([inst])));
}

async function lvsd(i: number, o: Partial<VrrpInstanceOptions> & { priority: number }): Promise<LvsdNode> {
  return own(await startLvsdNode(host(i), lvsdOptions(o)));
}

/** Every one of these addresses is on exactly host `name`. */
async function onlyOn(name: string, addrs: string[], timeoutMs = 5000): Promise<void> {
  await waitFor(`${addrs.join(', ')} only on ${name}`, async () => {
    for (const a of addrs) {
      const h = await suite.lab.holders(a);
      if (h.length !== 1 || h[0] !== name) return false;
    }
    return true;
  }, timeoutMs);
}
const nowhere = async (addrs: string[]): Promise<boolean> => {
  for (const a of addrs) if ((await suite.lab.holders(a)).length > 0) return false;
  return true;
};

async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh(`for a in ${VIP4}/24 ${EX4}/24 ${EX6}/64; do ip addr del $a dev eth0 2>/dev/null; done; true`);
}

const lvsdListWarnings = (n: LvsdNode): unknown[] => n.lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('address list differs'));

test('virtual_ipaddress_excluded on both sides: one master, no rejected adverts either way, the excluded addresses (both families) move with the VIP and are announced', { timeout: 120_000 }, async () => {
  const k = await kad(1, { priority: 150, excludedVips: [`${EX4}/24`, `${EX6}/64`] });
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const l = await lvsd(2, { priority: 100, excludedVips: [`${EX4}/24`, `${EX6}/64`] });
  await sleep(1500); // 4× lvsd's Master_Down_Interval: it would have taken over if it rejected keepalived's adverts
  assert.equal(l.state('VI_1'), 'BACKUP');
  await onlyOn('d1', [VIP4, EX4, EX6]);
  const s = await l.snapshot();
  assert.ok((s.instances[0]?.counters.advertsReceived ?? 0) >= 10);
  assert.deepEqual(s.instances[0]?.counters.drops, {});
  assert.deepEqual(lvsdListWarnings(l), []);

  const cap = suite.lab.topo.capture('d1', 'eth0', 'arp');
  await sleep(300);
  await k.stop();
  await l.waitState('VI_1', 'MASTER', 3000);
  await onlyOn('d2', [VIP4, EX4, EX6]);
  await sleep(200);
  const arps = await cap.stop();
  const mac2 = await macOf(host(2));
  assert.ok(garpSenders(arps, EX4).filter((m) => m === mac2).length >= 5, `GARPs for ${EX4}: ${garpSenders(arps, EX4).join(',')}`);

  // keepalived back with the higher priority: it hears lvsd's adverts (one VIP) as its own list, preempts.
  const k2 = await kad(1, { priority: 150, excludedVips: [`${EX4}/24`, `${EX6}/64`] });
  await l.waitState('VI_1', 'BACKUP', 5000);
  await onlyOn('d1', [VIP4, EX4, EX6]);
  await sleep(500);
  for (const log of [k.log(), k2.log()]) assert.doesNotMatch(log, /unexpected ip number count|not present in MASTER advert/);
  assert.deepEqual(lvsdListWarnings(l), []);
  await cleanup();
});

test('lvsd with excluded addresses against a keepalived without them: the adverts still match (excluded never advertised)', { timeout: 120_000 }, async () => {
  const l = await lvsd(1, { priority: 150, excludedVips: [`${EX4}/24`] });
  await l.waitState('VI_1', 'MASTER', 5000);
  const k = await kad(2, { priority: 100 });
  await sleep(1500);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE|unexpected ip number count/);
  await onlyOn('d1', [VIP4, EX4]);
  await l.stop();
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  await onlyOn('d2', [VIP4]);
  assert.ok(await nowhere([EX4]), 'lvsd released its excluded address on stop');
  await cleanup();
});

test('VRRPv2 instances without any VIP (keepalived 2.2.7 accepts them in v2): one master, no rejected adverts, failover by Master_Down_Interval', { timeout: 120_000 }, async () => {
  const l = await lvsd(1, { priority: 150, version: 2, advertIntervalMs: 1000, vips: [] });
  await l.waitState('VI_1', 'MASTER', 6000);
  const k = await kad(2, { priority: 100, version: 2, interval: 1, vips: [] });
  await k.waitForLog(/No VIP specified; at least one is sensible/, 3000);
  await sleep(4500); // past keepalived's Master_Down_Interval (3.6 s)
  assert.doesNotMatch(k.log(), /Entering MASTER STATE|unexpected ip number count/);
  await l.kill();
  await k.waitForLog(/Entering MASTER STATE/, 6000);
  const l2 = await lvsd(1, { priority: 150, version: 2, advertIntervalMs: 1000, vips: [] });
  await l2.waitState('VI_1', 'MASTER', 8000);
  await waitFor('keepalived steps down', () => (k.log().match(/Entering BACKUP STATE/g)?.length ?? 0) >= 2, 5000);
  assert.deepEqual((await l2.snapshot()).instances[0]?.counters.drops, {});
  await cleanup();
});
