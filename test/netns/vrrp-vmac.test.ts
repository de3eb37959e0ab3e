// keepalived's use_vmac, lvsd against Debian's keepalived 2.2.7 in network namespaces: both sides run
// the instance on a macvlan vrrp.51 with the virtual MAC 00:00:5e:00:01:33, a third namespace sees the
// VIP answered by ARP with that MAC whoever is master, lvsd adopts the link a crash left and removes it
// on stop, and with vmac_xmit_base the adverts leave by the parent. docs/vrrp.md, "Virtual MAC".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { garpSenders, labSuite, lvsdOptions, macOf, relinkBoth, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions } from '../../daemon/vrrp/options.js';

const VMAC = '00:00:5e:00:01:33';

const suite = labSuite('vrrpvm', 3, ['ip', 'keepalived', 'tcpdump', 'arping']);
const { host, own, stopAll } = suite;

async function kad(i: number, o: Partial<KeepalivedInstance> & { priority: number }): Promise<Keepalived> {
  const inst: KeepalivedInstance = { name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, vips: [`${VIP4}/24`], extra: ['use_vmac'], ...o };
  return own(await startKeepalived(host(i), keepalivedConf([inst])));
}

async function lvsd(i: number, o: Partial<VrrpInstanceOptions> & { priority: number }): Promise<LvsdNode> {
  return own(await startLvsdNode(host(i), lvsdOptions({ vmac: {}, ...o })));
}

interface LinkView { ifindex: number; address: string; mode: string; up: boolean; parent: string }
async function link(i: number, name = 'vrrp.51'): Promise<LinkView | null> {
  const r = await host(i).exec('ip', ['-d', '-j', 'link', 'show', 'dev', name]).catch(() => null);
  if (r === null) return null;
  const l = (JSON.parse(r.stdout) as { ifindex: number; address: string; flags: string[]; link?: string; linkinfo?: { info_kind: string; info_data?: { mode?: string } } }[])[0];
  if (l === undefined) return null;
  return { ifindex: l.ifindex, address: l.address, mode: `${l.linkinfo?.info_kind ?? ''}/${l.linkinfo?.info_data?.mode ?? ''}`, up: l.flags.includes('UP'), parent: l.link ?? '' };
}

const conf = async (i: number, ifname: string, key: string): Promise<string> => (await host(i).exec('cat', [`/proc/sys/net/ipv4/conf/${ifname}/${key}`])).stdout.trim();

/** The MAC that answers an ARP request for the VIP from d3, the "third namespace" of a router's clients. */
async function arpAnswer(): Promise<string> {
  const r = await host(3).exec('arping', ['-c', '1', '-w', '2', '-I', 'eth0', VIP4]).catch((e: unknown) => ({ stdout: String(e) }));
  return /\[([0-9A-Fa-f:]{17})\]/.exec(r.stdout)?.[1]?.toLowerCase() ?? `no answer: ${r.stdout}`;
}

async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh('ip link del vrrp.51 2>/dev/null; ip link del vx51 2>/dev/null; true');
}

