// Where one wrr change's apply() spends its wall time, at each size: timestamps around every message to the
// netlink worker and every nft call inside the apply, the scheduler's counters of this process's threads and
// of its child processes (the worker; /proc/PID/task/TID/schedstat: on a CPU, runnable but waiting for one),
// and the garbage collector's pauses that fall inside the apply. Two orders: changes handed with the changed
// services back to back, and alternated with the same change handed without them (the walk; what
// nft-change.ts does). And the full program's calls of nft (processes started: listing, `nft -f` of the fresh
// tables' structure: nft.applyFile) and of the netlink worker (their elements).
// Measured this way (stop 29, second session): the wall a change gains from 100 to 5,000 services is the worker's CPU, i.e.
// the kernel's commit in its sendmsg (perf: nf_tables_commit's walk over every chain of every table, and the
// validation of the changed shard's table); this process's own CPU stays flat.
//
//   node --expose-gc dist/bench/nft-apply-steps.js   (BENCH_NFT_SIZES=100,5000  BENCH_NFT_ROUNDS=21;
//     PROBE_GC=1: a full collection before each apply; PROBE_PERF=/tmp/x: `perf record -g` of the worker
//     over the last size's back-to-back changes, into /tmp/x-SIZE.data)
import { PerformanceObserver } from 'node:perf_hooks';
import { Topology, removeStaleNamespaces } from '../test/support/netns.js';
import { createNftablesDataplane } from '../daemon/dataplane/nftables/shards.js';
import { netfilterWriter } from '../daemon/dataplane/nftables/nl-writer.js';
import { NftShell } from '../daemon/dataplane/nftables/nft-shell.js';
import type { ChangedServices, DesiredTable } from '../daemon/dataplane/types.js';
import { bigTable } from './nft-big-table.js';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { workerPids } from './nft-worker-cpu.js';
import { usageOf, parseSchedstat, runByThread, type Usage } from './proc-usage.js';

