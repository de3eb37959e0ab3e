// A rebooting lvsd backup whose link passes no VRRP yet (nft drops what comes in for its first 1.5 s,
// as a bond still coming up does) next to a keepalived 2.2.7 master: without a start-up delay it grabs
// MASTER (two masters until it hears again); with startupDelayMs (keepalived vrrp_startup_delay) it
// stays BACKUP and keepalived never sees a challenger. An owner with a delay waits for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';


const suite = labSuite('vrrpsd', 2, ['ip', 'keepalived', 'nft']);
const { host, own, stopAll } = suite;

async function kad(priority: number): Promise<Keepalived> {
  return own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority, version: 3, interval: 0.1, vips: [`${VIP4}/24`] }])));
}

async function lvsd(priority: number, extra: Partial<VrrpOptions>): Promise<LvsdNode> {
  return own(await startLvsdNode(host(2), lvsdOptions({ priority }, extra)));
}

async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh(`nft delete table inet deaf 2>/dev/null; ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
}

for (const [extra, grabs] of [[{}, true], [{ startupDelayMs: 3000 }, false]] as const) {
  test(`a backup deaf for its first 1.5 s next to a keepalived master ${grabs ? 'grabs MASTER without a start-up delay' : 'stays BACKUP with startupDelayMs 3000'}`, { timeout: 60_000 }, async () => {
    const k = await kad(150);
    await k.waitForLog(/Entering MASTER STATE/, 5000);
    await host(2).sh("nft add table inet deaf && nft add chain inet deaf in '{ type filter hook input priority 0; }' && nft add rule inet deaf in ip protocol 112 drop");
    const l = await lvsd(100, extra);
    await sleep(1500); // four times lvsd's Master_Down_Interval (0.36 s)
    await host(2).sh('nft delete table inet deaf');
    await waitFor('lvsd hears keepalived', async () => ((await l.snapshot()).instances[0]?.counters.advertsReceived ?? 0) >= 5, 5000);
    await sleep(500);
    assert.equal(l.transitions.some((t) => t.to === 'MASTER'), grabs, JSON.stringify(l.transitions));
    assert.equal(l.state('VI_1'), 'BACKUP');
    // keepalived hears the challenger only when it grabbed MASTER (it answers with an advert: the split-brain answer).
    assert.equal(/with lower priority 100/.test(k.log()), grabs);
    assert.equal(l.lines.some((x) => typeof x.msg === 'string' && x.msg.startsWith('Delaying startup for 3 seconds')), !grabs);
    await waitFor('VIP on d1 only', async () => {
      const h = await suite.lab.holders(VIP4);
      return h.length === 1 && h[0] === 'd1';
    }, 5000);
    await cleanup();
  });
}

test('an address owner with startupDelayMs waits in INIT, then becomes MASTER and preempts keepalived', { timeout: 60_000 }, async () => {
  const k = await kad(100);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const l = await lvsd(255, { startupDelayMs: 1500 });
  await sleep(1000);
  assert.deepEqual(l.transitions, [], 'no transition during the delay');
  await l.waitState('VI_1', 'MASTER', 5000);
  await k.waitForLog(/Entering BACKUP STATE[\s\S]*Entering BACKUP STATE/, 3000);
  await cleanup();
});