test('use_vmac, keepalived ⇄ lvsd: both on vrrp.51 with the virtual MAC, one master, ARP from a third namespace answered with the virtual MAC before and after failover, lvsd removes its link on stop', { timeout: 120_000 }, async () => {
  const allRp = await conf(2, 'all', 'rp_filter');
  await host(2).exec('sysctl', ['-qw', 'net.ipv4.conf.all.rp_filter=1']);
  const k = await kad(1, { priority: 150 });
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const l = await lvsd(2, { priority: 100 });
  await l.waitState('VI_1', 'BACKUP', 5000);
  const mine = await link(2);
  assert.deepEqual(mine && { address: mine.address, mode: mine.mode, up: mine.up, parent: mine.parent }, { address: VMAC, mode: 'macvlan/private', up: true, parent: 'eth0' });
  assert.deepEqual((await link(1))?.mode, 'macvlan/private', 'keepalived made the same link');
  // The settings keepalived puts on its VMAC and parent (measured), and conf/all/rp_filter 0 while it runs.
  for (const [key, want] of [['arp_ignore', '1'], ['accept_local', '1'], ['rp_filter', '0'], ['promote_secondaries', '1']] as const) assert.equal(await conf(2, 'vrrp.51', key), want, `vrrp.51 ${key}`);
  for (const [key, want] of [['arp_ignore', '1'], ['arp_filter', '1']] as const) assert.equal(await conf(2, 'eth0', key), want, `eth0 ${key}`);
  assert.equal(await conf(2, 'all', 'rp_filter'), '0');
  await sleep(1000); // 3× lvsd's Master_Down_Interval: it would have taken over had it missed keepalived's adverts
  assert.equal(l.state('VI_1'), 'BACKUP');
  assert.deepEqual(await suite.lab.holders(VIP4, 'vrrp.51'), ['d1']);
  assert.equal(await arpAnswer(), VMAC);

  const cap = suite.lab.topo.capture('d3', 'eth0', 'arp or ip proto 112');
  await sleep(300);
  await k.stop();
  await l.waitState('VI_1', 'MASTER', 3000);
  assert.deepEqual(await suite.lab.holders(VIP4, 'vrrp.51'), ['d2']);
  assert.equal(await link(1), null, 'keepalived removed its vrrp.51 on stop');
  assert.equal(await arpAnswer(), VMAC);
  await sleep(300);
  const seen = await cap.stop();
  assert.ok(garpSenders(seen, VIP4).filter((m) => m === VMAC).length >= 5, `lvsd's GARPs come from the virtual MAC: ${garpSenders(seen, VIP4).join(',')}`);
  assert.match(seen, new RegExp(`${VMAC} > 01:00:5e:00:00:12, .*10\\.77\\.0\\.2 > 224\\.0\\.0\\.18: VRRPv3`), 'lvsd advertises from the virtual MAC with eth0\'s address');

  const k2 = await kad(1, { priority: 150 });
  await l.waitState('VI_1', 'BACKUP', 5000);
  await waitFor('VIP on d1 only', async () => JSON.stringify(await suite.lab.holders(VIP4, 'vrrp.51')) === '["d1"]', 3000);
  assert.doesNotMatch(k2.log(), /unexpected|invalid/i);
  await l.stop();
  assert.equal(await link(2), null, 'lvsd removed vrrp.51 on stop');
  assert.equal(await conf(2, 'all', 'rp_filter'), '1', 'conf/all/rp_filter put back');
  await host(2).exec('sysctl', ['-qw', `net.ipv4.conf.all.rp_filter=${allRp}`]);
  await cleanup();
});

test('a crash leaves vrrp.51: the next lvsd adopts it (same ifindex) instead of recreating it; a stranger\'s link of that name is refused (FAULT) and left alone', { timeout: 120_000 }, async () => {
  const l = await lvsd(2, { priority: 150 });
  await l.waitState('VI_1', 'MASTER', 5000);
  const before = await link(2);
  assert.ok(before !== null);
  await l.kill();
  assert.deepEqual(await link(2), before, 'a crash leaves the link as it was');
  const l2 = await lvsd(2, { priority: 150 });
  await l2.waitState('VI_1', 'MASTER', 5000);
  assert.equal((await link(2))?.ifindex, before.ifindex);
  assert.ok(l2.lines.some((x) => typeof x.msg === 'string' && x.msg.startsWith('adopted virtual MAC interface vrrp.51')));
  assert.deepEqual(await suite.lab.holders(VIP4, 'vrrp.51'), ['d2']);
  await l2.stop();
  assert.equal(await link(2), null);

  await host(2).exec('ip', ['link', 'add', 'link', 'eth0', 'name', 'vrrp.51', 'address', '02:00:00:00:00:51', 'type', 'macvlan', 'mode', 'bridge']);
  const l3 = await lvsd(2, { priority: 150 });
  await l3.waitState('VI_1', 'FAULT', 5000);
  assert.ok(l3.lines.some((x) => typeof x.msg === 'string' && x.msg.includes('exists with MAC 02:00:00:00:00:51, not the virtual MAC')), 'the refusal names the link and its MAC');
  await l3.stop();
  assert.equal((await link(2))?.address, '02:00:00:00:00:51', 'the stranger\'s link is left alone');
  await cleanup();
});

