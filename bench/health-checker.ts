// The benchmark's checker side: a HealthMonitor with N targets (TCP or HTTP) on ADDRESS:BASE.., plus
// a worker thread that stands in for the VRRP engine (a 20 ms advert timer; its lateness is the
// jitter adverts would see). Runs anywhere Node runs. Protocol on stdin/stdout, JSON lines:
//   in:  {"op":"load",...options}  "mark"  "report"  "quit"
//   out: {"ev":"idle-report",…} {"ev":"loaded","ms":…} {"ev":"down","port":…,"t":…} {"ev":"report",…}
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { Worker } from 'node:worker_threads';
import { HealthMonitor, type HealthTarget } from '../daemon/health/monitor.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../daemon/health/options.js';
import { pingTargetAddress, TARGET_BODY_MD5, type BenchCheck } from './targets-binary.js';

interface LoadOptions {
  op: 'load';
  address: string;
  base: number;
  count: number;
  type: BenchCheck;
  intervalMs: number;
  timeoutMs: number;
  fall: number;
  rise: number;
  retry: number;
  delayBeforeRetryMs: number;
  concurrency: number;
}

function out(ev: string, data: object): void {
  process.stdout.write(JSON.stringify({ ev, ...data }) + '\n');
}

// The VRRP stand-in: a 20 ms timer in its own thread, reporting lateness percentiles on request.
const WORKER = `
const { parentPort } = require('node:worker_threads');
const PERIOD = 20;
let late = [];
let expected = performance.now() + PERIOD;
function tick() {
  const now = performance.now();
  late.push(now - expected);
  expected += PERIOD;
  if (expected < now) expected = now + PERIOD;
  setTimeout(tick, Math.max(0, expected - performance.now()));
}
setTimeout(tick, PERIOD);
parentPort.on('message', (m) => {
  if (m === 'mark') { late = []; return; }
  const s = late.slice().sort((a, b) => a - b);
  const q = (p) => s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(p * s.length))];
  parentPort.postMessage({ ticks: s.length, p50: q(0.5), p99: q(0.99), max: s.length === 0 ? 0 : s[s.length - 1] });
});
`;
const worker = new Worker(WORKER, { eval: true });
function workerReport(): Promise<{ ticks: number; p50: number; p99: number; max: number }> {
  return new Promise((resolve) => {
    worker.once('message', resolve);
    worker.postMessage('report');
  });
}

let mon: HealthMonitor | undefined;
// The histogram records the time between samples; the delay is what exceeds the period. 20 ms, not
// Node's 10 ms default: under TCG each wake-up is expensive, and the sampler must not be what it measures.
const ELD_RESOLUTION_MS = Number(process.env.LVSD_BENCH_ELD_MS ?? 20);
const eld: IntervalHistogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
eld.enable();
/** CPU seconds per thread name (/proc/self/task/*): where the process's CPU goes. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const key = tid === String(process.pid) ? 'main' : name;
      out.set(key, (out.get(key) ?? 0) + (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      /* the thread ended */
    }
  }
  return out;
}
let markThreads = threadCpu();

let mark = { t: performance.now(), cpu: process.cpuUsage(), checks: 0, late: 0, timeouts: 0 };

function doMark(): void {
  markThreads = threadCpu();
  eld.reset();
  worker.postMessage('mark');
  mark = { t: performance.now(), cpu: process.cpuUsage(), checks: mon?.stats().checksCompleted ?? 0, late: mon?.stats().lateStarts ?? 0, timeouts: mon?.stats().timeouts ?? 0 };
}

async function report(kind: string): Promise<void> {
  const wallMs = performance.now() - mark.t;
  const cpu = process.cpuUsage(mark.cpu);
  const st = mon?.stats();
  const w = await workerReport();
  const threads: Record<string, number> = {};
  for (const [name, s] of threadCpu()) {
    const cores = (s - (markThreads.get(name) ?? 0)) / (wallMs / 1000);
    if (cores >= 0.005) threads[name] = Math.round(cores * 1000) / 1000;
  }
  out(kind, {
    wallMs,
    checks: (st?.checksCompleted ?? 0) - mark.checks,
    cpuCores: (cpu.user + cpu.system) / 1000 / wallMs,
    rssMiB: process.memoryUsage().rss / 2 ** 20,
    eventLoopMs: {
      p50: Math.max(0, eld.percentile(50) / 1e6 - ELD_RESOLUTION_MS),
      p99: Math.max(0, eld.percentile(99) / 1e6 - ELD_RESOLUTION_MS),
      max: Math.max(0, eld.max / 1e6 - ELD_RESOLUTION_MS),
    },
    workerJitterMs: w,
    lateStarts: (st?.lateStarts ?? 0) - mark.late,
    maxLateMs: st?.maxLateMs ?? 0,
    timeouts: (st?.timeouts ?? 0) - mark.timeouts,
    nativeTargets: st?.nativeTargets ?? 0,
    concurrencyLimit: st?.concurrencyLimit ?? 0,
    concurrencyCuts: st?.concurrencyCuts ?? 0,
    threads,
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  void (async () => {
    const text = line.trim();
    if (text === 'mark') doMark();
    else if (text === 'report') await report('report');
    else if (text === 'idle-report') await report('idle-report');
    else if (text === 'quit') {
      mon?.close();
      await worker.terminate();
      process.exit(0);
    } else if (text.startsWith('{')) {
      const o = JSON.parse(text) as LoadOptions;
      const t0 = performance.now();
      mon = new HealthMonitor({ concurrency: o.concurrency });
      mon.on('transition', (e) => {
        if (e.to === 'down') out('down', { port: e.port, t: e.at, reason: e.reason });
      });
      const check: CheckOptions = {
        ...CHECK_DEFAULTS, type: o.type === 'tcp' || o.type === 'ping' || o.type === 'smtp' ? o.type : 'http', intervalMs: o.intervalMs, timeoutMs: o.timeoutMs, fall: o.fall, rise: o.rise,
        retry: o.retry, delayBeforeRetryMs: o.delayBeforeRetryMs,
        ...(o.type === 'tcp' || o.type === 'ping' ? {} : o.type === 'smtp' ? { smtp: { helo: 'lvsd-bench' } } : { http: { path: '/', ...(o.type === 'digest' ? { digest: TARGET_BODY_MD5 } : {}) } }),
      };
      const targets: HealthTarget[] = [];
      for (let i = 0; i < o.count; i++) {
        // A ping target is an address of its own; its port only names it in the down events.
        targets.push({ id: `rs${i}`, service: `vs${Math.floor(i / 10)}`, address: o.type === 'ping' ? pingTargetAddress(i) : o.address, port: o.base + i, weight: 1, check });
      }
      const r = mon.reconcile([], targets);
      if (r.errors.length > 0) throw new Error(`health bench: ${r.errors.length} targets refused: ${r.errors[0]?.message ?? ''}`);
      out('loaded', { ms: performance.now() - t0 });
    }
  })();
});
out('ready', {});
