// Health checking at scale. For N real servers (one cheap target process listening on N ports) and
// TCP / HTTP checks at a 1 s interval, it measures lvsd's checker: checks/s achieved vs configured,
// CPU (cores) and RSS, detection latency of targets killed mid-run (p50/p99/max), the checker's
// event-loop delay and the timer jitter of a worker thread standing in for the VRRP engine — idle
// (before the targets are loaded, same process, same run) and while the checks run.
//
// As root it puts the checker and the targets in two namespaces joined by veth (like the keepalived
// measurement in notes/health.md); otherwise (or with --loopback) both use 127.0.0.1.
// keepalived's checker needs IPVS, so its side-by-side runs in the QEMU guest (docs/health.md); its
// figures from notes/health.md are printed as a reference, not as a same-run anchor.
//
//   node dist/bench/health-scale.js [--sizes 100,1000,10000] [--types tcp,http] [--seconds 10]
//        [--kills 20] [--interval 1000] [--timeout 1000] [--fall 1] [--retry 0] [--concurrency 1000] [--loopback]
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Topology, type Netns } from '../test/support/netns.js';

const here = dirname(fileURLToPath(import.meta.url));

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const sizes = arg('sizes', '100,1000,10000').split(',').map(Number);
const types = arg('types', 'tcp,http').split(',') as ('tcp' | 'http')[];
const seconds = Number(arg('seconds', '10'));
const kills = Number(arg('kills', '20'));
const intervalMs = Number(arg('interval', '1000'));
const timeoutMs = Number(arg('timeout', '1000'));
const fall = Number(arg('fall', '1'));
const retry = Number(arg('retry', '0'));
const concurrency = Number(arg('concurrency', '1000'));
const useNetns = !process.argv.includes('--loopback') && process.getuid?.() === 0;
const BASE_PORT = 10000;

/** keepalived 2.2.7 in the QEMU guest (notes/health.md): cores, RSS MiB, checks/s, detection p50/max s. */
const KEEPALIVED_GUEST: Record<string, { cores: number; rss: number; rate: number; p50: number; max: number }> = {
  'http 100': { cores: 0.2, rss: 3.1, rate: 99, p50: 1.51, max: 1.98 },
  'tcp 100': { cores: 0.25, rss: 3.0, rate: 100, p50: 1.55, max: 1.95 },
  'http 1000': { cores: 0.78, rss: 5.7, rate: 518, p50: 2.26, max: 7.86 },
  'tcp 1000': { cores: 0.79, rss: 5.1, rate: 290, p50: 1.65, max: 11.78 },
  'tcp 10000': { cores: 0.78, rss: 12.2, rate: 324, p50: 45.9, max: 89.1 },
};

type Json = Record<string, unknown>;

class Proc {
  private readonly lines: Json[] = [];
  private waiters: { pred: (j: Json) => boolean; resolve: (j: Json) => void }[] = [];
  stderr = '';
  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout ?? process.stdin }).on('line', (l) => {
      let j: Json;
      try {
        j = JSON.parse(l) as Json;
      } catch {
        return;
      }
      this.lines.push(j);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(j)) return true;
        w.resolve(j);
        return false;
      });
    });
    child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
    });
  }
  send(line: string): void {
    this.child.stdin?.write(line + '\n');
  }
  all(pred: (j: Json) => boolean): Json[] {
    return this.lines.filter(pred);
  }
  wait(pred: (j: Json) => boolean, timeoutMs: number, what: string): Promise<Json> {
    const seen = this.lines.find(pred);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        reject(new Error(`timed out waiting for ${what}: ${this.stderr.slice(-500)}`));
      }, timeoutMs);
      this.waiters.push({
        pred,
        resolve: (j) => {
          clearTimeout(t);
          resolve(j);
        },
      });
    });
  }
}

function start(ns: Netns | undefined, script: string, args: string[]): Proc {
  const argv = [join(here, script), ...args];
  const child = ns === undefined
    ? spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'] })
    : ns.spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Proc(child);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN);
}
const f = (n: number, d = 2): string => (Number.isFinite(n) ? n.toFixed(d) : '–');

interface Report {
  wallMs: number;
  checks: number;
  cpuCores: number;
  rssMiB: number;
  eventLoopMs: { p50: number; p99: number; max: number };
  workerJitterMs: { ticks: number; p50: number; p99: number; max: number };
  lateStarts: number;
  maxLateMs: number;
}