test('vmac_xmit_base with a settable name: adverts leave by eth0 with its own MAC, the VIP sits on the VMAC and is answered with the virtual MAC; keepalived with the same setting agrees', { timeout: 120_000 }, async () => {
  const l = await lvsd(2, { priority: 150, vmac: { name: 'vx51', xmitBase: true } });
  await l.waitState('VI_1', 'MASTER', 5000);
  const k = await kad(1, { priority: 100, extra: ['use_vmac vx51', 'vmac_xmit_base'] });
  await k.waitForLog(/Entering BACKUP STATE/, 5000);
  const cap = suite.lab.topo.capture('d3', 'eth0', 'ip proto 112');
  await sleep(600);
  const seen = await cap.stop();
  const mac2 = await macOf(host(2));
  assert.match(seen, new RegExp(`${mac2} > 01:00:5e:00:00:12, .*10\\.77\\.0\\.2 > 224\\.0\\.0\\.18: VRRPv3`));
  assert.doesNotMatch(seen, new RegExp(`${VMAC} > 01:00:5e`));
  assert.deepEqual(await suite.lab.holders(VIP4, 'vx51'), ['d2']);
  assert.equal(await arpAnswer(), VMAC);
  await sleep(1000);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/);
  await l.stop();
  await k.waitForLog(/Entering MASTER STATE/, 3000);
  assert.equal(await link(2, 'vx51'), null);
  await cleanup();
});

test('dynamic_interfaces with use_vmac: the parent made after the start gets its vrrp.51 then and the instance comes up on it; FAULT when the parent is deleted, a new vrrp.51 and MASTER when it is made again — keepalived (with dynamic_interfaces) and lvsd alike', { timeout: 120_000 }, async () => {
  await cleanup();
  // Each namespace its own parent (a veth pair inside it): two lone masters, each measured on its own.
  const make = (i: number): Promise<unknown> => host(i).sh('ip link add dy0 type veth peer name dy1 && ip link set dy1 up && ip link set dy0 up && ip addr add 10.9.0.1/24 dev dy0');
  const drop = (i: number): Promise<unknown> => host(i).sh('ip link del dy0 2>/dev/null; true');
  const onVmac = async (i: number): Promise<string> => (await host(i).sh('ip -4 -br addr show dev vrrp.51 2>/dev/null; true')).stdout;
  await Promise.all([drop(1), drop(2)]);
  const k = own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'dy0', vrid: 51, version: 3, interval: 0.1, priority: 150, vips: ['10.9.0.100/24'], extra: ['use_vmac'] }], 'kad1', ['dynamic_interfaces'])));
  const l = await lvsd(2, { priority: 150, interface: 'dy0', vips: ['10.9.0.100/24'] });
  await l.waitState('VI_1', 'FAULT', 10_000);
  await sleep(500);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/, 'keepalived waits for the parent');
  assert.equal(await link(2), null, 'no vrrp.51 without its parent');
  await Promise.all([make(1), make(2)]);
  await Promise.all([k.waitForLog(/Entering MASTER STATE/, 10_000), l.waitState('VI_1', 'MASTER', 10_000)]);
  assert.match(k.log(), /Success creating VMAC interface vrrp\.51/, 'keepalived made its VMAC when the parent came');
  const first = await link(2);
  assert.deepEqual(first && { address: first.address, mode: first.mode, parent: first.parent }, { address: VMAC, mode: 'macvlan/private', parent: 'dy0' });
  assert.deepEqual((await link(1))?.mode, 'macvlan/private', 'keepalived made the same link');
  await waitFor('lvsd holds the VIP on its vrrp.51', async () => /10\.9\.0\.100\/24/.test(await onVmac(2)), 5000);
  assert.match(await onVmac(1), /10\.9\.0\.100\/24/, 'keepalived holds it on its vrrp.51');
  const kAt = await relinkBoth(k, l, () => Promise.all([drop(1), drop(2)]), () => Promise.all([make(1), make(2)]));
  assert.match(k.log().slice(kAt), /Success creating VMAC interface vrrp\.51/, 'keepalived made a new VMAC');
  const second = await link(2);
  assert.ok(second !== null && first !== null && second.ifindex !== first.ifindex && second.address === VMAC && second.parent === 'dy0', `a new vrrp.51 on the new dy0: ${JSON.stringify(second)}`);
  // The VIPs follow the transition (as they do at any MASTER): give them their moment.
  await waitFor('lvsd holds the VIP on the new vrrp.51', async () => /10\.9\.0\.100\/24/.test(await onVmac(2)), 5000).catch((e: unknown) => {
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${l.lines.map((x) => JSON.stringify(x)).join('\n')}`);
  });
  await l.stop();
  assert.equal(await link(2), null, 'lvsd removed vrrp.51 on stop');
  await Promise.all([drop(1), drop(2)]);
  await cleanup();
});
