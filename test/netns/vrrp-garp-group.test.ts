// GARP groups (keepalived garp_group, vrrp_garp_interval / vrrp_gna_interval): the gratuitous ARPs and
// unsolicited NAs of every instance on a link share one queue per family. The same keepalived.conf runs
// under keepalived 2.2.7 and then, through the importer, under lvsd, on the same director; a capture on
// the segment gives the order of every announcement and the gaps between them, and lvsd's must be
// keepalived's. Five instances become master at once: V1 (two VIPs), V2, V3 (IPv4), W1 (two VIPs),
// W2 (IPv6), each with garp_master_repeat 5. Gaps of 0.5 s: on a loaded machine (load average 19 on 2
// cores) the transitions of either daemon spread over 0.4 s, and one coming after the gap would take a
// free queue (keepalived alike), which is not what this test is about.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKeepalived } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, sleep, waitFor } from '../support/vrrp-lab.js';
import { importKeepalived } from '../../daemon/config/keepalived/index.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';

const suite = labSuite('vrrpgg', 2, ['ip', 'keepalived', 'tcpdump']);
const { host, own, stopAll } = suite;

const INSTANCES: [string, number, string[]][] = [
  ['V1', 61, ['10.77.0.101/24', '10.77.0.151/24']],
  ['V2', 62, ['10.77.0.102/24']],
  ['V3', 63, ['10.77.0.103/24']],
  ['W1', 71, ['fd77::101/64', 'fd77::151/64']],
  ['W2', 72, ['fd77::102/64']],
];

function conf(globals: string[], top: string[]): string {
  const lines = ['global_defs {', ' router_id gg', ...globals.map((g) => ` ${g}`), '}', ...top];
  for (const [name, vrid, vips] of INSTANCES) {
    lines.push(`vrrp_instance ${name} {`, ' state BACKUP', ' interface eth0', ` virtual_router_id ${vrid}`, ' priority 100', ' advert_int 0.2', ' version 3', ' garp_master_repeat 5');
    lines.push(' virtual_ipaddress {', ...vips.map((v) => `  ${v}`), ' }', '}');
  }
  return lines.join('\n') + '\n';
}

interface Sent {
  t: number;
  family: 4 | 6;
  /** Last group of the address: "101" for 10.77.0.101 or fd77::101. */
  vip: string;
}

/** Every GARP / unsolicited NA for a VIP in a `tcpdump -e -n` capture, in order. */
function announcements(capture: string): Sent[] {
  const out: Sent[] = [];
  for (const line of capture.split('\n')) {
    const ts = /^(\d+):(\d+):(\d+\.\d+) /.exec(line);
    if (ts === null) continue;
    const t = (Number(ts[1]) * 3600 + Number(ts[2]) * 60 + Number(ts[3])) * 1000;
    const arp = /Request who-has (10\.7[79]\.[01]\.(\d+)) .*tell \1,/.exec(line);
    if (arp !== null && (Number(arp[2]) > 100 || arp[1]?.startsWith('10.79.1.') === true)) out.push({ t, family: 4, vip: arp[1]?.startsWith('10.79.1.') === true ? `x${arp[2] ?? ''}` : (arp[2] ?? '') });
    const na = /neighbor advertisement, tgt is fd77::(\d+),/.exec(line);
    if (na !== null && Number(na[1]) > 100) out.push({ t, family: 6, vip: na[1] ?? '' });
  }
  return out;
}

/**
 * Runs the config under one daemon with a capture on the segment (or on d1's eth1p, the far end of its
 * eth1) until the last announcement is due; `masters` instances must become master first.
 */
async function measure(daemon: 'keepalived' | 'lvsd', text: string, settleMs: number, where: [string, string] = ['d2', 'eth0'], masters = INSTANCES.map(([n]) => n)): Promise<Sent[]> {
  const cap = suite.lab.topo.capture(where[0], where[1], 'arp or icmp6');
  await sleep(500);
  if (daemon === 'keepalived') {
    const k = own(await startKeepalived(host(1), text));
    await waitFor('all masters (keepalived)', () => (k.log().match(/Entering MASTER STATE/g)?.length ?? 0) >= masters.length, 15_000);
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'lvsd-gg-'));
    const file = join(dir, 'keepalived.conf');
    writeFileSync(file, text);
    const imported = importKeepalived(file, { configId: 'gg' });
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(imported.diagnostics, [], 'the importer carries the whole config');
    const loaded = loadConfigText(imported.yaml, 'imported.yaml');
    assert.ok(loaded.ok, JSON.stringify(loaded));
    const l = own(await startLvsdNode(host(1), vrrpOptions(loaded.config)));
    for (const name of masters) await l.waitState(name, 'MASTER', 15_000);
  }
  await sleep(settleMs);
  await stopAll();
  return announcements(await cap.stop());
}

const seq = (s: Sent[], family: 4 | 6): string => s.filter((x) => x.family === family).map((x) => x.vip).join(' ');

/** Gaps (ms) between consecutive announcements of one family. */
function gaps(s: Sent[], family: 4 | 6): number[] {
  const f = s.filter((x) => x.family === family);
  return f.slice(1).map((x, i) => x.t - (f[i]?.t ?? 0));
}

