// keepalived's smaller VRRP directives against Debian's keepalived 2.2.7 (issue #15 item 5): each is run on
// keepalived first, as the reference, and then on lvsd with keepalived as its peer.
//   vrrp_mcast_group4 + mcast_src_ip, unicast_ttl, dont_track_primary, notify_master_rx_lower_pri.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, relinkBoth, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions, VrrpOptions } from '../../daemon/vrrp/options.js';
import { importKeepalived } from '../../daemon/config/keepalived/index.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';


const suite = labSuite('vrrpdir', 3, ['ip', 'keepalived', 'tcpdump', 'nft']);
const { host, own, stopAll } = suite;

async function kad(i: number, o: Partial<KeepalivedInstance> & { priority: number }, globals: string[] = []): Promise<Keepalived> {
  const inst: KeepalivedInstance = { name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 0.1, vips: [`${VIP4}/24`], ...o };
  return own(await startKeepalived(host(i), keepalivedConf([inst], `kad${i}`, globals)));
}
async function lvsd(i: number, o: Partial<VrrpInstanceOptions> & { priority: number }, extra: Partial<VrrpOptions> = {}): Promise<LvsdNode> {
  return own(await startLvsdNode(host(i), lvsdOptions(o, extra)));
}
async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh(`nft delete table inet split 2>/dev/null; ip link set eth0 up; ip addr del ${VIP4}/24 dev eth0 2>/dev/null; ip addr del 10.77.0.12/24 dev eth0 2>/dev/null; true`);
}
/** VRRP headers seen in a tcpdump -v capture: "src > dst ttl". */
function vrrpPackets(cap: string): { src: string; dst: string; ttl: number }[] {
  const out: { src: string; dst: string; ttl: number }[] = [];
  const lines = cap.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const ttl = /\bttl (\d+),.*proto VRRP \(112\)/.exec(lines[i] ?? '');
    const addr = /^\s+(\S+) > (\S+): VRRPv/.exec(lines[i + 1] ?? '');
    if (ttl && addr) out.push({ src: addr[1] ?? '', dst: (addr[2] ?? '').replace(/:$/, ''), ttl: Number(ttl[1]) });
  }
  return out;
}
/** A capture that has begun: resolves once tcpdump says it is listening (its start lags on a loaded machine). */
async function vcapture(i: number): Promise<{ stop: () => Promise<string> }> {
  const child = host(i).spawn('tcpdump', ['-l', '-n', '-v', '-i', 'eth0', 'ip proto 112']);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`tcpdump did not start listening in 10 s: ${err}`)); }, 10_000);
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`tcpdump exited: ${err}`));
    });
  });
  return { stop: () => new Promise((r) => { child.once('exit', () => { r(out); }); child.kill('SIGINT'); }) };
}

test('vrrp_mcast_group4 224.0.0.19 and mcast_src_ip: lvsd and keepalived hear each other on the other group, lvsd sends from the chosen address', { timeout: 120_000 }, async () => {
  const group = ['vrrp_mcast_group4 224.0.0.19'];
  const k = await kad(1, { priority: 150 }, group);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  await host(2).sh('ip addr add 10.77.0.12/24 dev eth0');
  const l = await lvsd(2, { priority: 100, unicastSrcIp: '10.77.0.12' }, { multicastGroup4: '224.0.0.19' });
  await sleep(1500); // 4× lvsd's Master_Down_Interval: it hears keepalived only if it joined 224.0.0.19
  assert.equal(l.state('VI_1'), 'BACKUP');
  assert.ok(((await l.snapshot()).instances[0]?.counters.advertsReceived ?? 0) >= 10);
  const cap = await vcapture(1);
  await sleep(300);
  await k.stop();
  await l.waitState('VI_1', 'MASTER', 3000);
  // keepalived back with a lower priority: it accepts lvsd's adverts (from .12, to .19) and stays BACKUP.
  const k2 = await kad(1, { priority: 50 }, group);
  await sleep(1500);
  assert.doesNotMatch(k2.log(), /Entering MASTER STATE/);
  const seen = vrrpPackets(await cap.stop());
  const fromL = seen.filter((p) => p.src === '10.77.0.12');
  assert.ok(fromL.length >= 10, JSON.stringify(seen.slice(0, 5)));
  assert.ok(fromL.every((p) => p.dst === '224.0.0.19' && p.ttl === 255), JSON.stringify(fromL.slice(0, 3)));
  assert.ok(seen.every((p) => p.dst === '224.0.0.19'), 'no advert to 224.0.0.18');
  await cleanup();
});

