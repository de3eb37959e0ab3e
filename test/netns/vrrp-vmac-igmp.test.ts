// keepalived's IGMP/MLD handling for VMAC interfaces, lvsd against Debian's keepalived 2.2.7 in network
// namespaces: with use_vmac instances of both families running, the reports for the VRRP groups leave each
// director with its parent interface's MAC and never with a virtual MAC (a third namespace captures them),
// both daemons install the same tables, chains and rules, and delete them on stop; a crash leaves lvsd's,
// the next start replaces them; with disable_local_igmp only the ip6 table is there. docs/vrrp.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepalivedConf, startKeepalived, type Keepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, macOf, sleep, VIP4, VIP6 } from '../support/vrrp-lab.js';
import type { VrrpOptions } from '../../daemon/vrrp/options.js';

const VMAC4 = '00:00:5e:00:01:33';
const VMAC6 = '00:00:5e:00:02:34';

const suite = labSuite('vrrpig', 3, ['ip', 'keepalived', 'tcpdump', 'nft']);
const { host, own, stopAll } = suite;

async function kad(i: number, priority: number, globals: string[] = []): Promise<Keepalived> {
  const base = { interface: 'eth0', version: 3 as const, interval: 0.1, priority, extra: ['use_vmac'] };
  const inst: KeepalivedInstance[] = [
    { ...base, name: 'V4', vrid: 51, vips: [`${VIP4}/24`] },
    { ...base, name: 'V6', vrid: 52, vips: [`${VIP6}/64`] },
  ];
  return own(await startKeepalived(host(i), keepalivedConf(inst, 'kad', globals)));
}

async function lvsd(i: number, priority: number, extra: Partial<VrrpOptions> = {}): Promise<LvsdNode> {
  const base = { interface: 'eth0', version: 3, advertIntervalMs: 100, priority, vmac: {} } as const;
  return own(await startLvsdNode(host(i), {
    instances: [
      { ...base, name: 'V4', vrid: 51, vips: [`${VIP4}/24`] },
      { ...base, name: 'V6', vrid: 52, vips: [`${VIP6}/64`] },
    ],
    garp: { masterDelayMs: 0 },
    ...extra,
  }));
}

/** A verbose capture of IGMP and MLD (ICMPv6 behind a hop-by-hop header) that has begun listening. */
async function reportCapture(i: number): Promise<{ stop: () => Promise<string> }> {
  const child = host(i).spawn('tcpdump', ['-l', '-n', '-e', '-v', '-i', 'eth0', 'igmp or (ip6 and ip6[6] == 0)']);
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
  });
  return { stop: () => new Promise((r) => { child.once('exit', () => { r(out); }); child.kill('SIGINT'); }) };
}

interface Report { mac: string; kind: 'igmp' | 'mld'; groups: string[] }
/** One entry per captured IGMPv3 / MLDv2 report: the sender MAC and the groups it reports. */
function reports(capture: string): Report[] {
  return capture.split(/\n(?=\d\d:\d\d:\d\d\.)/).flatMap((p) => {
    const mac = /^\S+ ([0-9a-f:]{17}) >/.exec(p)?.[1];
    const kind = p.includes('igmp v3 report') ? 'igmp' : p.includes('multicast listener report v2') ? 'mld' : null;
    if (mac === undefined || kind === null) return [];
    return [{ mac, kind, groups: [...p.matchAll(/gaddr (\S+)/g)].map((m) => m[1] ?? '') }];
  });
}

/** The ruleset as `nft -j` has it, without handles and with the table's name made X: comparable across daemons. */
async function ruleset(i: number): Promise<unknown[]> {
  const j = JSON.parse((await host(i).exec('nft', ['-j', 'list', 'ruleset'])).stdout) as { nftables: Record<string, Record<string, unknown>>[] };
  return j.nftables.filter((o) => !('metainfo' in o)).map((o) => {
    const [kind = '?', body = {}] = Object.entries(o)[0] ?? [];
    const { handle: _h, ...rest } = body;
    return { [kind]: JSON.parse(JSON.stringify(rest).replace(/"(keepalived|lvsd_vrrp)"/g, '"X"')) as unknown };
  });
}
const tables = async (i: number): Promise<string> => (await host(i).exec('nft', ['list', 'tables'])).stdout.trim();

async function cleanup(): Promise<void> {
  await stopAll();
  for (const h of suite.lab.hosts) await h.sh('ip link del vrrp.51 2>/dev/null; ip link del vrrp.52 2>/dev/null; nft flush ruleset; true');
}

test('use_vmac, both families: IGMP and MLD reports for the VRRP groups leave keepalived and lvsd with the parent\'s MAC, none with a virtual MAC; the same ruleset on both; gone on stop', { timeout: 120_000 }, async () => {
  const cap = await reportCapture(3);
  const k = await kad(1, 150);
  const l = await lvsd(2, 100);
  await l.waitState('V4', 'BACKUP', 5000);
  // The kernel sends a join's report at once and again within a second (IGMPv3/MLDv2 unsolicited reports).
  await sleep(2500);
  const seen = reports(await cap.stop());
  for (const [i, who] of [[1, 'keepalived'], [2, 'lvsd']] as const) {
    const mac = await macOf(host(i));
    const mine = seen.filter((r) => r.mac === mac);
    assert.ok(mine.some((r) => r.kind === 'igmp' && r.groups.includes('224.0.0.18')), `${who}: an IGMP report for 224.0.0.18 from eth0's MAC ${mac}: ${JSON.stringify(seen)}`);
    assert.ok(mine.some((r) => r.kind === 'mld' && r.groups.includes('ff02::12')), `${who}: an MLD report for ff02::12 from eth0's MAC ${mac}: ${JSON.stringify(seen)}`);
  }
  assert.deepEqual(seen.filter((r) => r.mac === VMAC4 || r.mac === VMAC6), [], 'no report leaves with a virtual MAC');
  const theirs = await ruleset(1);
  assert.ok(theirs.length >= 7, JSON.stringify(theirs));
  assert.deepEqual(await ruleset(2), theirs, 'lvsd installs keepalived\'s tables, sets, chain and rules');
  assert.equal(await tables(2), 'table ip lvsd_vrrp\ntable ip6 lvsd_vrrp');
  await l.stop();
  assert.equal(await tables(2), '', 'lvsd deleted its tables on stop');
  await k.stop();
  assert.equal(await tables(1), '', 'keepalived deleted its tables on stop');
  await cleanup();
});

test('a crash leaves lvsd\'s tables (as keepalived\'s); the next start replaces them; disable_local_igmp leaves only the ip6 table, as keepalived', { timeout: 120_000 }, async () => {
  const l = await lvsd(2, 100);
  const before = await ruleset(2);
  await l.kill();
  assert.deepEqual(await ruleset(2), before, 'the crash left the tables');
  const l2 = await lvsd(2, 100, { disableLocalIgmp: true });
  assert.equal(await tables(2), 'table ip6 lvsd_vrrp', 'the ip table a crash left is gone; the ip6 one is rewritten');
  const k = await kad(1, 150, ['disable_local_igmp']);
  await k.waitForLog(/Entering (BACKUP|MASTER) STATE/, 5000);
  assert.equal(await tables(1), 'table ip6 keepalived');
  assert.deepEqual(await ruleset(2), await ruleset(1));
  await l2.stop();
  assert.equal(await tables(2), '');
  await cleanup();
});
