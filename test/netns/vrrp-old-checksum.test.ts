// keepalived's old_unicast_checksum against Debian's keepalived 2.2.7 (built with OLD_CHKSUM_COMPAT): keepalived ≤ 1.3.6
// checksummed unicast VRRPv3 IPv4 adverts over the multicast group. `old_unicast_checksum` makes 2.2.7 send that
// checksum, so it stands in for the old peer; by default 2.2.7 switches to it on the first such advert.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, sleep, VIP4 } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions } from '../../daemon/vrrp/options.js';

const suite = labSuite('vrrpsum', 2, ['ip', 'keepalived']);
const { host, own, stopAll } = suite;
const SWITCHED = /Setting unicast VRRPv3 checksum to old version/;

async function kad(i: number, priority: number, extra: string[]): Promise<Keepalived> {
  const peer = suite.lab.ip4(3 - i);
  const conf = keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, priority, vips: [`${VIP4}/24`], unicastSrc: suite.lab.ip4(i), unicastPeers: [peer], extra }], `kad${i}`);
  return own(await startKeepalived(host(i), conf));
}
async function lvsd(o: Partial<VrrpInstanceOptions> & { priority: number }): Promise<LvsdNode> {
  return own(await startLvsdNode(host(2), lvsdOptions({ unicastSrcIp: suite.lab.ip4(2), unicastPeers: [suite.lab.ip4(1)], ...o })));
}

test('old_unicast_checksum: an old-checksum master keeps keepalived 2.2.7 and lvsd BACKUP (both switch); lvsd then sends the old checksum', { timeout: 120_000 }, async () => {
  // The reference: keepalived with the old checksum as master, a default keepalived as backup.
  const old = await kad(1, 150, ['old_unicast_checksum']);
  await old.waitForLog(/Entering MASTER STATE/, 5000);
  const ref = await kad(2, 100, []);
  await ref.waitForLog(SWITCHED, 5000);
  await sleep(1000);
  assert.doesNotMatch(ref.log(), /Entering MASTER STATE/, 'keepalived 2.2.7 took the old checksum and stayed BACKUP');
  await ref.stop();

  // lvsd by default (auto), beside the same master: it switches and stays BACKUP.
  const l = await lvsd({ priority: 100 });
  const line = await l.waitLine((x) => typeof x.msg === 'string' && SWITCHED.test(x.msg), 5000);
  assert.equal(line.peer, suite.lab.ip4(1));
  await sleep(1000);
  assert.equal(l.state('VI_1'), 'BACKUP', 'lvsd took the old checksum and stayed BACKUP');

  // Master now, lvsd sends the old checksum: a keepalived that expects only it (old_unicast_checksum) stays BACKUP.
  await old.stop();
  await l.waitState('VI_1', 'MASTER', 5000);
  const back = await kad(1, 50, ['old_unicast_checksum']);
  await sleep(2000);
  assert.doesNotMatch(back.log(), /Entering MASTER STATE|Invalid VRRPv3 checksum/, `keepalived with the old checksum took lvsd's adverts:\n${back.log()}`);
  await stopAll();

  // The control: lvsd with `never` drops the old master's adverts (checksum) and becomes MASTER beside it.
  const old2 = await kad(1, 150, ['old_unicast_checksum']);
  await old2.waitForLog(/Entering MASTER STATE/, 5000);
  const strict = await lvsd({ priority: 100, oldUnicastChecksum: 'never' });
  await strict.waitState('VI_1', 'MASTER', 5000);
  await stopAll();
});
