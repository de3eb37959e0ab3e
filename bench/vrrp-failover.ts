// Failover time, keepalived and lvsd side by side in one run, on namespaces of this machine.
//   npx tsc -p tsconfig.json && node dist/bench/vrrp-failover.js [--runs 3] [--only 0.1,0.02] [--soak SECONDS]
// For each advert interval (v2 1 s, v3 1 s, v3 0.1 s, v3 0.02 s) and each pair (master → backup:
// keepalived → keepalived, lvsd → lvsd, lvsd → keepalived, keepalived → lvsd), backup priority 100:
//   graceful: SIGTERM to the master → VIP on the backup (also from the priority-0 advert on the wire);
//   crash:    SIGKILL to the master → VIP on the backup, measured from the last master advert seen.
// Prints medians, the RFC's Skew_Time / Master_Down_Interval, and the ratio lvsd / keepalived.
// --soak S: an lvsd pair at 0.02 s for S seconds while CPU hogs load every core and the master's main
// thread is blocked for 200 ms every second, next to a keepalived pair (VRID 52) under the same load;
// counts spurious transitions of both. --hogs N (default: one per core), --rt N runs lvsd's VRRP thread SCHED_RR N. Never fails on timing.
import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { createLab, lvsdOptions, sleep, VIP4, waitFor, type Lab } from '../test/support/vrrp-lab.js';
import { startLvsdNode } from '../test/support/vrrp-node.js';
import { keepalivedConf, startKeepalived } from '../test/support/keepalived.js';
import { masterDownIntervalMs, skewTimeMs } from '../daemon/vrrp/machine.js';
import type { Netns } from '../test/support/netns.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RUNS = Number(opt('runs') ?? 3);
const ONLY = opt('only')?.split(',');
const SOAK = Number(opt('soak') ?? 0);
const HOGS = opt('hogs') === undefined ? cpus().length : Number(opt('hogs'));
const RT = opt('rt') === undefined ? undefined : Number(opt('rt'));

type Impl = 'keepalived' | 'lvsd';
interface Setting {
  label: string;
  version: 2 | 3;
  interval: number; // seconds
}
const SETTINGS = ([
  { label: 'v2 1s', version: 2, interval: 1 },
  { label: 'v3 1s', version: 3, interval: 1 },
  { label: 'v3 0.1s', version: 3, interval: 0.1 },
  { label: 'v3 0.02s', version: 3, interval: 0.02 },
] as Setting[]).filter((s) => ONLY === undefined || ONLY.some((o) => s.label.endsWith(` ${o}s`) || s.label === o));
const PAIRS: [Impl, Impl][] = [
  ['keepalived', 'keepalived'],
  ['lvsd', 'lvsd'],
  ['lvsd', 'keepalived'],
  ['keepalived', 'lvsd'],
];

interface Runner {
  stop(): Promise<void>;
  kill(): Promise<void>;
}

async function startImpl(impl: Impl, ns: Netns, priority: number, s: Setting): Promise<Runner> {
  if (impl === 'keepalived') {
    return startKeepalived(ns, keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority, version: s.version, interval: s.interval, vips: [`${VIP4}/24`] }]));
  }
  return startLvsdNode(ns, lvsdOptions({ priority, version: s.version, advertIntervalMs: Math.round(s.interval * 1000) }));
}

function startWatcher(ns: Netns, ifindex: number, master: string): { child: ChildProcess; vip: Promise<{ at: number; lastAdvertAt: number; prio0At: number }>; ready: Promise<void> } {
  const child = ns.spawn(process.execPath, [fileURLToPath(new URL('./vrrp-watch.js', import.meta.url)), JSON.stringify({ ifname: 'eth0', ifindex, vip: VIP4, master })]);
  let buf = '';
  let onReady: () => void = () => undefined;
  let onVip: (v: { at: number; lastAdvertAt: number; prio0At: number }) => void = () => undefined;
  const ready = new Promise<void>((r) => (onReady = r));
  const vip = new Promise<{ at: number; lastAdvertAt: number; prio0At: number }>((r) => (onVip = r));
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const o = JSON.parse(buf.slice(0, nl)) as { kind: string; at: number; lastAdvertAt: number; prio0At: number };
      buf = buf.slice(nl + 1);
      if (o.kind === 'ready') onReady();
      if (o.kind === 'vip') onVip(o);
    }
  });
  return { child, vip, ready };
}

