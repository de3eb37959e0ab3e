// VRRP at scale, lvsd and keepalived 2.2.7 in one run (issue #15 item 6): 255 VRIDs on one link and 500
// instances over 250 links (veth pairs standing in for VLANs: this kernel has no 802.1Q). For each layout and each way round (lvsd master with keepalived
// backing up, then keepalived master with lvsd backing up) it prints, over a window of adverts at 1 s:
// the CPU (cores) and RSS (MiB, all processes of the daemon) of both, spurious transitions, and the time
// from a crash of the master until the other side is master of every instance; then the ratio
// lvsd / keepalived of CPU and RSS in the same role, lvsd's RSS per process (its main process, its VRRP
// engine), and the RSS each adds per instance (1 VRID against 255, same role). Never fails on a figure.
//   npx tsc -p tsconfig.json && node dist/bench/vrrp-scale.js [--window 20] [--only 255|500]
import { namespaceUsage, type ProcessRss } from './ns-usage.js';
import { enteredState, keepalivedConf, startKeepalived, type Keepalived } from '../test/support/keepalived.js';
import type { Netns } from '../test/support/netns.js';
import { createLab, sleep, waitFor, type Lab } from '../test/support/vrrp-lab.js';
import { startLvsdNode, type LvsdNode } from '../test/support/vrrp-node.js';
import { addScaleLinks, scaleInstances, type ScaleInstance } from '../test/support/vrrp-scale.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const WINDOW_S = Number(opt('window') ?? 20);
const ONLY = opt('only');

interface Side {
  impl: 'lvsd' | 'keepalived';
  ns: Netns;
  masters(): number;
  transitions(): number;
  kill(): Promise<void>;
}

async function start(impl: 'lvsd' | 'keepalived', ns: Netns, instances: ScaleInstance[], priority: number): Promise<Side> {
  if (impl === 'lvsd') {
    const n: LvsdNode = await startLvsdNode(ns, {
      instances: instances.map((i) => ({ name: i.name, interface: i.interface, vrid: i.vrid, version: 3 as const, priority, advertIntervalMs: 1000, vips: [i.vip] })),
      garp: { masterDelayMs: 0 },
    }, 120_000);
    return { impl, ns, masters: () => instances.filter((i) => n.state(i.name) === 'MASTER').length, transitions: () => n.transitions.length, kill: () => n.kill() };
  }
  const k: Keepalived = await startKeepalived(ns, keepalivedConf(instances.map((i) => ({ name: i.name, interface: i.interface, vrid: i.vrid, priority, version: 3, interval: 1, vips: [i.vip] })), `kad${priority}`));
  // keepalived logs one line per state entered: MASTER now means entered MASTER and not left it since.
  const masters = (): number => {
    const log = k.log();
    let n = 0;
    for (const i of instances) {
      const m = log.lastIndexOf(`(${i.name}) Entering MASTER STATE`);
      if (m >= 0 && m > log.lastIndexOf(`(${i.name}) Entering BACKUP STATE`) && m > log.lastIndexOf(`(${i.name}) Entering FAULT STATE`)) n++;
    }
    return n;
  };
  return { impl, ns, masters, transitions: () => enteredState(k.log(), 'MASTER').size + enteredState(k.log(), 'BACKUP').size, kill: () => k.kill() };
}

interface Row { layout: string; master: string; backup: string; cpu: [number, number]; rss: [number, number]; procs: [ProcessRss[], ProcessRss[]]; spurious: [number, number]; failoverS: number }

async function run(lab: Lab, layout: string, instances: ScaleInstance[], masterImpl: 'lvsd' | 'keepalived'): Promise<Row> {
  const [d1, d2] = lab.hosts;
  if (d1 === undefined || d2 === undefined) throw new Error('lab without two hosts');
  const backupImpl = masterImpl === 'lvsd' ? 'keepalived' : 'lvsd';
  const m = await start(masterImpl, d1, instances, 150);
  await waitFor(`${masterImpl} master of all`, () => m.masters() === instances.length, 60_000, 250);
  const b = await start(backupImpl, d2, instances, 100);
  await sleep(5000); // the backup has heard every instance's adverts
  const [m0, b0, tm0, tb0] = [await namespaceUsage(d1), await namespaceUsage(d2), m.transitions(), b.transitions()];
  const t0 = performance.now();
  await sleep(WINDOW_S * 1000);
  const wall = (performance.now() - t0) / 1000;
  const [m1, b1] = [await namespaceUsage(d1), await namespaceUsage(d2)];
  const spurious: [number, number] = [m.transitions() - tm0, b.transitions() - tb0];
  const c0 = performance.now();
  await m.kill();
  await waitFor(`${backupImpl} master of all after the crash`, () => b.masters() === instances.length, 120_000, 100);
  const failoverS = (performance.now() - c0) / 1000;
  await b.kill();
  // A crashed daemon leaves its VIPs (10.100.x.y): the next run starts clean.
  for (const h of lab.hosts) await h.sh('ip -4 addr flush to 10.96.0.0/11 2>/dev/null; true');
  return { layout, master: masterImpl, backup: backupImpl, cpu: [(m1.cpuS - m0.cpuS) / wall, (b1.cpuS - b0.cpuS) / wall], rss: [m1.rssMiB, b1.rssMiB], procs: [m1.processes, b1.processes], spurious, failoverS };
}