/** Busy and idle ms of all CPUs since boot (/proc/stat's cpu line, in USER_HZ ticks: coarse, summed over rounds). */
function cpuTicks(): { busy: number; idle: number } {
  const f = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: f.reduce((a, b) => a + b, 0) - idle, idle };
}
const mainThread = (): Usage => parseSchedstat(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8'));
const threadName = (key: string): string => { try { return readFileSync(`/proc/${key.replace('/', '/task/')}/comm`, 'utf8').trim(); } catch { return '?'; } };

const SIZES = (process.env.BENCH_NFT_SIZES ?? '100,5000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_NFT_ROUNDS ?? 21);
const TABLE = 'lvsdbench';

/** Wall ms spent inside patched calls during the current apply, by name. */
let inside = new Map<string, number>();
let calls = new Map<string, number>();
function wrap(proto: Record<string, unknown>, name: string, label: string): void {
  const orig = proto[name] as (...a: unknown[]) => Promise<unknown>;
  proto[name] = async function (this: unknown, ...a: unknown[]) {
    const t0 = performance.now();
    try {
      return await orig.apply(this, a);
    } finally {
      inside.set(label, (inside.get(label) ?? 0) + performance.now() - t0);
      calls.set(label, (calls.get(label) ?? 0) + 1);
    }
  };
}
const probe = netfilterWriter('probe');
wrap(Object.getPrototypeOf(probe) as Record<string, unknown>, 'send', 'netlink');
probe.close();
for (const m of ['apply', 'applyFile', 'listTable', 'listTables', 'read', 'tool']) wrap(NftShell.prototype as unknown as Record<string, unknown>, m, `nft.${m}`);

const gcs: { start: number; end: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
}).observe({ entryTypes: ['gc'] });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const diff = (a: Usage, b: Usage): { run: number; wait: number } => ({ run: (b.runNs - a.runNs) / 1e6, wait: (b.waitNs - a.waitNs) / 1e6 });

async function main(): Promise<void> {
  removeStaleNamespaces();
  const topo = await Topology.create('nftstep');
  try {
    const host = await topo.addHost({ name: 'dir', addresses: ['10.9.0.2/24'] });
    for (const size of SIZES) {
      const dp = createNftablesDataplane({ netns: host.name, table: TABLE, driftCheckIntervalMs: 3_600_000 });
      const kept = bigTable(size, 10);
      inside = new Map();
      calls = new Map();
      const f0 = performance.now();
      const fc0 = process.cpuUsage();
      await dp.apply(kept);
      const fc = process.cpuUsage(fc0);
      console.log(`S=${String(size).padStart(5)} full program ${(performance.now() - f0).toFixed(1)} ms, this process's CPU ${((fc.user + fc.system) / 1000).toFixed(1)} ms; inside it: ` + [...inside].map(([k, v]) => `${k} ×${calls.get(k) ?? 0} ${v.toFixed(1)} ms`).join('  '));
      let last: DesiredTable = kept;
      for (const order of ['hinted only', 'alternated with the walk'] as const) {
        const rows: Record<string, number>[] = [];
        const byName = new Map<string, number>();
        let sysBusy = 0;
        let sysIdle = 0;
        const wantPerf = process.env.PROBE_PERF !== undefined && size === SIZES[SIZES.length - 1] && order === 'hinted only';
        let perf: ReturnType<typeof spawn> | undefined;
        for (let i = 0; i < 2 * ROUNDS; i++) {
          const table = { services: [...bigTable(1, 10, i).services, ...kept.services.slice(1)] };
          const first = table.services[0];
          const hinted = order === 'hinted only' || i % 2 === 0;
          const changed: ChangedServices | undefined = hinted && first !== undefined ? { since: last, services: new Map([[first.id, first]]) } : undefined;
          // PROBE_GC (node --expose-gc): a full collection before each apply, outside its timing: what is left
          // of the apply's wall without the collector's pending work from what came before.
          if (process.env.PROBE_GC !== undefined) (globalThis as { gc?: () => void }).gc?.();
          const kids = workerPids();
          if (wantPerf && perf === undefined && kids[0] !== undefined) {
            perf = spawn('perf', ['record', '-F', '10000', '-g', '-o', `${process.env.PROBE_PERF ?? ''}-${size}.data`, '-p', String(kids[0])], { stdio: 'inherit' });
            await new Promise((r) => setTimeout(r, 500));
          }
          const byThread0 = runByThread([process.pid]);
          const th0 = mainThread();
          const s0 = cpuTicks();
          const m0 = usageOf([process.pid]);
          const k0 = usageOf(kids);
          const c0 = process.cpuUsage();
          inside = new Map();
          const t0 = performance.now();
          await dp.apply(table, changed);
          const t1 = performance.now();
          const c = process.cpuUsage(c0);
          const k = diff(k0, usageOf(kids));
          const m = diff(m0, usageOf([process.pid]));
          const th = diff(th0, mainThread());
          for (const [key, ns] of runByThread([process.pid])) {
            const name = threadName(key);
            if (hinted) byName.set(name, (byName.get(name) ?? 0) + (ns - (byThread0.get(key) ?? ns)) / 1e6);
          }
          const s1 = cpuTicks();
          sysBusy += s1.busy - s0.busy;
          sysIdle += s1.idle - s0.idle;
          last = table;
          if (!hinted) continue;
          const gc = gcs.filter((g) => g.end > t0 && g.start < t1).reduce((n, g) => n + Math.min(g.end, t1) - Math.max(g.start, t0), 0);
          rows.push({ wall: t1 - t0, cpu: (c.user + c.system) / 1000, mainThreadRun: th.run, mainThreadWait: th.wait, otherThreadsRun: m.run - th.run, mainWait: m.wait, kidsRun: k.run, kidsWait: k.wait, gc, ...Object.fromEntries(inside) });
        }
        if (perf !== undefined) {
          const p = perf;
          await new Promise((r) => {
            p.on('exit', r);
            p.kill('SIGINT');
          });
        }
        const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
        console.log(`S=${String(size).padStart(5)} ${order.padEnd(24)} medians of ${rows.length}: ` + keys.map((key) => `${key} ${median(rows.map((r) => r[key] ?? 0)).toFixed(3)}`).join('  '));
        console.log(`S=${String(size).padStart(5)} ${order.padEnd(24)} this process's threads, ms on a CPU summed over those applies: ` + [...byName].filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v.toFixed(1)}`).join('  '));
        console.log(`S=${String(size).padStart(5)} ${order.padEnd(24)} all CPUs over those applies (and the walks between): busy ${sysBusy} ticks, idle ${sysIdle} ticks`);
        console.log(`S=${String(size).padStart(5)} ${order.padEnd(24)} each wall: ${rows.map((r) => (r.wall ?? 0).toFixed(2)).join(' ')}`);
      }
      await dp.apply({ services: [] });
      await dp.close();
    }
  } finally {
    topo.destroy();
  }
}

await main();
