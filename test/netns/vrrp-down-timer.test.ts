// down_timer_adverts (vrrp.instances[].downTimerAdverts) against keepalived 2.2.7: a keepalived master
// (200) dies; a backup with down_timer_adverts 1 (priority 100, Master_Down_Interval 1 × 1 s + 0.61 s)
// takes over before a keepalived backup of higher priority with the RFC's 3 (150: 3 × 1 s + 0.41 s), which
// then preempts it. keepalived itself stands in the first backup's place first, to learn the reference;
// lvsd must do the same. Without the directive the 150 backup would be master first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, VIP4, waitFor } from '../support/vrrp-lab.js';

const suite = labSuite('vrrpdt', 3, ['ip', 'keepalived']);
const { host, own, stopAll } = suite;

const kad = async (h: number, priority: number, extra: string[] = []): Promise<Keepalived> =>
  own(await startKeepalived(host(h), keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 52, priority, version: 3, interval: 1, vips: [`${VIP4}/24`], extra }], `kad${h}`)));
const mastered = (k: Keepalived): boolean => /Entering MASTER STATE/.test(k.log());

for (const impl of ['keepalived', 'lvsd'] as const) {
  test(`${impl} with down_timer_adverts 1 takes over before a higher-priority keepalived backup with the RFC's 3, which then preempts it`, { timeout: 50_000 }, async () => {
    const master = await kad(1, 200);
    await master.waitForLog(/Entering MASTER STATE/, 8000);
    const other = await kad(3, 150);
    let quick: () => boolean;
    if (impl === 'keepalived') {
      const k = await kad(2, 100, ['down_timer_adverts 1']);
      quick = () => mastered(k);
    } else {
      const l = own(await startLvsdNode(host(2), lvsdOptions({ priority: 100, vrid: 52, advertIntervalMs: 1000, downTimerAdverts: 1 })));
      quick = () => l.state('VI_1') === 'MASTER';
    }
    await other.waitForLog(/Entering BACKUP STATE/, 8000);
    await new Promise((r) => setTimeout(r, 2500)); // both backups have heard the master
    assert.equal(quick() || mastered(other), false, 'no backup became master while the master ran');
    await master.kill();
    const first = await waitFor('a backup master', () => (quick() ? 'quick' : mastered(other) ? 'other' : null), 10_000, 20);
    assert.equal(first, 'quick', `the down_timer_adverts 1 backup (${impl}) is master first`);
    // The 150 backup hears a 100 master and preempts it (RFC 5798): the VIP ends on d3, not on d2 (the
    // killed d1 keeps its own: a crash removes nothing).
    await waitFor('the 150 backup preempts', () => mastered(other), 10_000);
    await waitFor('the VIP on d3, not on d2', async () => {
      const h = await suite.lab.holders(VIP4);
      return h.includes('d3') && !h.includes('d2');
    }, 10_000);
    await stopAll();
    for (const h of suite.lab.hosts) await h.sh(`ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
  });
}
