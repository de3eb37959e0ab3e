// Runs INSIDE the guest (the host kernel has no ipvlan): keepalived 2.2.7's use_ipvlan next to lvsd's
// `ipvlan`, both ends of one VRRP instance. Each director runs it on an l2 private ipvlan vrrp.51 of its eth0
// carrying its own address (the adverts' source) and the VIP; lvsd's link is what keepalived's is (`ip -d -j
// link`: kind, mode, flags, parent, the parent's MAC, IPv6 off); one master; the VIP moves to lvsd when
// keepalived stops; lvsd removes its ipvlan on stop. Then an IPv6 instance: IPv6 stays on, the kernel's own
// link-local on the ipvlan is the source without an address, a configured one goes on nodad and deprecated.
// Called from program.ts's boot (one boot, no new one).
import assert from 'node:assert/strict';
import { Topology } from '../../support/netns.js';
import { keepalivedConf, startKeepalived } from '../../support/keepalived.js';
import { startLvsdNode } from '../../support/vrrp-node.js';
import type { Checks } from './checks.js';

const VIP = '10.78.0.100';
const VIP6 = 'fd00:78::100';

interface LinkView { kind: string; mode: string; flags: string; parent: string; address: string; ipv6: string; addrs: string[] }

export async function ipvlanChecks(checks: Checks): Promise<void> {
  await checks.check('use_ipvlan: keepalived and lvsd each on an l2 private ipvlan with its own address, the same link, one master; the VIP moves to lvsd when keepalived stops; lvsd removes its link on stop', async () => {
    const topo = await Topology.create('ipvl');
    try {
      const d1 = await topo.addHost({ name: 'd1', addresses: ['10.78.0.1/24'] });
      const d2 = await topo.addHost({ name: 'd2', addresses: ['10.78.0.2/24'] });
      const view = async (ns: typeof d1): Promise<LinkView | null> => {
        const r = await ns.exec('ip', ['-d', '-j', 'addr', 'show', 'dev', 'vrrp.51']).catch(() => null);
        if (r === null) return null;
        const l = (JSON.parse(r.stdout) as { address: string; link?: string; linkinfo?: { info_kind: string }; addr_info: { local: string }[] }[])[0];
        if (l === undefined) return null;
        // ip's JSON has no ipvlan flags; its text does ("ipvlan  mode l2 private").
        const m = /ipvlan\s+mode (\S+) (\S+)/.exec((await ns.exec('ip', ['-d', 'link', 'show', 'dev', 'vrrp.51'])).stdout);
        const ipv6 = (await ns.exec('cat', ['/proc/sys/net/ipv6/conf/vrrp.51/disable_ipv6'])).stdout.trim();
        return { kind: l.linkinfo?.info_kind ?? '', mode: m?.[1] ?? '', flags: m?.[2] ?? '', parent: l.link ?? '', address: l.address, ipv6, addrs: l.addr_info.map((a) => a.local).sort() };
      };
      const mac = async (ns: typeof d1): Promise<string> => (await ns.exec('cat', ['/sys/class/net/eth0/address'])).stdout.trim();
      const k = await startKeepalived(d1, keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, version: 3, interval: 1, vips: [`${VIP}/24`], extra: ['use_ipvlan vrrp.51 10.78.0.11/24 private'] }]));
      try {
        await k.waitForLog(/Entering MASTER STATE/, 10_000);
        const l = await startLvsdNode(d2, { instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, advertIntervalMs: 1000, priority: 100, vips: [`${VIP}/24`], ipvlan: { address: '10.78.0.12/24', type: 'private' } }], garp: { masterDelayMs: 0 } }, 60_000);
        try {
          await l.waitState('VI_1', 'BACKUP', 10_000);
          const theirs = await view(d1);
          const mine = await view(d2);
          // keepalived 2.2.7 leaves the VIP on eth0 (measured), not on the ipvlan.
          assert.deepEqual(theirs, { kind: 'ipvlan', mode: 'l2', flags: 'private', parent: 'eth0', address: await mac(d1), ipv6: '1', addrs: ['10.78.0.11'] }, 'keepalived\'s ipvlan as measured');
          assert.ok((await d1.addresses('eth0')).some((a) => a.startsWith(`${VIP}/`)), 'keepalived\'s VIP is on eth0');
          assert.deepEqual(mine, { kind: 'ipvlan', mode: 'l2', flags: 'private', parent: 'eth0', address: await mac(d2), ipv6: '1', addrs: ['10.78.0.12'] }, `lvsd's ipvlan is keepalived's kind; lvsd's warnings: ${l.lines.filter((x) => x.level === 'warn' || x.level === 'error').map((x) => String(x.msg)).join(' | ')}`);
          await new Promise((r) => setTimeout(r, 4000)); // > lvsd's Master_Down_Interval (3.6 s): it hears keepalived through the ipvlans
          assert.deepEqual(l.transitions.map((t) => t.to), ['BACKUP'], `lvsd heard keepalived through its ipvlan all along; ${l.output().slice(-1500)}`);
          await k.stop();
          await l.waitState('VI_1', 'MASTER', 10_000);
          assert.ok((await d2.addresses('eth0')).some((a) => a.startsWith(`${VIP}/`)), 'lvsd put the VIP on eth0, as keepalived');
          assert.equal(await view(d1), null, 'keepalived removed its ipvlan on stop');
          await l.stop();
          assert.equal(await view(d2), null, 'lvsd removed its ipvlan on stop');
          return `keepalived ${JSON.stringify(theirs)}`;
        } finally {
          await l.kill();
        }
      } finally {
        await k.kill();
      }
    } finally {
      topo.destroy();
    }
  });
  await checks.check('use_ipvlan, IPv6: IPv6 stays on with the kernel\'s own link-local on the ipvlan; without an address that link-local is the adverts\' source, an address goes on nodad and deprecated and is the source; the VIP on the parent; lvsd hears keepalived and takes over', async () => {
    const topo = await Topology.create('ipvl6');
    try {
      const d1 = await topo.addHost({ name: 'd1', addresses: ['fd00:78::1/64'] });
      const d2 = await topo.addHost({ name: 'd2', addresses: ['fd00:78::2/64'] });
      interface Addr6 { local: string; scope: string; nodad?: boolean; preferred_life_time?: number }
      const view = async (ns: typeof d1): Promise<{ ipv6: string; addrgen: string; addrs: string[] } | null> => {
        const r = await ns.exec('ip', ['-6', '-d', '-j', 'addr', 'show', 'dev', 'vrrp.51']).catch(() => null);
        const l = r === null ? undefined : (JSON.parse(r.stdout) as { addr_info: Addr6[] }[])[0];
        if (l === undefined) return null;
        const addrgen = /addrgenmode (\S+)/.exec((await ns.exec('ip', ['-d', 'link', 'show', 'dev', 'vrrp.51'])).stdout)?.[1] ?? '';
        const ipv6 = (await ns.exec('cat', ['/proc/sys/net/ipv6/conf/vrrp.51/disable_ipv6'])).stdout.trim();
        // The flags that matter: a configured address is nodad and deprecated (preferred_lft 0), the kernel's is neither.
        return { ipv6, addrgen, addrs: l.addr_info.map((a) => `${a.local} ${a.scope}${a.nodad === true ? ' nodad' : ''}${a.preferred_life_time === 0 ? ' deprecated' : ''}`).sort() };
      };
      // The kernel gives each ipvlan a dev_id, so its link-local (eui64) differs from the parent's though the MAC is the same.
      const kernelLinkLocal = (v: { addrs: string[] } | null): string | undefined => v?.addrs.find((a) => a.startsWith('fe80:') && a.endsWith(' link'))?.split(' ')[0];
      const k = await startKeepalived(d1, keepalivedConf([{ name: 'VI_6', interface: 'eth0', vrid: 51, priority: 150, version: 3, interval: 1, vips: [`${VIP6}/64`], extra: ['use_ipvlan vrrp.51 fe80::11/64 private'] }]));
      try {
        await k.waitForLog(/Entering MASTER STATE/, 15_000);
        const l = await startLvsdNode(d2, { instances: [{ name: 'VI_6', interface: 'eth0', vrid: 51, version: 3, advertIntervalMs: 1000, priority: 100, vips: [`${VIP6}/64`], ipvlan: { type: 'private' } }], garp: { masterDelayMs: 0 } }, 60_000);
        try {
          await l.waitState('VI_6', 'BACKUP', 10_000);
          const theirs = await view(d1);
          const mine = await view(d2);
          const theirLl = kernelLinkLocal(theirs);
          const myLl = kernelLinkLocal(mine);
          assert.ok(theirLl !== undefined && myLl !== undefined, `both ipvlans have the kernel's link-local: ${JSON.stringify({ theirs, mine })}`);
          assert.deepEqual(theirs, { ipv6: '0', addrgen: 'eui64', addrs: [`${theirLl} link`, 'fe80::11 link nodad deprecated'].sort() }, 'keepalived\'s IPv6 ipvlan as measured');
          assert.deepEqual(mine, { ipv6: '0', addrgen: 'eui64', addrs: [`${myLl} link`] }, 'lvsd\'s: IPv6 on, only the kernel\'s link-local');
          assert.ok(!(await d1.addresses('eth0')).some((a) => a.startsWith('fe80::11/')), 'keepalived\'s address is on the ipvlan only');
          assert.ok((await d1.addresses('eth0')).some((a) => a.startsWith(`${VIP6}/`)), 'keepalived\'s VIP is on eth0');
          await new Promise((r) => setTimeout(r, 4000)); // > lvsd's Master_Down_Interval (3.6 s): it hears keepalived through the ipvlans
          assert.deepEqual(l.transitions.map((t) => t.to), ['BACKUP'], `lvsd heard keepalived through its ipvlan all along; ${l.output().slice(-1500)}`);
          await k.stop();
          await l.waitState('VI_6', 'MASTER', 10_000);
          assert.ok((await d2.addresses('eth0')).some((a) => a.startsWith(`${VIP6}/`)), 'lvsd put the VIP on eth0, as keepalived');
          // One of lvsd's adverts as it arrives at d1: from the ipvlan's link-local, with the parent's MAC.
          const cap = (await d1.exec('timeout', ['5', 'tcpdump', '-c', '1', '-e', '-n', '-i', 'eth0', 'ip6 proto 112'])).stdout;
          const mac = (await d2.exec('cat', ['/sys/class/net/eth0/address'])).stdout.trim();
          assert.match(cap, new RegExp(`^\\S+ ${mac} > 33:33:00:00:00:12, .* ${myLl.replace(/[.:]/g, (c) => `\\${c}`)} > ff02::12: VRRPv3`, 'm'), cap);
          await l.stop();
          assert.equal(await view(d2), null, 'lvsd removed its ipvlan on stop');
          return `keepalived ${JSON.stringify(theirs)}; lvsd ${JSON.stringify(mine)}`;
        } finally {
          await l.kill();
        }
      } finally {
        await k.kill();
      }
    } finally {
      topo.destroy();
    }
  });
  await checks.check('use_ipvlan under dynamic_interfaces: the parent made after the start gets its ipvlan then and the instance becomes MASTER on it; FAULT when the parent is deleted; a new ipvlan and MASTER when it is made again — keepalived and lvsd alike', async () => {
    const topo = await Topology.create('ipvld');
    try {
      // Each side alone on a veth of its own namespace (dy0, made and deleted by the check): two lone masters.
      const d1 = await topo.addHost({ name: 'd1', addresses: ['10.78.0.1/24'] });
      const d2 = await topo.addHost({ name: 'd2', addresses: ['10.78.0.2/24'] });
      const make = (ns: typeof d1): Promise<unknown> => ns.sh('ip link add dy0 type veth peer name dy1 && ip link set dy1 up && ip link set dy0 up && ip addr add 10.79.0.1/24 dev dy0');
      const drop = (ns: typeof d1): Promise<unknown> => ns.sh('ip link del dy0 2>/dev/null; true');
      const kind = async (ns: typeof d1): Promise<string> => (await ns.sh('ip -d -o link show dev vrrp.51 2>/dev/null | grep -o "vrrp.51@[a-z0-9]*: .*ipvlan  mode l2" | cut -d: -f1; true')).stdout.trim();
      const k = await startKeepalived(d1, keepalivedConf([{ name: 'VI_1', interface: 'dy0', vrid: 51, priority: 150, version: 3, interval: 1, vips: ['10.79.0.100/24'], extra: ['use_ipvlan vrrp.51 10.79.0.11/24 private'] }], 'kad', ['dynamic_interfaces']));
      try {
        const l = await startLvsdNode(d2, { instances: [{ name: 'VI_1', interface: 'dy0', vrid: 51, version: 3, advertIntervalMs: 1000, priority: 150, vips: ['10.79.0.100/24'], ipvlan: { address: '10.79.0.12/24', type: 'private' } }], garp: { masterDelayMs: 0 } }, 60_000);
        try {
          await l.waitState('VI_1', 'FAULT', 10_000);
          await new Promise((r) => setTimeout(r, 1000));
          assert.doesNotMatch(k.log(), /Entering MASTER STATE/, 'keepalived waits for the parent');
          await Promise.all([make(d1), make(d2)]);
          await l.waitState('VI_1', 'MASTER', 20_000);
          await k.waitForLog(/Entering MASTER STATE/, 20_000); // keepalived 2.2.7, measured: MASTER once the parent came
          assert.equal(await kind(d1), 'vrrp.51@dy0', 'keepalived made its ipvlan on dy0');
          assert.equal(await kind(d2), 'vrrp.51@dy0', `lvsd made its ipvlan on dy0; ${l.output().slice(-1500)}`);
          const since = performance.timeOrigin + performance.now(); // waitState's `since` is a time (the transitions' mono)
          const kDrop = k.log().length;
          await Promise.all([drop(d1), drop(d2)]);
          await l.waitState('VI_1', 'FAULT', 20_000, since);
          await new Promise((r) => setTimeout(r, 1000));
          assert.match(k.log().slice(kDrop), /Entering FAULT STATE/, 'keepalived FAULT without the parent (measured)');
          const kAt = k.log().length;
          const again = performance.timeOrigin + performance.now();
          await Promise.all([make(d1), make(d2)]);
          await l.waitState('VI_1', 'MASTER', 20_000, again);
          const end = Date.now() + 20_000;
          while (!/Entering MASTER STATE/.test(k.log().slice(kAt)) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
          const kAgain = k.log().slice(kAt);
          assert.match(kAgain, /Success creating ipvlan interface vrrp\.51[^]*Entering MASTER STATE/, 'keepalived made a new ipvlan and is MASTER again (measured)');
          assert.equal(await kind(d2), 'vrrp.51@dy0', 'lvsd made a new ipvlan');
          await l.stop();
          return `keepalived, parent made again: ${kAgain.split('\n').filter((x) => /VMAC|ipvlan|vrrp\.51|STATE/.test(x)).slice(0, 8).join(' / ')}`;
        } finally {
          await l.kill();
        }
      } finally {
        await k.kill();
      }
    } finally {
      topo.destroy();
    }
  });
}