test('unicast_ttl: keepalived sends its unicast adverts with that TTL, and so does lvsd; each accepts the other\'s', { timeout: 120_000 }, async () => {
  const cap = await vcapture(2);
  const k = await kad(1, { priority: 150, unicastSrc: suite.lab.ip4(1), unicastPeers: [suite.lab.ip4(2)], extra: ['unicast_ttl 9'] });
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const l = await lvsd(2, { priority: 100, unicastSrcIp: suite.lab.ip4(2), unicastPeers: [suite.lab.ip4(1)], unicastTtl: 7 });
  await sleep(1000);
  assert.equal(l.state('VI_1'), 'BACKUP');
  await k.stop();
  await l.waitState('VI_1', 'MASTER', 3000);
  const k2 = await kad(1, { priority: 50, unicastSrc: suite.lab.ip4(1), unicastPeers: [suite.lab.ip4(2)], extra: ['unicast_ttl 9'] });
  await sleep(1500);
  assert.doesNotMatch(k2.log(), /Entering MASTER STATE/);
  const seen = vrrpPackets(await cap.stop());
  const ttls = (src: string): number[] => [...new Set(seen.filter((p) => p.src === src).map((p) => p.ttl))];
  assert.deepEqual(ttls(suite.lab.ip4(1)), [9], 'keepalived (the reference) uses unicast_ttl');
  assert.deepEqual(ttls(suite.lab.ip4(2)), [7], 'lvsd uses unicastTtl');
  await cleanup();
});

test('dont_track_primary: with it, keepalived and lvsd stay MASTER when their interface goes down; without it both enter FAULT', { timeout: 120_000 }, async () => {
  for (const dont of [false, true]) {
    const k = await kad(1, { priority: 150, extra: dont ? ['dont_track_primary'] : [] });
    const l = await lvsd(2, { priority: 150, vrid: 52, vips: ['10.77.0.102/24'], dontTrackPrimary: dont });
    await k.waitForLog(/Entering MASTER STATE/, 5000);
    await l.waitState('VI_1', 'MASTER', 5000);
    await host(1).sh('ip link set eth0 down');
    await host(2).sh('ip link set eth0 down');
    await sleep(1500);
    const kFault = /Entering FAULT STATE/.test(k.log());
    assert.equal(kFault, !dont, `keepalived, dont_track_primary ${String(dont)}:\n${k.log()}`);
    assert.equal(l.state('VI_1'), dont ? 'MASTER' : 'FAULT', `lvsd, dontTrackPrimary ${String(dont)}`);
    await cleanup();
  }
});

test('notify_master_rx_lower_pri: after a split brain heals, the better master (keepalived, then lvsd) runs it without arguments', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-rxlp-'));
  const script = join(dir, 'rx.sh');
  writeFileSync(script, `#!/bin/sh\necho "$0 $#" >> "${dir}/$(basename "$0").out"\n`);
  chmodSync(script, 0o755);
  writeFileSync(join(dir, 'l.sh'), readFileSync(script));
  chmodSync(join(dir, 'l.sh'), 0o755);
  const split = (i: number): Promise<unknown> =>
    host(i).sh(
      "nft add table inet split && nft add chain inet split in '{ type filter hook input priority 0; }' && nft add chain inet split out '{ type filter hook output priority 0; }'" +
        ' && nft add rule inet split in ip protocol 112 drop && nft add rule inet split out ip protocol 112 drop',
    );
  const runs = (name: string): string[] => (existsSync(join(dir, `${name}.out`)) ? readFileSync(join(dir, `${name}.out`), 'utf8').trim().split('\n') : []);
  for (const better of ['keepalived', 'lvsd'] as const) {
    if (better === 'keepalived') {
      const k = await kad(1, { priority: 150, extra: [`notify_master_rx_lower_pri ${script}`] }, ['enable_script_security', 'script_user root']);
      await k.waitForLog(/Entering MASTER STATE/, 5000);
    } else {
      const l1 = await lvsd(1, { priority: 150, notify: { masterRxLowerPri: join(dir, 'l.sh') } });
      await l1.waitState('VI_1', 'MASTER', 5000);
    }
    const l2 = await lvsd(2, { priority: 100 });
    await sleep(500);
    await split(2);
    const m = await l2.waitState('VI_1', 'MASTER', 5000);
    await host(2).sh('nft delete chain inet split out');
    await sleep(500); // d2's adverts get out; it cannot hear the answer until the table goes
    await host(2).sh('nft delete table inet split');
    await l2.waitState('VI_1', 'BACKUP', 5000, m.mono);
    const name = better === 'keepalived' ? 'rx.sh' : 'l.sh';
    await waitFor(`${better} ran the script`, () => runs(name).length >= 1, 5000);
    // No arguments: keepalived appends none to this one (unlike notify's "INSTANCE name STATE prio").
    assert.ok(runs(name).every((r) => r.endsWith(' 0')), runs(name).join('\n'));
    await cleanup();
  }
  // Once per lower-priority advert heard (d2 advertises every 0.1 s for 0.5 s before it can hear the answer):
  // several runs on both sides, not one per split brain (measured: keepalived 7, lvsd 9 in one run).
  assert.ok(runs('l.sh').length >= 2 && runs('rx.sh').length >= 2, `keepalived ${runs('rx.sh').length}, lvsd ${runs('l.sh').length}`);
});

