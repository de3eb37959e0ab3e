// Health checking at scale. For N real servers (one cheap target process listening on N ports; for
// ping, N addresses in the target namespace, bench/ping-targets.ts) and TCP / HTTP / ping checks at a 1 s interval, it measures lvsd's checker: checks/s achieved vs configured,
// CPU (cores) and RSS, detection latency of targets killed mid-run (p50/p99/max), the checker's
// event-loop delay and the timer jitter of a worker thread standing in for the VRRP engine — idle
// (before the targets are loaded, same process, same run) and while the checks run.
//
// As root it puts the checker and the targets in two namespaces joined by veth (like the keepalived
// measurement in notes/health.md); otherwise (or with --loopback) both use 127.0.0.1.
// keepalived's checker needs IPVS, so its side-by-side (--keepalived: keepalived first, then lvsd, on
// the same targets and settings) runs in the QEMU guest (bench/health-guest.ts). Without it the
// figures from notes/health.md are printed as a reference, not as a same-run anchor.
//
//   node dist/bench/health-scale.js [--sizes 100,1000,10000] [--types tcp,http,digest,ping,smtp] [--seconds 10]
//        [--kills 20] [--interval 1000] [--timeout 1000] [--fall 1] [--retry 0] [--concurrency 1000] [--loopback]
//        [--warmup 2] [--node-flags '--jitless'] [--keepalived [--keepalived-detect-wait 30]]   (keepalived first, same targets: needs IPVS, i.e. the guest)
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Topology, type Netns } from '../test/support/netns.js';
import { targetsBinary, type BenchCheck } from './targets-binary.js';

const here = dirname(fileURLToPath(import.meta.url));

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? def) : def;
}
const sizes = arg('sizes', '100,1000,10000').split(',').map(Number);
const types = arg('types', 'tcp,http').split(',') as BenchCheck[];
const seconds = Number(arg('seconds', '10'));
const kills = Number(arg('kills', '20'));
const intervalMs = Number(arg('interval', '1000'));
const timeoutMs = Number(arg('timeout', '1000'));
const fall = Number(arg('fall', '1'));
const retry = Number(arg('retry', '0'));
const concurrency = Number(arg('concurrency', '1000'));
const useNetns = !process.argv.includes('--loopback') && process.getuid?.() === 0;
const withKeepalived = process.argv.includes('--keepalived');
const kaDetectWaitS = Number(arg('keepalived-detect-wait', '30'));
/** Seconds to let a fresh process settle (JIT) before measuring; the QEMU guest (TCG) needs ~20. */
const warmupS = Number(arg('warmup', '2'));
/** Extra flags for the spawned node processes (targets and checker), e.g. --jitless in the TCG guest. */
const nodeFlags = arg('node-flags', '').split(' ').filter(Boolean);
const kaFigures = new Map<string, { rate: number; cores: number; rssMiB: number; p50: number; p99: number }>();
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
  return startProgram(ns, process.execPath, [...nodeFlags, join(here, script), ...args]);
}

