// keepalived's mcast_dst_ip against Debian's keepalived 2.2.7: an instance's own multicast group. keepalived sends
// its adverts there and binds its socket to it; lvsd's `multicastGroup` joins and sends to the same group, so the
// two make one virtual router, and lvsd's adverts leave for that group when it is master.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, sleep, VIP4 } from '../support/vrrp-lab.js';

const suite = labSuite('vrrpmd', 2, ['ip', 'keepalived', 'tcpdump']);
const { host, own } = suite;
const GROUP = '224.0.0.88';

/** The destination of the next advert seen in host i's namespace. */
async function nextAdvertDst(i: number): Promise<string> {
  const out = (await host(i).exec('timeout', ['5', 'tcpdump', '-c', '1', '-n', '-i', 'eth0', 'ip proto 112'])).stdout;
  return / > (\S+): VRRPv3/.exec(out)?.[1] ?? `none in ${JSON.stringify(out)}`;
}

test('mcast_dst_ip / multicastGroup: keepalived 2.2.7 advertises to its own group and lvsd on that group stays its backup; lvsd then advertises there as master', { timeout: 90_000 }, async () => {
  const k = own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, priority: 150, vips: [`${VIP4}/24`], extra: [`mcast_dst_ip ${GROUP}`] }])));
  await k.waitForLog(/Entering MASTER STATE/, 10_000);
  assert.equal(await nextAdvertDst(2), GROUP, 'keepalived sends to its mcast_dst_ip');
  const l = own(await startLvsdNode(host(2), lvsdOptions({ priority: 100, multicastGroup: GROUP })));
  await l.waitState('VI_1', 'BACKUP', 10_000);
  await sleep(1500); // > 4 × lvsd's Master_Down_Interval (0.36 s): it hears keepalived on that group
  assert.deepEqual(l.transitions.map((t) => t.to), ['BACKUP'], `lvsd stayed BACKUP; ${l.output().slice(-1500)}`);
  await k.stop();
  await l.waitState('VI_1', 'MASTER', 10_000);
  assert.equal(await nextAdvertDst(1), GROUP, 'lvsd sends to its multicastGroup');
  await l.stop();
});