const now = (): number => performance.timeOrigin + performance.now();
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2;
};

async function clean(lab: Lab): Promise<void> {
  for (const h of lab.hosts) await h.sh(`ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
}

async function oneRun(lab: Lab, ifindex2: number, master: Impl, backup: Impl, s: Setting, kind: 'graceful' | 'crash'): Promise<{ fromSignal: number; fromWire: number }> {
  const [h1, h2] = [lab.hosts[0], lab.hosts[1]];
  if (h1 === undefined || h2 === undefined) throw new Error('lab');
  await clean(lab);
  const m = await startImpl(master, h1, 150, s);
  let b: Runner | null = null;
  const w = startWatcher(h2, ifindex2, lab.ip4(1));
  try {
    await waitFor('VIP on the master', async () => (await lab.holders(VIP4)).includes('d1'), 15_000, 20);
    b = await startImpl(backup, h2, 100, s);
    await w.ready;
    await sleep(Math.max(500, s.interval * 3000));
    if ((await lab.holders(VIP4)).join() !== 'd1') throw new Error(`before failover the VIP is on ${(await lab.holders(VIP4)).join()}`);
    const t0 = now();
    if (kind === 'graceful') await m.stop();
    else await m.kill();
    const v = await Promise.race([w.vip, sleep(20_000).then(() => null)]);
    if (v === null) throw new Error('backup never took the VIP');
    return { fromSignal: v.at - t0, fromWire: kind === 'graceful' ? v.at - v.prio0At : v.at - v.lastAdvertAt };
  } finally {
    w.child.kill('SIGKILL');
    await m.kill();
    await b?.kill();
  }
}

async function soak(lab: Lab, seconds: number): Promise<void> {
  const s: Setting = { label: 'v3 0.02s', version: 3, interval: 0.02 };
  await clean(lab);
  const [h1, h2] = [lab.hosts[0], lab.hosts[1]];
  if (h1 === undefined || h2 === undefined) throw new Error('lab');
  const rt = RT === undefined ? {} : { realtimePriority: RT };
  const m = await startLvsdNode(h1, lvsdOptions({ priority: 150, advertIntervalMs: 20 }, rt));
  await m.waitState('VI_1', 'MASTER', 5000);
  const b = await startLvsdNode(h2, lvsdOptions({ priority: 100, advertIntervalMs: 20 }, rt));
  // The anchor under the same load at the same time: a keepalived pair on VRID 52.
  const kconf = (p: number): string => keepalivedConf([{ name: 'VK', interface: 'eth0', vrid: 52, priority: p, version: 3, interval: 0.02, vips: ['10.77.0.200/24'] }]);
  const km = await startKeepalived(h1, kconf(150));
  await km.waitForLog(/Entering MASTER STATE/, 5000);
  const kb = await startKeepalived(h2, kconf(100));
  await sleep(1000);
  const kCount = (): number => (km.log().match(/Entering (MASTER|BACKUP|FAULT) STATE/g)?.length ?? 0) + (kb.log().match(/Entering (MASTER|BACKUP|FAULT) STATE/g)?.length ?? 0);
  const kBefore = kCount();
  const hogs = Array.from({ length: HOGS }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  const blocker = setInterval(() => {
    m.command('block 200');
  }, 1000);
  const t0 = now();
  const before = m.transitions.length + b.transitions.length;
  console.log(`soak: lvsd pair at ${s.label}, ${hogs.length} CPU hogs, master main thread blocked 200 ms/s, ${seconds} s …`);
  await sleep(seconds * 1000);
  clearInterval(blocker);
  for (const h of hogs) h.kill('SIGKILL');
  const spurious = m.transitions.length + b.transitions.length - before;
  const snap = await m.snapshot();
  const bsnap = await b.snapshot();
  console.log(
    `soak: ${Math.round((now() - t0) / 1000)} s${RT === undefined ? '' : `, lvsd SCHED_RR ${RT}`}: lvsd spurious transitions ${spurious}, keepalived (same load, same time) ${kCount() - kBefore}; ` +
      `lvsd worker loop delay p99/max: master ${snap.loopDelayMs.p99}/${snap.loopDelayMs.max} ms, backup ${bsnap.loopDelayMs.p99}/${bsnap.loopDelayMs.max} ms`,
  );
  await m.kill();
  await b.kill();
  await km.kill();
  await kb.kill();
}

async function main(): Promise<void> {
  const lab = await createLab('vrrpbn', 2);
  try {
    const h2 = lab.hosts[1];
    if (h2 === undefined) throw new Error('lab');
    const ifindex2 = Number((await h2.exec('cat', ['/sys/class/net/eth0/ifindex'])).stdout.trim());
    if (SOAK > 0) {
      await soak(lab, SOAK);
      return;
    }
    console.log(`VRRP failover, backup priority 100, ${RUNS} runs each, medians in ms (wire = from the master's priority-0 advert / last advert seen by the backup)`);
    for (const s of SETTINGS) {
      const cs = Math.round(s.interval * 100);
      console.log(`\n== ${s.label}: Skew_Time ${skewTimeMs(100, cs).toFixed(1)} ms, Master_Down_Interval ${masterDownIntervalMs(100, cs).toFixed(1)} ms`);
      const results = new Map<string, { graceful: number; crash: number }>();
      for (const [mi, bi] of PAIRS) {
        const row: Record<'graceful' | 'crash', { fromSignal: number[]; fromWire: number[] }> = { graceful: { fromSignal: [], fromWire: [] }, crash: { fromSignal: [], fromWire: [] } };
        for (const kind of ['graceful', 'crash'] as const) {
          for (let r = 0; r < RUNS; r++) {
            try {
              const x = await oneRun(lab, ifindex2, mi, bi, s, kind);
              row[kind].fromSignal.push(x.fromSignal);
              row[kind].fromWire.push(x.fromWire);
            } catch (e) {
              console.log(`  ${mi} → ${bi} ${kind} run ${r + 1}: ${e instanceof Error ? e.message : String(e)}`);
            }
          }
        }
        const g = median(row.graceful.fromWire);
        const c = median(row.crash.fromWire);
        results.set(`${mi}>${bi}`, { graceful: g, crash: c });
        console.log(
          `  ${`${mi} → ${bi}`.padEnd(25)} graceful: signal→VIP ${median(row.graceful.fromSignal).toFixed(1).padStart(7)}  wire→VIP ${g.toFixed(1).padStart(7)}   crash: kill→VIP ${median(row.crash.fromSignal).toFixed(1).padStart(7)}  last advert→VIP ${c.toFixed(1).padStart(7)}  (MDI ${c - masterDownIntervalMs(100, cs) >= 0 ? '+' : ''}${(c - masterDownIntervalMs(100, cs)).toFixed(1)})`,
        );
      }
      const ka = results.get('keepalived>keepalived');
      const lv = results.get('lvsd>lvsd');
      if (ka !== undefined && lv !== undefined) {
        console.log(`  ratio lvsd/keepalived: graceful ${(lv.graceful / ka.graceful).toFixed(2)}, crash ${(lv.crash / ka.crash).toFixed(2)}`);
      }
    }
  } finally {
    lab.destroy();
  }
}

await main();
// Child pipes of stopped peers may keep the loop alive; the figures are printed.
process.exit(0);