function startProgram(ns: Netns | undefined, program: string, argv: string[]): Proc {
  const child = ns === undefined
    ? spawn(program, argv, { stdio: ['pipe', 'pipe', 'pipe'] })
    : ns.spawn(program, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
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
  nativeTargets: number;
  /** The monitor's adaptive limit of checks in flight at the end of the window, and its cuts so far. */
  concurrencyLimit: number;
  concurrencyCuts: number;
  timeouts: number;
  /** Cores per thread name over the window (main = the event loop, lvsd-probe = the native engine). */
  threads: Record<string, number>;
}

function percentiles(lat: number[]): { p50: number; p99: number; max: number } {
  const s = [...lat].sort((a, b) => a - b);
  return { p50: pct(s, 0.5), p99: pct(s, 0.99), max: s.at(-1) ?? NaN };
}

/** Kills `k` random distinct targets at random moments of the first 60% of a window; returns the timers. */
function scheduleKills(targets: Proc, n: number): NodeJS.Timeout[] {
  const ports = new Set<number>();
  const k = Math.min(kills, Math.floor(n / 2));
  while (ports.size < k) ports.add(BASE_PORT + Math.floor(Math.random() * n));
  return [...ports].map((p) => setTimeout(() => { targets.send(`kill ${p}`); }, Math.random() * seconds * 600));
}

function killsSince(targets: Proc, since: number): Map<number, number> {
  return new Map(targets.all((j) => j.killed !== undefined && (j.t as number) >= since).map((j) => [j.killed as number, j.t as number]));
}

async function targetStats(targets: Proc): Promise<{ connections: number; cpuUs: number }> {
  const before = targets.all((j) => j.connections !== undefined).length;
  targets.send('stats');
  await targets.wait(() => targets.all((j) => j.connections !== undefined).length > before, 60_000, 'target stats');
  const j = targets.all((x) => x.connections !== undefined).at(-1) ?? {};
  return { connections: j.connections as number, cpuUs: j.cpuUs as number };
}

async function keepalivedPhase(type: BenchCheck, n: number, ns: Netns, address: string, targets: Proc): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { keepalivedConf, startKeepalived, keepalivedUsage } = await import('./health-keepalived.js');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-bench-ka-'));
  const t0 = Date.now();
  const ka = startKeepalived(ns, dir, keepalivedConf({ address, base: BASE_PORT, n, type, delayLoopS: intervalMs / 1000, timeoutS: timeoutMs / 1000, retry }));
  try {
    while (ka.activated < n && Date.now() - t0 < 180_000 && ka.child.exitCode === null) await sleep(200);
    if (ka.child.exitCode !== null) throw new Error(`keepalived exited: ${ka.log.slice(-10).join(' | ')}`);
    const loadMs = Date.now() - t0;
    await sleep(Math.max(intervalMs * 1.5 + 500, warmupS * 1000));
    const s0 = await targetStats(targets);
    const u0 = await keepalivedUsage(ns);
    const since = Date.now();
    const w0 = performance.now();
    const timers = scheduleKills(targets, n);
    await sleep(seconds * 1000);
    const wallMs = performance.now() - w0;
    const s1 = await targetStats(targets);
    const u1 = await keepalivedUsage(ns);
    const killed = killsSince(targets, since);
    const deadline = Date.now() + kaDetectWaitS * 1000;
    const removedAfter = (port: number, kt: number): number | undefined => ka.removed.get(port)?.find((t) => t >= kt);
    while (Date.now() < deadline && [...killed].some(([p, kt]) => removedAfter(p, kt) === undefined)) await sleep(250);
    timers.forEach(clearTimeout);
    const lat: number[] = [];
    for (const [port, kt] of killed) {
      const rt = removedAfter(port, kt);
      if (rt !== undefined) lat.push(rt - kt);
    }
    // Removals of servers nobody killed during the window: checks that failed on a live server.
    let falseRemovals = 0;
    for (const [port, times] of ka.removed) if (!killed.has(port)) falseRemovals += times.filter((t) => t >= since).length;
    const d = percentiles(lat);
    const rate = (s1.connections - s0.connections) / (wallMs / 1000);
    const cores = (u1.cpuS - u0.cpuS) / (wallMs / 1000);
    kaFigures.set(`${type} ${n}`, { rate, cores, rssMiB: u1.rssMiB, p50: d.p50, p99: d.p99 });
    process.stdout.write([
      `keepalived ${type.padEnd(4)} ${String(n).padStart(6)} (this run)`,
      `checks/s ${f(rate, 0)} of ${(n * 1000) / intervalMs} (seen by the targets)`,
      `cpu ${f(cores)} cores, rss ${f(u1.rssMiB, 1)} MiB, load ${loadMs} ms`,
      `detect p50/p99/max ${f(d.p50 / 1000)}/${f(d.p99 / 1000)}/${f(d.max / 1000)} s of ${killed.size} killed (${lat.length} detected within ${kaDetectWaitS} s, false removals ${falseRemovals})`,
    ].join('\n    ') + '\n');
    process.stdout.write(`JSON ${JSON.stringify({ checker: 'keepalived', type, n, rate, cores, rssMiB: u1.rssMiB, loadMs, detectMs: { ...d, killed: killed.size, detected: lat.length, falseRemovals } })}\n`);
  } finally {
    ka.child.kill('SIGTERM');
    const exited = new Promise((r) => ka.child.once('exit', r));
    await Promise.race([exited, sleep(30_000)]);
    ka.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Kernel counters that tell a dropped or slow handshake apart from a slow checker (per namespace, plus softnet). */
async function netCounters(nss: (Netns | undefined)[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const names = ['TcpExtListenDrops', 'TcpExtListenOverflows', 'TcpExtTCPSynRetrans', 'TcpExtTCPTimeouts', 'TcpAttemptFails'];
  for (const ns of nss) {
    if (ns === undefined) continue;
    const { stdout } = await ns.exec('nstat', ['-asz', ...names]).catch(() => ({ stdout: '' }));
    for (const line of stdout.split('\n')) {
      const [k, v] = line.trim().split(/\s+/);
      if (k !== undefined && v !== undefined && names.includes(k)) out.set(`${ns.name.split('-').at(-1) ?? ns.name}.${k}`, Number(v));
    }
  }
  try {
    // /proc/net/softnet_stat: per CPU, hex: processed, dropped, time_squeeze (budget ran out: work deferred to ksoftirqd).
    let dropped = 0;
    let squeezed = 0;
    for (const row of (await import('node:fs')).readFileSync('/proc/net/softnet_stat', 'utf8').trim().split('\n')) {
      const f = row.trim().split(/\s+/);
      dropped += parseInt(f[1] ?? '0', 16);
      squeezed += parseInt(f[2] ?? '0', 16);
    }
    out.set('softnet.dropped', dropped);
    out.set('softnet.time_squeeze', squeezed);
  } catch {
    /* not Linux */
  }
  return out;
}

function counterDelta(a: Map<string, number>, b: Map<string, number>): string {
  return [...b].map(([k, v]) => `${k} ${v - (a.get(k) ?? 0)}`).join(', ');
}

async function lvsdPhase(type: BenchCheck, n: number, checkerNs: Netns | undefined, address: string, targets: Proc, targetNs?: Netns): Promise<void> {
  const checker = start(checkerNs, 'health-checker.js', []);
  try {
    await checker.wait((j) => j.ev === 'ready', 60_000, 'checker ready');
    await sleep(warmupS * 1000);
    checker.send('mark');
    await sleep(2_000);
    checker.send('idle-report');
    const idle = (await checker.wait((j) => j.ev === 'idle-report', 60_000, 'idle report')) as unknown as Report;
    checker.send(JSON.stringify({
      op: 'load', address, base: BASE_PORT, count: n, type, intervalMs, timeoutMs, fall, rise: 1, retry, delayBeforeRetryMs: 1000, concurrency,
    }));
    const loaded = await checker.wait((j) => j.ev === 'loaded', 600_000, 'loaded');
    await sleep(Math.max(intervalMs * 1.5 + 500, warmupS * 1000));
    const s0 = await targetStats(targets);
    const k0 = await netCounters([checkerNs, targetNs]);
    checker.send('mark');
    const since = Date.now();
    const timers = scheduleKills(targets, n);
    await sleep(seconds * 1000);
    checker.send('report');
    const rep = (await checker.wait((j) => j.ev === 'report', 60_000, 'report')) as unknown as Report;
    const s1 = await targetStats(targets);
    const k1 = await netCounters([checkerNs, targetNs]);
    await sleep(intervalMs * (fall + retry) + timeoutMs + 2_000);
    timers.forEach(clearTimeout);
    const killed = killsSince(targets, since);
    const lat: number[] = [];
    let falseDowns = 0;
    const falseReasons = new Map<string, number>();
    for (const d of checker.all((j) => j.ev === 'down' && (j.t as number) >= since)) {
      const kt = killed.get(d.port as number);
      if (kt === undefined || (d.t as number) < kt) {
        if (falseDowns < 5) process.stdout.write(`  false down: port ${String(d.port)} at +${(d.t as number) - since} ms (${String(d.reason)})\n`);
        falseDowns++;
        falseReasons.set(String(d.reason), (falseReasons.get(String(d.reason)) ?? 0) + 1);
      } else lat.push((d.t as number) - kt);
    }
    const d = percentiles(lat);
    const configured = (n * 1000) / intervalMs;
    const achieved = rep.checks / (rep.wallMs / 1000);
    const seen = (s1.connections - s0.connections) / (rep.wallMs / 1000);
    const targetCores = (s1.cpuUs - s0.cpuUs) / 1000 / rep.wallMs;
    const bound = intervalMs * (fall + retry) + timeoutMs + 50;
    const line = [
      `lvsd ${type.padEnd(4)} ${String(n).padStart(6)}`,
      `checks/s ${f(achieved, 0)} of ${configured} (${f((100 * achieved) / configured, 1)}%; ${f(seen, 0)} seen by the targets)`,
      `cpu ${f(rep.cpuCores)} cores, ${f(rep.cpuCores - idle.cpuCores)} net of the ${f(idle.cpuCores)} idle before loading (Node's baseline, the bench's 20 ms loop-delay sampler and worker timer); ${f((1e6 * Math.max(0, rep.cpuCores - idle.cpuCores)) / Math.max(achieved, 1e-9), 0)} µs per check net (${f((1e6 * rep.cpuCores) / Math.max(achieved, 1e-9), 0)} gross)`,
      `checks on the native probe engine: ${rep.nativeTargets} of ${n} targets; cores by thread ${Object.entries(rep.threads).map(([k, v]) => `${k} ${f(v)}`).join(', ')} (idle ${Object.entries(idle.threads).map(([k, v]) => `${k} ${f(v)}`).join(', ')})`,
      `rss ${f(rep.rssMiB, 1)} MiB (${f(idle.rssMiB, 1)} MiB before loading the targets)`,
      `load ${f(loaded.ms as number, 0)} ms`,
      `detect p50/p99/max ${f(d.p50 / 1000)}/${f(d.p99 / 1000)}/${f(d.max / 1000)} s of ${killed.size} killed (${lat.length} detected, bound ${bound} ms, false downs ${falseDowns}${falseDowns > 0 ? `: ${[...falseReasons].map(([r, c]) => `${r} ${c}`).join(', ')}` : ''}; ${rep.timeouts} timeouts)`,
      `checker event-loop delay p50/p99/max ${f(rep.eventLoopMs.p50)}/${f(rep.eventLoopMs.p99)}/${f(rep.eventLoopMs.max)} ms (idle ${f(idle.eventLoopMs.p50)}/${f(idle.eventLoopMs.p99)}/${f(idle.eventLoopMs.max)})`,
      `worker 20 ms timer lateness p50/p99/max ${f(rep.workerJitterMs.p50)}/${f(rep.workerJitterMs.p99)}/${f(rep.workerJitterMs.max)} ms (idle ${f(idle.workerJitterMs.p50)}/${f(idle.workerJitterMs.p99)}/${f(idle.workerJitterMs.max)}; p99 ratio ${f(rep.workerJitterMs.p99 / Math.max(idle.workerJitterMs.p99, 0.001), 1)}×)`,
      `late starts ${rep.lateStarts} (max ${f(rep.maxLateMs, 0)} ms); checks in flight allowed ${rep.concurrencyLimit} (${rep.concurrencyCuts} cuts)`,
      `target process ${f(targetCores)} cores`,
      `kernel counters over the window: ${counterDelta(k0, k1)}`,
    ];
    const ka = kaFigures.get(`${type} ${n}`);
    if (ka !== undefined) {
      line.push(`vs keepalived (same run): rate ×${f(achieved / ka.rate, 1)}, cpu ×${f(rep.cpuCores / ka.cores, 2)} (gross), cpu per check ${f((1e6 * rep.cpuCores) / achieved, 0)} µs vs ${f((1e6 * ka.cores) / ka.rate, 0)} µs, detection p50 ×${f(ka.p50 / d.p50, 1)} / p99 ×${f(ka.p99 / d.p99, 1)} faster`);
    } else {
      const ref = KEEPALIVED_GUEST[`${type} ${n}`];
      if (ref !== undefined) {
        line.push(`keepalived (QEMU guest, notes/health.md, not this run): ${ref.rate} checks/s, ${ref.cores} cores, ${ref.rss} MiB, detect p50/max ${ref.p50}/${ref.max} s`);
      }
    }
    process.stdout.write(line.join('\n    ') + '\n');
    process.stdout.write(`JSON ${JSON.stringify({ checker: 'lvsd', type, n, configured, achieved, seen, cpuCores: rep.cpuCores, idleCpuCores: idle.cpuCores, nativeTargets: rep.nativeTargets, rssMiB: rep.rssMiB, loadMs: loaded.ms, detectMs: { ...d, killed: killed.size, detected: lat.length, falseDowns }, eventLoopMs: rep.eventLoopMs, workerJitterMs: rep.workerJitterMs, idleWorkerJitterMs: idle.workerJitterMs, targetCores })}\n`);
  } finally {
    checker.send('quit');
    await sleep(300);
    checker.child.kill('SIGKILL');
  }
}

async function runOne(type: BenchCheck, n: number): Promise<void> {
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
    // Ping targets are addresses behind the target namespace; echo replies must not be rate limited.
    if (type === 'ping') {
      await checkerNs.exec('ip', ['route', 'add', '10.81.0.0/16', 'via', address]);
      await targetNs.sh('sysctl -qw net.ipv4.icmp_ratelimit=0 || true');
    }
  } else if (type === 'ping') {
    throw new Error('health bench: ping targets need root (two namespaces)');
  }
  const targets = type === 'ping'
    ? start(targetNs, 'ping-targets.js', [address, String(BASE_PORT), String(n)])
    : startProgram(targetNs, targetsBinary(), [address, String(BASE_PORT), String(n), ...(type === 'smtp' ? ['smtp'] : [])]);
  try {
    await targets.wait((j) => j.ready !== undefined, 120_000, 'targets listening');
    if (withKeepalived) {
      if (checkerNs === undefined) throw new Error('--keepalived needs root (namespaces)');
      await keepalivedPhase(type, n, checkerNs, address, targets);
      const before = targets.all((j) => j.revived !== undefined).length;
      targets.send('revive');
      await targets.wait(() => targets.all((j) => j.revived !== undefined).length > before, 60_000, 'revive');
    }
    await lvsdPhase(type, n, checkerNs, address, targets, targetNs);
  } finally {
    targets.send('quit');
    await sleep(300);
    targets.child.kill('SIGKILL');
    topo?.destroy();
  }
}

process.stdout.write(`health-scale: interval ${intervalMs} ms, timeout ${timeoutMs} ms, fall ${fall}, retry ${retry}, concurrency ${concurrency}, ${seconds} s windows, ${useNetns ? 'two namespaces over veth' : 'loopback'}\n`);
for (const n of sizes) for (const type of types) await runOne(type, n);
