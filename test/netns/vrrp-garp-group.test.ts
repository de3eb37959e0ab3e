// GARP groups (keepalived garp_group, vrrp_garp_interval / vrrp_gna_interval): the gratuitous ARPs and
// unsolicited NAs of every instance on a link share one queue per family. The same keepalived.conf runs
// under keepalived 2.2.7 and then, through the importer, under lvsd, on the same director; a capture on
// the segment gives the order of every announcement and the gaps between them, and lvsd's must be
// keepalived's. Six instances become master at once: V1 (two VIPs), V2, V3, V4 (IPv4), W1 (two VIPs),
// W2 (IPv6), each with garp_master_repeat 5.
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
  ['V4', 64, ['10.77.0.104/24']],
  ['W1', 71, ['fd77::101/64', 'fd77::151/64']],
  ['W2', 72, ['fd77::102/64']],
];

function conf(globals: string[], top: string[]): string {
  const lines = ['global_defs {', ' router_id gg', ...globals.map((g) => ` ${g}`), '}', ...top];
  for (const [name, vrid, vips] of INSTANCES) {
    lines.push(`vrrp_instance ${name} {`, ' state BACKUP', ' interface eth0', ` virtual_router_id ${vrid}`, ' priority 100', ' advert_int 0.5', ' version 3', ' garp_master_repeat 5');
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
    const arp = /Request who-has (10\.77\.0\.(\d+)) .*tell \1,/.exec(line);
    if (arp !== null && Number(arp[2]) > 100) out.push({ t, family: 4, vip: arp[2] ?? '' });
    const na = /neighbor advertisement, tgt is fd77::(\d+),/.exec(line);
    if (na !== null && Number(na[1]) > 100) out.push({ t, family: 6, vip: na[1] ?? '' });
  }
  return out;
}

/** Runs the config under one daemon with a capture on the segment until the last announcement is due. */
async function measure(daemon: 'keepalived' | 'lvsd', text: string, settleMs: number): Promise<Sent[]> {
  const cap = suite.lab.topo.capture('d2', 'eth0', 'arp or icmp6');
  await sleep(500);
  if (daemon === 'keepalived') {
    const k = own(await startKeepalived(host(1), text));
    await waitFor('six masters (keepalived)', () => (k.log().match(/Entering MASTER STATE/g)?.length ?? 0) >= INSTANCES.length, 15_000);
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
    for (const [name] of INSTANCES) await l.waitState(name, 'MASTER', 15_000);
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
  const text = conf(['vrrp_garp_master_delay 3', 'vrrp_gna_interval 0.25'], ['garp_group {', ' garp_interval 0.3', ' interface eth0', '}']);
  const k = await measure('keepalived', text, 3000 + 6 * 300 + 800);
  const l = await measure('lvsd', text, 3000 + 6 * 300 + 800);
  const msg = `${show('keepalived', k)}\n${show('lvsd', l)}`;
  // keepalived 2.2.7: the first address at once, every address once more at most, in configuration order.
  assert.equal(seq(k, 4), '101 101 151 102 103 104 101 101 151 102 103 104', msg);
  assert.equal(seq(l, 4), seq(k, 4), msg);
  assert.equal(seq(l, 6), seq(k, 6), msg);
  assert.equal(seq(k, 6).split(' ').length, 30, msg);
  // One GARP per interval on the link (the capture's clock: a quarter of the gap left for its jitter).
  for (const [who, s] of [['keepalived', k], ['lvsd', l]] as const) {
    for (const g of gaps(s, 4)) assert.ok(g >= 0.75 * 300, `${who}: GARPs ${Math.round(g)} ms apart\n${msg}`);
  }
  console.log(msg);
});

test('vrrp_garp_interval / vrrp_gna_interval alone: every interface paced, ARPs and NAs each in their own queue, as keepalived does', { timeout: 120_000 }, async () => {
  const text = conf(['vrrp_garp_master_delay 0', 'vrrp_garp_interval 0.3', 'vrrp_gna_interval 0.25'], []);
  const k = await measure('keepalived', text, 6 * 300 + 800);
  const l = await measure('lvsd', text, 6 * 300 + 800);
  const msg = `${show('keepalived', k)}\n${show('lvsd', l)}`;
  assert.equal(seq(k, 4), '101 101 151 102 103 104', msg);
  assert.equal(seq(k, 6), '101 101 151 102', msg);
  assert.equal(seq(l, 4), seq(k, 4), msg);
  assert.equal(seq(l, 6), seq(k, 6), msg);
  for (const [who, s] of [['keepalived', k], ['lvsd', l]] as const) {
    for (const g of gaps(s, 4)) assert.ok(g >= 0.75 * 300, `${who}: GARPs ${Math.round(g)} ms apart\n${msg}`);
    for (const g of gaps(s, 6)) assert.ok(g >= 0.75 * 250, `${who}: NAs ${Math.round(g)} ms apart\n${msg}`);
  }
  console.log(msg);
});
