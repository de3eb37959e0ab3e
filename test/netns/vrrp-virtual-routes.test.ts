// keepalived's virtual_routes and virtual_rules, lvsd against Debian's keepalived 2.2.7: the same
// routes and rules, read back with `ip route` / `ip rule`, appear on whichever of the two is MASTER and
// on no backup; lvsd's are the very lines keepalived's are (proto keepalived, same table, metric, src).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VirtualRouteOptions, VirtualRuleOptions } from '../../daemon/vrrp/virtual-routes.js';


const suite = labSuite('vrrprt', 2, ['ip', 'keepalived']);
const { host, own } = suite;

// The same routes and rules in keepalived's syntax and in lvsd's.
const KAD_ROUTES = ['10.10.0.0/16 via 10.77.0.254 dev eth0 metric 5', '10.11.0.0/16 via 10.77.0.254 table 100', 'blackhole 10.12.0.0/16', `src ${VIP4} 10.13.0.0/16 dev eth0 scope link`];
const KAD_RULES = [`from ${VIP4} table 100 priority 100`, 'to 10.15.0.0/16 lookup 100 priority 101', 'from 10.77.0.0/24 fwmark 5 table 101 priority 102'];
const ROUTES: VirtualRouteOptions[] = [
  { to: '10.10.0.0/16', via: '10.77.0.254', dev: 'eth0', metric: 5 },
  { to: '10.11.0.0/16', via: '10.77.0.254', table: 100 },
  { to: '10.12.0.0/16', type: 'blackhole' },
  { to: '10.13.0.0/16', src: VIP4, dev: 'eth0', scope: 'link' },
];
const RULES: VirtualRuleOptions[] = [
  { from: VIP4, table: 100, priority: 100 },
  { to: '10.15.0.0/16', table: 100, priority: 101 },
  { from: '10.77.0.0/24', fwmark: 5, table: 101, priority: 102 },
];

/** The routes and rules marked proto keepalived on host i, as `ip` prints them. */
async function installed(i: number): Promise<{ routes: string[]; rules: string[] }> {
  const r = await host(i).sh('ip route show table all; ip -6 route show table all');
  const u = await host(i).sh('ip rule show');
  const pick = (t: string): string[] => t.split('\n').filter((l) => l.includes('proto keepalived')).map((l) => l.trim()).sort();
  return { routes: pick(r.stdout), rules: pick(u.stdout) };
}
const none = { routes: [], rules: [] };

async function kad(priority: number): Promise<Keepalived> {
  const conf = keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, priority, vips: [`${VIP4}/24`], extra: ['virtual_routes {', ...KAD_ROUTES.map((r) => `  ${r}`), '}', 'virtual_rules {', ...KAD_RULES.map((r) => `  ${r}`), '}'] }]);
  return own(await startKeepalived(host(1), conf));
}

test('virtual_routes and virtual_rules follow MASTER on keepalived and lvsd alike, with the same ip route / ip rule lines', { timeout: 120_000 }, async () => {
  const k = await kad(150);
  await k.waitForLog(/setting Virtual Rules/, 5000);
  const theirs = await installed(1);
  assert.equal(theirs.routes.length, 4, theirs.routes.join('\n'));
  assert.equal(theirs.rules.length, 3, theirs.rules.join('\n'));

  const l: LvsdNode = await startLvsdNode(host(2), lvsdOptions({ priority: 100, virtualRoutes: ROUTES, virtualRules: RULES }));
  own(l);
  await l.waitState('VI_1', 'BACKUP', 5000);
  assert.deepEqual(await installed(2), none, 'a backup holds none');

  await k.stop();
  await l.waitState('VI_1', 'MASTER', 3000);
  assert.deepEqual(await installed(1), none, 'keepalived removed its own on stop');
  const ours = await waitFor('lvsd\'s routes and rules', async () => {
    const x = await installed(2);
    return x.routes.length === 4 && x.rules.length === 3 ? x : null;
  }, 3000);
  assert.deepEqual(ours, theirs);

  const k2 = await kad(150);
  await l.waitState('VI_1', 'BACKUP', 5000);
  await waitFor('lvsd removed them on leaving MASTER', async () => JSON.stringify(await installed(2)) === JSON.stringify(none), 3000);
  await k2.waitForLog(/setting Virtual Rules/, 3000);
  assert.deepEqual(await installed(1), theirs);
  assert.deepEqual(l.lines.filter((x) => x.level === 'error'), []);
  await l.stop();
  await k2.stop();
});

test('a master that crashed leaves its routes and rules behind; when it comes back as BACKUP it removes them (keepalived 2.2.7 leaves the routes)', { timeout: 120_000 }, async () => {
  // Measured with keepalived 2.2.7 in its place: after a crash it restarts as BACKUP logging "removing
  // Virtual Rules", "removing Virtual Routes", and the rules go, but its routes stay in the table.
  const first = own(await startLvsdNode(host(2), lvsdOptions({ priority: 100, virtualRoutes: ROUTES, virtualRules: RULES })));
  await first.waitState('VI_1', 'MASTER', 5000);
  await waitFor('routes and rules set', async () => {
    const x = await installed(2);
    return x.routes.length === 4 && x.rules.length === 3 ? x : null;
  }, 3000);
  await first.kill();
  const left = await installed(2);
  assert.equal(left.routes.length + left.rules.length, 7, 'the crash left them (nothing removed them yet)');
  const k = await kad(150);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const again = own(await startLvsdNode(host(2), lvsdOptions({ priority: 100, virtualRoutes: ROUTES, virtualRules: RULES })));
  await again.waitState('VI_1', 'BACKUP', 5000);
  assert.deepEqual(await installed(2), none, 'the backup still holds the crashed master\'s routes or rules');
  // Six of the seven: the route whose source is the VIP left with the stale VIP (the kernel drops a route
  // when its preferred source address is removed).
  const removed = again.lines.filter((x) => x.msg === 'removed stale virtual routes and rules left from an earlier run');
  assert.deepEqual(removed.map((x) => x.count), [6], JSON.stringify(again.lines.filter((x) => String(x.msg).includes('stale'))));
  assert.deepEqual(again.lines.filter((x) => x.level === 'error'), []);
  await again.stop();
  await k.stop();
});