const f = (n: number, d = 3): string => n.toFixed(d);
const lab = await createLab('vrrpsb', 2);
try {
  const layouts: [string, ScaleInstance[]][] = [];
  // One VRID first: the fixed cost of each daemon, against which 255 gives the cost of an instance.
  if (ONLY === undefined || ONLY === '255') layouts.push(['1 VRID', scaleInstances({ vlans: 0, perLink: 1 })], ['255 VRIDs on one link', scaleInstances({ vlans: 0, perLink: 255 })]);
  if (ONLY === undefined || ONLY === '500') {
    const inst = scaleInstances({ vlans: 250, perLink: 2 });
    const [d1, d2] = lab.hosts;
    if (d1 === undefined || d2 === undefined) throw new Error('lab without two hosts');
    await addScaleLinks(d1, d2, inst);
    layouts.push(['500 instances over 250 links (veth pairs standing in for VLANs)', inst]);
  }
  process.stdout.write(`vrrp-scale: v3, advert 1 s, ${WINDOW_S} s windows, both daemons in namespaces of this host\n`);
  const rows: Row[] = [];
  for (const [name, inst] of layouts) {
    for (const masterImpl of ['lvsd', 'keepalived'] as const) {
      const r = await run(lab, name, inst, masterImpl);
      rows.push(r);
      process.stdout.write(`${name}, ${r.master} master / ${r.backup} backup: cpu ${f(r.cpu[0])} / ${f(r.cpu[1])} cores, rss ${f(r.rss[0], 1)} / ${f(r.rss[1], 1)} MiB, spurious transitions ${r.spurious[0]} / ${r.spurious[1]}, crash → ${r.backup} master of all ${inst.length} in ${f(r.failoverS, 2)} s\n`);
      const lvsdProcs = r.procs[r.master === 'lvsd' ? 0 : 1].map((p) => `${p.name} ${f(p.rssMiB, 1)}`).join(', ');
      process.stdout.write(`  lvsd's RSS by process (MiB): ${lvsdProcs}\n`);
      process.stdout.write(`JSON ${JSON.stringify(r)}\n`);
    }
    const [lm, km] = [rows.find((r) => r.layout === name && r.master === 'lvsd'), rows.find((r) => r.layout === name && r.master === 'keepalived')];
    if (lm && km) {
      // In the run keepalived mastered, lvsd was the backup, and the other way round.
      process.stdout.write(`  ${name}, lvsd / keepalived: as master cpu ${f(lm.cpu[0] / km.cpu[0], 2)}×, rss ${f(lm.rss[0] / km.rss[0], 2)}×; as backup cpu ${f(km.cpu[1] / lm.cpu[1], 2)}×, rss ${f(km.rss[1] / lm.rss[1], 2)}×; takeover of all after a crash ${f(km.failoverS, 2)} s vs ${f(lm.failoverS, 2)} s (${f(km.failoverS / lm.failoverS, 2)}×)\n`);
    }
  }
  // RSS added per instance, 1 → 255 VRIDs, each daemon in each role.
  const one = rows.filter((r) => r.layout === '1 VRID');
  const many = rows.filter((r) => r.layout === '255 VRIDs on one link');
  for (const [role, i] of [['master', 0], ['backup', 1]] as const) {
    const per = (impl: string): number | undefined => {
      const [a, b] = [one.find((r) => (i === 0 ? r.master : r.backup) === impl), many.find((r) => (i === 0 ? r.master : r.backup) === impl)];
      return a && b ? ((b.rss[i] - a.rss[i]) * 1024) / 254 : undefined;
    };
    const [l, k] = [per('lvsd'), per('keepalived')];
    const at1 = (impl: string): string => f(one.find((r) => (i === 0 ? r.master : r.backup) === impl)?.rss[i] ?? NaN, 1);
    if (l !== undefined && k !== undefined) process.stdout.write(`per instance as ${role}: lvsd ${f(l, 0)} KiB, keepalived ${f(k, 0)} KiB (${f(l / k, 1)}×); at 1 VRID lvsd ${at1('lvsd')} MiB, keepalived ${at1('keepalived')} MiB\n`);
  }
} finally {
  lab.destroy();
}