async function runOne(type: 'tcp' | 'http', n: number): Promise<void> {
  let topo: Topology | undefined;
  let checkerNs: Netns | undefined;
  let targetNs: Netns | undefined;
  let address = '127.0.0.1';
  if (useNetns) {
    topo = await Topology.create('hbench');
    checkerNs = await topo.addHost({ name: 'chk', addresses: ['10.79.0.1/24'] });
    targetNs = await topo.addHost({ name: 'tgt', addresses: ['10.79.0.2/24'] });
    address = '10.79.0.2';
    await targetNs.sh('sysctl -qw net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=8192 || true');
  }
  const targets = start(targetNs, 'health-targets.js', [address, String(BASE_PORT), String(n)]);
  const checker = start(checkerNs, 'health-checker.js', []);
  try {
    await targets.wait((j) => j.ready !== undefined, 60_000, 'targets listening');
    await checker.wait((j) => j.ev === 'ready', 10_000, 'checker ready');
    checker.send('mark');
    await sleep(2_000);
    checker.send('idle-report');
    const idle = (await checker.wait((j) => j.ev === 'idle-report', 5_000, 'idle report')) as unknown as Report;
    checker.send(JSON.stringify({
      op: 'load', address, base: BASE_PORT, count: n, type, intervalMs, timeoutMs, fall, rise: 1, retry, delayBeforeRetryMs: 1000, concurrency,
    }));
    const loaded = await checker.wait((j) => j.ev === 'loaded', 120_000, 'loaded');
    await sleep(intervalMs * 1.5 + 500);
    targets.send('stats');
    const t0 = await targets.wait((j) => j.connections !== undefined, 5_000, 'target stats');
    checker.send('mark');
    // Kill `kills` random distinct targets at random moments of the first 60% of the window.
    const ports = new Set<number>();
    const k = Math.min(kills, Math.floor(n / 2));
    while (ports.size < k) ports.add(BASE_PORT + Math.floor(Math.random() * n));
    const killTimers = [...ports].map((p) => setTimeout(() => { targets.send(`kill ${p}`); }, Math.random() * seconds * 600));
    await sleep(seconds * 1000);
    checker.send('report');
    const rep = (await checker.wait((j) => j.ev === 'report', 10_000, 'report')) as unknown as Report;
    targets.send('stats');
    await sleep(200);
    const t1 = targets.all((j) => j.connections !== undefined).at(-1) ?? t0;
    // Let the last kills be detected.
    await sleep(intervalMs * (fall + retry) + timeoutMs + 2_000);
    killTimers.forEach(clearTimeout);
    const killed = new Map(targets.all((j) => j.killed !== undefined).map((j) => [j.killed as number, j.t as number]));
    const downs = checker.all((j) => j.ev === 'down');
    const lat: number[] = [];
    let falseDowns = 0;
    for (const d of downs) {
      const kt = killed.get(d.port as number);
      if (kt === undefined) falseDowns++;
      else lat.push((d.t as number) - kt);
    }
    lat.sort((a, b) => a - b);
    const configured = (n * 1000) / intervalMs;
    const achieved = rep.checks / (rep.wallMs / 1000);
    const targetCores = ((t1.cpuUs as number) - (t0.cpuUs as number)) / 1000 / rep.wallMs;
    const bound = intervalMs * (fall + retry) + timeoutMs + 50;
    const line = [
      `${type.padEnd(4)} ${String(n).padStart(6)}`,
      `checks/s ${f(achieved, 0)} of ${configured} (${f((100 * achieved) / configured, 1)}%)`,
      `cpu ${f(rep.cpuCores)} cores`,
      `rss ${f(rep.rssMiB, 1)} MiB (${f(idle.rssMiB, 1)} MiB before loading the targets)`,
      `load ${f(loaded.ms as number, 0)} ms`,
      `detect p50/p99/max ${f(pct(lat, 0.5) / 1000)}/${f(pct(lat, 0.99) / 1000)}/${f((lat.at(-1) ?? NaN) / 1000)} s of ${killed.size} killed (${lat.length} detected, bound ${bound} ms, false downs ${falseDowns})`,
      `checker event-loop delay p50/p99/max ${f(rep.eventLoopMs.p50)}/${f(rep.eventLoopMs.p99)}/${f(rep.eventLoopMs.max)} ms (idle ${f(idle.eventLoopMs.p50)}/${f(idle.eventLoopMs.p99)}/${f(idle.eventLoopMs.max)})`,
      `worker 20 ms timer lateness p50/p99/max ${f(rep.workerJitterMs.p50)}/${f(rep.workerJitterMs.p99)}/${f(rep.workerJitterMs.max)} ms (idle ${f(idle.workerJitterMs.p50)}/${f(idle.workerJitterMs.p99)}/${f(idle.workerJitterMs.max)}; p99 ratio ${f(rep.workerJitterMs.p99 / Math.max(idle.workerJitterMs.p99, 0.001), 1)}×)`,
      `late starts ${rep.lateStarts} (max ${f(rep.maxLateMs, 0)} ms)`,
      `target process ${f(targetCores)} cores`,
    ];
    const ka = KEEPALIVED_GUEST[`${type} ${n}`];
    if (ka !== undefined) {
      line.push(`keepalived (QEMU guest, notes/health.md, not this run): ${ka.rate} checks/s, ${ka.cores} cores, ${ka.rss} MiB, detect p50/max ${ka.p50}/${ka.max} s → rate ×${f(achieved / ka.rate, 1)}, p50 detection ×${f(ka.p50 / (pct(lat, 0.5) / 1000), 1)} faster`);
    }
    process.stdout.write(line.join('\n    ') + '\n');
    process.stdout.write(`JSON ${JSON.stringify({ type, n, configured, achieved, cpuCores: rep.cpuCores, rssMiB: rep.rssMiB, loadMs: loaded.ms, detectMs: { p50: pct(lat, 0.5), p99: pct(lat, 0.99), max: lat.at(-1), killed: killed.size, detected: lat.length, falseDowns }, eventLoopMs: rep.eventLoopMs, workerJitterMs: rep.workerJitterMs, idleWorkerJitterMs: idle.workerJitterMs, targetCores })}\n`);
  } finally {
    checker.send('quit');
    targets.send('quit');
    await sleep(300);
    checker.child.kill('SIGKILL');
    targets.child.kill('SIGKILL');
    topo?.destroy();
  }
}

process.stdout.write(`health-scale: interval ${intervalMs} ms, timeout ${timeoutMs} ms, fall ${fall}, retry ${retry}, concurrency ${concurrency}, ${seconds} s windows, ${useNetns ? 'two namespaces over veth' : 'loopback'}\n`);
for (const n of sizes) for (const type of types) await runOne(type, n);
