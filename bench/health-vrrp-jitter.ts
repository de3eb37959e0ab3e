// Checks must not starve VRRP: the advert jitter of a real `lvsd run` (VRRP master) idle and while it
// checks 10,000 real servers, as seen on the wire by a peer, next to keepalived's VRRP (the anchor)
// with the same advert interval in the same run.
//   npx tsc -p tsconfig.json && node dist/bench/health-vrrp-jitter.js [--targets 10000] [--advert 0.1] [--seconds 20] [--interval 1s] [--rt N]
// --rt N: both VRRP senders real-time (lvsd vrrp.realtimePriority N, keepalived vrrp_rt_priority N).
// --node-flags "…": V8/Node flags for lvsd's process (e.g. --single-threaded-gc, to test whether the
// checks reach the VRRP thread through V8's shared GC helper threads).
// --engine-flags "…": V8/Node flags for lvsd's VRRP engine process instead of its defaults
// (daemon/vrrp/channel.ts; "" for none).
//
// Three namespaces on one segment: d1 runs `lvsd run` (VRID 51, master, v3), k1 runs keepalived
// VRRP-only (VRID 52, master, v3, same advert_int), tg runs the targets (bench/health-targets.ts: one
// process, N ports) and tcpdump, whose kernel timestamps give each advert's arrival. Phase "idle":
// lvsd holds only its VRRP instance. Phase "loaded": SIGHUP to a config with one virtual server of N
// real servers on tg, TCP checks every --interval (timeout 1 s), nftables dataplane; the window starts
// once the reload is done and a few intervals have passed. keepalived runs through both phases, so
// its figures in the loaded window show what the host's load alone does to a VRRP sender.
// Jitter = |interval between two adverts − advert_int|. Never fails on timing; prints figures and ratios.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Topology, type Netns } from '../test/support/netns.js';
import { startRun, type LvsdRun } from '../test/support/lvsd-run.js';
import { keepalivedConf, startKeepalived, type Keepalived } from '../test/support/keepalived.js';
import { masterDownIntervalMs } from '../daemon/vrrp/machine.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const TARGETS = Number(opt('targets') ?? 10_000);
const ADVERT_S = Number(opt('advert') ?? 0.1);
const SECONDS = Number(opt('seconds') ?? 20);
const CHECK_INTERVAL = opt('interval') ?? '1s';
const RT = opt('rt') === undefined ? undefined : Number(opt('rt'));
const NODE_FLAGS = opt('node-flags')?.split(/\s+/).filter((f) => f !== '') ?? [];
const ENGINE_FLAGS = opt('engine-flags');
if (ENGINE_FLAGS !== undefined) process.env.LVSD_VRRP_ENGINE_FLAGS = ENGINE_FLAGS;
const BASE_PORT = 20_000;
const ADVERT_MS = ADVERT_S * 1000;
const PRIORITY = 150;

const D1 = '10.81.0.1';
const K1 = '10.81.0.2';
const TG = '10.81.0.3';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One advert seen on the wire: kernel receive time (ms since the epoch) and its source. */
interface Seen {
  t: number;
  src: string;
  prio: number;
}

/** tcpdump in the peer namespace; its -tt timestamps are the kernel's receive times. */
function capture(ns: Netns): { child: ChildProcess; seen: Seen[]; ready: Promise<void> } {
  const child = ns.spawn('tcpdump', ['-i', 'eth0', '-n', '-l', '-tt', '--immediate-mode', '-p', 'ip proto 112']);
  const seen: Seen[] = [];
  let buf = '';
  child.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = /^(\d+\.\d+) IP (\S+) > 224\.0\.0\.18: VRRPv\d, Advertisement, vrid \d+, prio (\d+)/.exec(line);
      if (m !== null) seen.push({ t: Number(m[1]) * 1000, src: m[2] ?? '', prio: Number(m[3]) });
    }
  });
  const ready = new Promise<void>((resolve) => child.stderr?.on('data', (d: Buffer) => { if (d.toString().includes('listening on')) resolve(); }));
  return { child, seen, ready };
}