function show(what: string, s: Sent[]): string {
  const t0 = s[0]?.t ?? 0;
  return `${what}: ${s.map((x) => `${x.family === 6 ? 'v6:' : ''}${x.vip}@${Math.round(x.t - t0)}`).join(' ')}`;
}

test('garp_group on the link: lvsd sends the GARPs in keepalived\'s order, one per garp_interval; the global vrrp_gna_interval does not reach an interface a group lists', { timeout: 120_000 }, async () => {
  // The second burst (3 s) finds the queue idle again; eth0's group sets no gna_interval, so NAs are not paced.
  const text = conf(['vrrp_garp_master_delay 3', 'vrrp_gna_interval 0.5'], ['garp_group {', ' garp_interval 0.5', ' interface eth0', '}']);
  const k = await measure('keepalived', text, 3000 + 4 * 500 + 800);
  const l = await measure('lvsd', text, 3000 + 4 * 500 + 800);
  const msg = `${show('keepalived', k)}\n${show('lvsd', l)}`;
  // keepalived 2.2.7: the first address at once, every address once more at most, in configuration order.
  assert.equal(seq(k, 4), '101 101 151 102 103 101 101 151 102 103', msg);
  assert.equal(seq(l, 4), seq(k, 4), msg);
  assert.equal(seq(l, 6), seq(k, 6), msg);
  assert.equal(seq(k, 6).split(' ').length, 30, msg);
  // One GARP per interval on the link (the capture's clock: a quarter of the gap left for its jitter).
  for (const [who, s] of [['keepalived', k], ['lvsd', l]] as const) {
    for (const g of gaps(s, 4)) assert.ok(g >= 0.75 * 500, `${who}: GARPs ${Math.round(g)} ms apart\n${msg}`);
  }
  console.log(msg);
});

test('vrrp_garp_interval / vrrp_gna_interval alone: every interface paced, ARPs and NAs each in their own queue, as keepalived does', { timeout: 120_000 }, async () => {
  const text = conf(['vrrp_garp_master_delay 0', 'vrrp_garp_interval 0.5', 'vrrp_gna_interval 0.4'], []);
  const k = await measure('keepalived', text, 4 * 500 + 800);
  const l = await measure('lvsd', text, 4 * 500 + 800);
  const msg = `${show('keepalived', k)}\n${show('lvsd', l)}`;
  assert.equal(seq(k, 4), '101 101 151 102 103', msg);
  assert.equal(seq(k, 6), '101 101 151 102', msg);
  assert.equal(seq(l, 4), seq(k, 4), msg);
  assert.equal(seq(l, 6), seq(k, 6), msg);
  for (const [who, s] of [['keepalived', k], ['lvsd', l]] as const) {
    for (const g of gaps(s, 4)) assert.ok(g >= 0.75 * 500, `${who}: GARPs ${Math.round(g)} ms apart\n${msg}`);
    for (const g of gaps(s, 6)) assert.ok(g >= 0.75 * 400, `${who}: NAs ${Math.round(g)} ms apart\n${msg}`);
  }
  console.log(msg);
});

test('garp_extra_if all: keepalived and lvsd refresh the first VIP of each other interface at the first advert after each interval', { timeout: 120_000 }, async () => {
  // eth1 is a veth pair inside d1; its far end eth1p is where the announcements are seen.
  await host(1).sh('ip link add eth1 type veth peer name eth1p && ip link set eth1 up && ip link set eth1p up && ip addr add 10.79.0.1/24 dev eth1');
  try {
    const text = [
      'global_defs {', ' router_id gg', ' vrrp_garp_master_delay 0', '}',
      'vrrp_instance X {', ' state BACKUP', ' interface eth0', ' virtual_router_id 81', ' priority 100', ' advert_int 0.2', ' version 3', ' garp_master_repeat 2', ' garp_extra_if all 2',
      ' virtual_ipaddress {', '  10.77.0.101/24', '  10.79.1.1/24 dev eth1', '  10.79.1.2/24 dev eth1', ' }', '}',
    ].join('\n') + '\n';
    const k = await measure('keepalived', text, 5000, ['d1', 'eth1p'], ['X']);
    const l = await measure('lvsd', text, 5000, ['d1', 'eth1p'], ['X']);
    const msg = `${show('keepalived', k)}\n${show('lvsd', l)}`;
    // The burst (2 rounds of both eth1 VIPs), then x1 alone at the first advert after each 2 s: twice in the 5 s after master.
    assert.equal(seq(k, 4), 'x1 x2 x1 x2 x1 x1', msg);
    assert.equal(seq(l, 4), seq(k, 4), msg);
    for (const [who, s] of [['keepalived', k], ['lvsd', l]] as const) {
      const periodic = s.slice(4);
      // From the transition; the first GARP comes once the VIPs are added, tens of ms later on a loaded host.
      assert.ok((periodic[0]?.t ?? 0) - (s[0]?.t ?? 0) >= 0.9 * 2000, `${who}: first refresh too early\n${msg}`);
      assert.ok((periodic[1]?.t ?? 0) - (periodic[0]?.t ?? 0) >= 0.9 * 2000, `${who}: refreshes too close\n${msg}`);
    }
    console.log(msg);
  } finally {
    await host(1).sh('ip link del eth1 2>/dev/null; true');
  }
});