test('disable_local_igmp: igmp_link_local_mcast_reports 0 while running, 1 again after a stop, left 0 by a crash — keepalived and lvsd alike', { timeout: 60_000 }, async () => {
  await cleanup();
  const reports = async (i: number): Promise<string> => (await host(i).sh('cat /proc/sys/net/ipv4/igmp_link_local_mcast_reports')).stdout.trim();
  // The reference, in its own namespace (the setting is per network namespace).
  assert.equal(await reports(1), '1');
  const k = await kad(1, { priority: 100 }, ['disable_local_igmp']);
  await k.waitForLog(/Entering (BACKUP|MASTER) STATE/, 5000);
  assert.equal(await reports(1), '0', 'keepalived running');
  await k.stop();
  assert.equal(await reports(1), '1', 'keepalived stopped');
  // lvsd: the same three steps.
  assert.equal(await reports(2), '1');
  const l = await lvsd(2, { priority: 100 }, { disableLocalIgmp: true });
  assert.equal(await reports(2), '0', 'lvsd running');
  await l.stop();
  assert.equal(await reports(2), '1', 'lvsd stopped');
  const crashed = await lvsd(2, { priority: 100 }, { disableLocalIgmp: true });
  assert.equal(await reports(2), '0');
  await crashed.kill();
  assert.equal(await reports(2), '0', 'a crash leaves it off, as keepalived\'s does');
  await host(2).sh('echo 1 > /proc/sys/net/ipv4/igmp_link_local_mcast_reports');
  // Without the option lvsd leaves it alone.
  const plain = await lvsd(2, { priority: 100 });
  assert.equal(await reports(2), '1');
  await plain.stop();
});

test('interface_up_down_delays: keepalived and lvsd ride out a link blip shorter than the down delay, and enter FAULT once an outage lasts it', { timeout: 120_000 }, async () => {
  await cleanup();
  // advert_int 1: the delays must stay under 2 adverts (keepalived caps them there).
  const conf = keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, version: 3, interval: 1, priority: 150, vips: [`${VIP4}/24`] }], 'kad1') + 'interface_up_down_delays {\n  eth0 1\n}\n';
  const k = own(await startKeepalived(host(1), conf));
  const l = await lvsd(2, { priority: 150, vrid: 52, advertIntervalMs: 1000, vips: ['10.77.0.102/24'] }, { interfaceUpDownDelays: { eth0: { downMs: 1000 } } });
  await k.waitForLog(/Entering MASTER STATE/, 10_000);
  await l.waitState('VI_1', 'MASTER', 10_000);
  const both = (cmd: string): Promise<unknown> => Promise.all([host(1).sh(cmd), host(2).sh(cmd)]);
  await both('ip link set eth0 down');
  await sleep(300);
  await both('ip link set eth0 up');
  await sleep(1500);
  assert.doesNotMatch(k.log(), /Entering FAULT STATE/, 'keepalived (the reference) rode out the blip');
  assert.equal(l.state('VI_1'), 'MASTER', 'lvsd rode out the blip');
  const since = performance.timeOrigin + performance.now(); // waitState's `since` is a time (the transitions' mono)
  const down = Date.now();
  await both('ip link set eth0 down');
  await sleep(500);
  assert.doesNotMatch(k.log(), /Entering FAULT STATE/, 'keepalived waits out its delay');
  assert.equal(l.state('VI_1'), 'MASTER', 'lvsd waits out its delay');
  await Promise.all([k.waitForLog(/Entering FAULT STATE/, 10_000), l.waitState('VI_1', 'FAULT', 10_000, since)]);
  // A lower bound only: a loaded machine may be late, never early.
  assert.ok(Date.now() - down >= 1000, `FAULT after ${Date.now() - down} ms`);
  await cleanup();
});