interface Jitter {
  adverts: number;
  p50: number;
  p99: number;
  max: number;
  /** Gaps longer than the backup's Master_Down_Interval: a backup would have taken over. */
  overMdi: number;
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function jitter(seen: Seen[], src: string, from: number, to: number): Jitter {
  const ts = seen.filter((s) => s.src === src && s.prio > 0 && s.t >= from && s.t <= to).map((s) => s.t);
  const dev: number[] = [];
  let overMdi = 0;
  // A backup of priority 100 declares the master dead after this long without an advert.
  const mdi = masterDownIntervalMs(100, Math.round(ADVERT_MS / 10));
  for (let i = 1; i < ts.length; i++) {
    const gap = (ts[i] ?? 0) - (ts[i - 1] ?? 0);
    dev.push(Math.abs(gap - ADVERT_MS));
    if (gap > mdi) overMdi++;
  }
  dev.sort((a, b) => a - b);
  return { adverts: ts.length, p50: pct(dev, 50), p99: pct(dev, 99), max: dev.at(-1) ?? NaN, overMdi };
}

function lvsdConfig(dir: string, withTargets: boolean): string {
  const lines = [
    'node: { name: d1 }',
    `api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }`,
    `stateFile: ${join(dir, 'state.json')}`,
    'dataplane: nftables',
    'nftables: { table: lvsd, masquerade: false }',
    'vrrp:',
    '  instances:',
    '    - name: VI_1',
    '      interface: eth0',
    '      virtualRouterId: 51',
    `      priority: ${PRIORITY}`,
    '      state: MASTER',
    '      version: 3',
    `      advertInterval: ${ADVERT_MS}ms`,
    '      virtualIpaddresses: [ 10.81.0.100/24 ]',
    ...(RT === undefined ? [] : [`  realtimePriority: ${RT}`]),
  ];
  if (withTargets) {
    lines.push(
      'virtualServers:',
      '  - name: many',
      '    address: 10.81.0.100',
      '    port: 80',
      '    protocol: tcp',
      '    scheduler: rr',
      '    method: nat',
      `    healthCheck: { type: tcp, interval: ${CHECK_INTERVAL}, timeout: 1s }`,
      '    realServers:',
    );
    for (let i = 0; i < TARGETS; i++) lines.push(`      - { address: ${TG}, port: ${BASE_PORT + i} }`);
  }
  return lines.join('\n') + '\n';
}

/** user+system CPU seconds of a process (all its threads). */
/** lvsd's main process and its children (the VRRP engine process). */
function lvsdPids(pid: number): number[] {
  let kids: number[] = [];
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((x) => x !== '').map(Number);
  } catch {
    // gone: no children
  }
  return [pid, ...kids];
}

function cpuSeconds(pid: number): number {
  let total = 0;
  for (const p of lvsdPids(pid)) {
    try {
      const f = readFileSync(`/proc/${p}/stat`, 'utf8');
      const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
      total += (Number(rest[11]) + Number(rest[12])) / 100;
    } catch {
      // a child that just exited
    }
  }
  return total;
}

/** RSS of each of lvsd's processes, MiB, named ("main 80.1, engine-process.js 41.3, nft 5.5"). */
function rssMiB(pid: number): string {
  return lvsdPids(pid)
    .map((p) => {
      try {
        const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
        const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
        const name = p === pid ? 'main' : (args.find((a) => a.endsWith('.js'))?.split('/').at(-1) ?? args[0]?.split('/').at(-1) ?? '?');
        return `${name} ${m === null ? '?' : (Number(m[1]) / 1024).toFixed(1)}`;
      } catch {
        return ''; // a short-lived helper that just exited
      }
    })
    .filter((x) => x !== '')
    .join(', ');
}

/** Asks the targets process for its connection count. */
function targetStats(targets: ChildProcess, lines: string[]): Promise<number> {
  const from = lines.length;
  targets.stdin?.write('stats\n');
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      for (const l of lines.slice(from)) {
        if (l.includes('"connections"')) {
          clearInterval(poll);
          resolve((JSON.parse(l) as { connections: number }).connections);
          return;
        }
      }
    }, 20);
  });
}

