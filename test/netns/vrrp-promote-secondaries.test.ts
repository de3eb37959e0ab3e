// keepalived's promote_secondaries against Debian's keepalived 2.2.7: net.ipv4.conf.<interface>.promote_secondaries
// is 1 while the instance runs and back to 0 after it stops; an interface where it was 1 already is left at 1
// (keepalived measured the same way here, docs/vrrp.md). lvsd: the same, and a reload that drops the option puts it back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, VIP4 } from '../support/vrrp-lab.js';

const suite = labSuite('vrrpps', 1, ['ip', 'keepalived']);
const { host, own } = suite;

const promote = async (): Promise<string> => (await host(1).exec('cat', ['/proc/sys/net/ipv4/conf/eth0/promote_secondaries'])).stdout.trim();
const setPromote = async (v: number): Promise<void> => {
  await host(1).exec('sysctl', ['-qw', `net.ipv4.conf.eth0.promote_secondaries=${v}`]);
};

test('promote_secondaries: keepalived 2.2.7 and lvsd turn it on for the instance\'s interface while they run and back off at stop, and leave alone one that was on; a reload without it turns it off', { timeout: 90_000 }, async () => {
  await setPromote(0);
  const k = own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 1, priority: 100, vips: [`${VIP4}/24`], extra: ['promote_secondaries'] }])));
  await k.waitForLog(/Entering BACKUP STATE/, 10_000);
  const kRunning = await promote();
  await k.stop();
  const kStopped = await promote();
  assert.deepEqual([kRunning, kStopped], ['1', '0'], 'keepalived: on while running, off after stop');

  const l = own(await startLvsdNode(host(1), lvsdOptions({ priority: 100, promoteSecondaries: true })));
  await l.waitState('VI_1', 'BACKUP', 10_000);
  assert.equal(await promote(), '1', 'lvsd: on while running');
  await l.stop();
  assert.equal(await promote(), '0', 'lvsd: off after stop, as keepalived');

  await setPromote(1);
  const l2 = own(await startLvsdNode(host(1), lvsdOptions({ priority: 100, promoteSecondaries: true })));
  await l2.waitState('VI_1', 'BACKUP', 10_000);
  await l2.stop();
  assert.equal(await promote(), '1', 'lvsd leaves an interface that had it on as it was, as keepalived');

  await setPromote(0);
  const l3 = own(await startLvsdNode(host(1), lvsdOptions({ priority: 100, promoteSecondaries: true })));
  await l3.waitState('VI_1', 'BACKUP', 10_000);
  assert.equal(await promote(), '1');
  l3.command(`reconfigure ${JSON.stringify(lvsdOptions({ priority: 100 }))}`);
  const done = await l3.waitLine((x) => x.kind === 'reconfigured', 10_000);
  assert.equal(done.error, undefined, String(done.error));
  assert.equal(await promote(), '0', 'a reload that drops promoteSecondaries puts it back');
  assert.equal(l3.transitions.filter((t) => t.reason === 'startup').length, 1, `and does not restart the instance: ${JSON.stringify(l3.transitions)}`);
  await l3.stop();
});