test('dynamic_interfaces: an instance on an interface made after the start comes up on it, goes to FAULT when it is deleted and up again when it is made anew — keepalived (with dynamic_interfaces) and lvsd alike', { timeout: 120_000 }, async () => {
  await cleanup();
  const make = (i: number): Promise<unknown> => host(i).sh('ip link add dy0 type veth peer name dy1 && ip link set dy1 up && ip link set dy0 up && ip addr add 10.9.0.1/24 dev dy0');
  const drop = (i: number): Promise<unknown> => host(i).sh('ip link del dy0 2>/dev/null; true');
  await Promise.all([drop(1), drop(2)]);
  const k = own(await startKeepalived(host(1), keepalivedConf([{ name: 'VI_1', interface: 'dy0', vrid: 51, version: 3, interval: 0.1, priority: 150, vips: ['10.9.0.100/24'] }], 'kad1', ['dynamic_interfaces'])));
  const l = await lvsd(2, { priority: 150, interface: 'dy0', vips: ['10.9.0.100/24'] });
  await l.waitState('VI_1', 'FAULT', 10_000);
  await sleep(500);
  assert.doesNotMatch(k.log(), /Entering MASTER STATE/, 'keepalived waits for the interface');
  await Promise.all([make(1), make(2)]);
  await Promise.all([k.waitForLog(/Entering MASTER STATE/, 10_000), l.waitState('VI_1', 'MASTER', 10_000)]);
  await relinkBoth(k, l, () => Promise.all([drop(1), drop(2)]), () => Promise.all([make(1), make(2)]));
  // The VIP follows the MASTER transition by a moment: wait for it rather than race it.
  await waitFor('lvsd holds the VIP on the new link', async () => /10\.9\.0\.100\/24/.test((await host(2).sh('ip -4 addr show dev dy0')).stdout), 10_000);
  await Promise.all([drop(1), drop(2)]);
  await cleanup();
});

test('static_ipaddress / static_routes / static_rules: set at start while still BACKUP and removed at stop — keepalived and lvsd alike (the lvsd config imported from the same keepalived.conf)', { timeout: 120_000 }, async () => {
  await cleanup();
  const text =
    'global_defs {\n  router_id kad\n}\n' +
    'static_ipaddress {\n  10.9.5.1/24 dev eth0\n}\n' +
    'static_routes {\n  10.70.0.0/16 via 10.77.0.254\n  10.71.0.0/16 dev eth0\n}\n' +
    'static_rules {\n  from 10.9.5.0/24 table 100\n}\n' +
    'vrrp_instance VI_1 {\n  state BACKUP\n  interface eth0\n  virtual_router_id 51\n  priority 100\n  advert_int 1\n  virtual_ipaddress {\n    10.77.0.100/24\n  }\n}\n';
  const file = join(mkdtempSync(join(tmpdir(), 'lvsd-static-')), 'keepalived.conf');
  writeFileSync(file, text);
  const imported = importKeepalived(file);
  assert.deepEqual(imported.diagnostics, [], 'the importer carries all three blocks');
  const loaded = loadConfigText(imported.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const eo = vrrpOptions(loaded.config);
  const shown = async (i: number): Promise<string> => {
    const out = await host(i).sh('ip -4 addr show dev eth0 | grep -o "inet 10.9.5.1/24"; ip route show table all proto keepalived; ip rule | grep "proto keepalived"; true');
    return out.stdout.trim();
  };
  const k = own(await startKeepalived(host(1), text));
  await k.waitForLog(/Entering BACKUP STATE/, 10_000);
  const l = await lvsd(2, { priority: 100 }, { staticIpaddresses: eo.staticIpaddresses ?? [], staticRoutes: eo.staticRoutes ?? [], staticRules: eo.staticRules ?? [] });
  await l.waitState('VI_1', 'BACKUP', 10_000);
  const ref = await shown(1);
  assert.match(ref, /inet 10\.9\.5\.1\/24[^]*10\.70\.0\.0\/16 via 10\.77\.0\.254[^]*10\.71\.0\.0\/16 dev eth0[^]*from 10\.9\.5\.0\/24 lookup 100/, `keepalived (the reference):\n${ref}`);
  assert.equal(await shown(2), ref, 'lvsd holds the same, while BACKUP');
  await k.stop();
  await l.stop();
  assert.equal(await shown(1), '', 'keepalived removed them at stop');
  assert.equal(await shown(2), '', 'lvsd removed them at stop');
  await cleanup();
});