function row(label: string, j: Jitter): string {
  const f = (x: number): string => x.toFixed(1).padStart(7);
  return `  ${label.padEnd(38)} ${String(j.adverts).padStart(6)} ${f(j.p50)} ${f(j.p99)} ${f(j.max)} ${String(j.overMdi).padStart(8)}`;
}

async function main(): Promise<void> {
  const topo = await Topology.create('hvj');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-hvj-'));
  const children: ChildProcess[] = [];
  let lvsd: LvsdRun | undefined;
  let keepalived: Keepalived | undefined;
  try {
    const d1 = await topo.addHost({ name: 'd1', addresses: [`${D1}/24`] });
    const k1 = await topo.addHost({ name: 'k1', addresses: [`${K1}/24`] });
    const tg = await topo.addHost({ name: 'tg', addresses: [`${TG}/24`] });
    // The director reaches the targets directly; NAT traffic is not part of this benchmark.
    const cap = capture(tg);
    children.push(cap.child);
    await cap.ready;

    const targetLines: string[] = [];
    const targets = tg.spawn(process.execPath, [fileURLToPath(new URL('./health-targets.js', import.meta.url)), TG, String(BASE_PORT), String(TARGETS)], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(targets);
    let tbuf = '';
    targets.stdout?.on('data', (d: Buffer) => {
      tbuf += d.toString();
      for (let nl = tbuf.indexOf('\n'); nl >= 0; nl = tbuf.indexOf('\n')) {
        targetLines.push(tbuf.slice(0, nl));
        tbuf = tbuf.slice(nl + 1);
      }
    });
    for (let i = 0; !targetLines.some((l) => l.includes('"ready"')); i++) {
      if (i > 1200) throw new Error('targets never became ready');
      await sleep(50);
    }

    const kconf = keepalivedConf([{ name: 'VK', interface: 'eth0', vrid: 52, priority: PRIORITY, version: 3, interval: ADVERT_S, state: 'MASTER', vips: ['10.81.0.200/24'] }]);
    keepalived = await startKeepalived(k1, RT === undefined ? kconf : kconf.replace('global_defs {', `global_defs {\n  vrrp_rt_priority ${RT}`));
    await keepalived.waitForLog(/Entering MASTER STATE/, 15_000);

    const config = join(dir, 'lvsd.yaml');
    writeFileSync(config, lvsdConfig(dir, false));
    // With node flags: sh -c 'exec "$0" FLAGS "$@"' NODE lvsd.js run … (startRun appends NODE and the rest).
    const viaShell = NODE_FLAGS.length === 0 ? [] : ['sh', '-c', `exec "$0" ${NODE_FLAGS.join(' ')} "$@"`];
    lvsd = startRun(['--config', config], ['ip', 'netns', 'exec', d1.name, ...viaShell]);
    await lvsd.waitFor(/^running$/);
    await lvsd.waitFor(/MASTER/, 15_000);
    const pid = lvsd.child.pid ?? 0;
    await sleep(2_000);
    const rtLine = lvsd.lines.find((l) => /SCHED_RR|real-time scheduling/.test(l.msg));
    if (RT !== undefined) console.log(`lvsd says: ${rtLine?.msg ?? 'nothing about real-time scheduling'}`);
    if (NODE_FLAGS.length > 0) console.log(`lvsd runs with node ${NODE_FLAGS.join(' ')}`);
    if (ENGINE_FLAGS !== undefined) console.log(`lvsd's VRRP engine process runs with node flags "${ENGINE_FLAGS}"`);

    console.log(`VRRP advert jitter on the wire (tcpdump kernel timestamps in a peer namespace), v3 advert_int ${ADVERT_S} s, ${SECONDS} s windows`);
    console.log(`lvsd: \`lvsd run\` as master (VRRP in its own engine process, ${RT === undefined ? 'default scheduling' : `SCHED_RR ${RT}`}); keepalived ${(await k1.exec('keepalived', ['--version']).catch(() => ({ stdout: '', stderr: '' }))).stderr.split('\n')[0] ?? ''} VRRP-only, same interval${RT === undefined ? '' : `, vrrp_rt_priority ${RT}`}`);

    // Idle.
    const load0 = loadavg();
    const idleFrom = Date.now();
    const cpuIdle0 = cpuSeconds(pid);
    await sleep(SECONDS * 1000);
    const idleTo = Date.now();
    const cpuIdle = (cpuSeconds(pid) - cpuIdle0) / ((idleTo - idleFrom) / 1000);
    const rssIdle = rssMiB(pid);

    // Loaded: reload to N real servers with TCP checks.
    writeFileSync(config, lvsdConfig(dir, true));
    const reloadAt = Date.now();
    lvsd.child.kill('SIGHUP');
    await lvsd.waitFor(/^reload done: /, 300_000);
    const reloadS = (Date.now() - reloadAt) / 1000;
    await sleep(5_000);
    const load1 = loadavg();
    const conns0 = await targetStats(targets, targetLines);
    const loadFrom = Date.now();
    const cpu0 = cpuSeconds(pid);
    await sleep(SECONDS * 1000);
    const loadTo = Date.now();
    const conns1 = await targetStats(targets, targetLines);
    const cpuLoaded = (cpuSeconds(pid) - cpu0) / ((loadTo - loadFrom) / 1000);
    const rssLoaded = rssMiB(pid);
    const load2 = loadavg();
    const checksPerS = (conns1 - conns0) / ((loadTo - loadFrom) / 1000);

    const li = jitter(cap.seen, D1, idleFrom, idleTo);
    const ki = jitter(cap.seen, K1, idleFrom, idleTo);
    const ll = jitter(cap.seen, D1, loadFrom, loadTo);
    const kl = jitter(cap.seen, K1, loadFrom, loadTo);
    const expected = Math.round((SECONDS * 1000) / ADVERT_MS);
    const mdi = masterDownIntervalMs(100, Math.round(ADVERT_MS / 10));

    console.log(`\nlvsd reload to ${TARGETS} real servers took ${reloadS.toFixed(1)} s; loaded window: ${Math.round(checksPerS)} checks/s (configured ${Math.round(TARGETS / (parseFloat(CHECK_INTERVAL) * (CHECK_INTERVAL.endsWith('ms') ? 0.001 : 1)))}), lvsd CPU ${cpuLoaded.toFixed(2)} cores (idle ${cpuIdle.toFixed(2)})`);
    console.log(`lvsd RSS MiB by process: idle ${rssIdle}; loaded ${rssLoaded}`);
    console.log(`host load average (1 min): ${load0[0]?.toFixed(1)} at idle start, ${load1[0]?.toFixed(1)} at loaded start, ${load2[0]?.toFixed(1)} at the end (2 shared cores)`);
    console.log(`\n  |interval − ${ADVERT_MS} ms| in ms; ~${expected} adverts expected per window; "> MDI" = gaps over ${mdi.toFixed(0)} ms (a prio-100 backup takes over)`);
    console.log(`  ${'sender, phase'.padEnd(38)} ${'adverts'.padStart(6)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)} ${'> MDI'.padStart(8)}`);
    console.log(row('keepalived, idle window (anchor)', ki));
    console.log(row('lvsd, idle', li));
    console.log(row(`keepalived, during lvsd's ${TARGETS} checks`, kl));
    console.log(row(`lvsd, ${TARGETS} TCP checks`, ll));
    const r = (a: number, b: number): string => (b > 0 ? (a / b).toFixed(2) : a === 0 ? '1.00' : '∞');
    console.log(`\nratios p99 (max): lvsd idle / keepalived idle ${r(li.p99, ki.p99)} (${r(li.max, ki.max)}); lvsd loaded / lvsd idle ${r(ll.p99, li.p99)} (${r(ll.max, li.max)}); lvsd loaded / keepalived same window ${r(ll.p99, kl.p99)} (${r(ll.max, kl.max)}); lvsd loaded / keepalived idle ${r(ll.p99, ki.p99)} (${r(ll.max, ki.max)})`);
  } finally {
    if (lvsd !== undefined && lvsd.child.exitCode === null) {
      lvsd.child.kill('SIGTERM');
      const exited = await Promise.race([lvsd.exit.then(() => true), sleep(10_000).then(() => false)]);
      if (!exited) lvsd.child.kill('SIGKILL');
    }
    await keepalived?.kill();
    for (const c of children) c.kill('SIGKILL');
    topo.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
