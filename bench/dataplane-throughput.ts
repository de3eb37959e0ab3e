// Dataplane throughput, in one run on the same lab: wrk from the client namespace against
//   direct    one real server, the director only routing (the anchor for nftables)
//   nftables  lvsd's nft DNAT table (round robin over three nginx)
//   userspace lvsd's Node proxy (round robin over three nginx), two processes (HAProxy runs two threads here)
//   userspace-1 the same proxy in one process
//   userspace-handles the proxy with its JavaScript relay (engine 'handles', two processes): what the native
//             relay (the default engine) replaced
//   haproxy   Debian HAProxy, mode tcp, roundrobin, same real servers (the anchor for userspace)
// keepalive req/s, new connections/s (`Connection: close`) and p99 latency. nft reprogramming has its own
// benchmark, nft-change.ts.
// Prints figures and ratios; never fails on a timing. Every wrk round is bounded (wrk-round.ts): one that
// hangs is killed and counted as failed, its setup's figure is the median of the rounds that worked, and
// a round that went wrong prints the lab's conntrack, redirect and client-port counters beside it.
//
//   node dist/bench/dataplane-throughput.js            (BENCH_SECONDS=10 BENCH_REPEATS=3 by default)
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDataplaneLab, startUserspaceRunner, VIP4, type DataplaneLab } from '../test/support/dataplane-lab.js';
import { waitForPort } from '../test/support/nginx.js';
import { removeStaleNamespaces } from '../test/support/netns.js';
import { createNftablesDataplane } from '../daemon/dataplane/nftables/backend.js';
import type { ServiceSpec } from '../daemon/dataplane/types.js';
import { describeState, labState, labTrouble, wrkRound, type WrkResult } from './wrk-round.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const ONLY = (process.env.BENCH_ONLY ?? 'direct,nftables,userspace,userspace-1,userspace-handles,haproxy').split(',');
const USERSPACE_PORT = 8000;
const USERSPACE1_PORT = 8002;
const HAPROXY_PORT = 8001;
const HANDLES_PORT = 8003;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** min–max of the rounds that worked. */
function range(rs: WrkResult[], f: (r: WrkResult) => number, digits: number): string {
  const xs = rs.map(f);
  return xs.length === 0 ? '—' : `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
}

/** One bounded round; undefined when it failed (said on stdout with the lab's counters). */
async function wrk(lab: DataplaneLab, name: string, url: string, close: boolean): Promise<WrkResult | undefined> {
  // --timeout: a response slower than this counts as a timeout error instead of stretching the latency tail.
  const args = ['-t2', `-c${CONNS}`, `-d${SECONDS}s`, '--timeout', '5s', '--latency', ...(close ? ['-H', 'Connection: close'] : []), url];
  const before = await labState(lab.director, lab.client);
  const r = await wrkRound(lab.client, args, SECONDS);
  const after = await labState(lab.director, lab.client);
  const trouble = labTrouble(before, after);
  const what = `${name} ${close ? 'new connections' : 'keepalive'}`;
  if (!r.ok) {
    console.log(`  round FAILED: ${what}: ${r.reason} | ${describeState(after)}${trouble.length > 0 ? ` | ${trouble.join('; ')}` : ''}`);
    return undefined;
  }
  if (trouble.length > 0) console.log(`  round ${what} (${r.rps.toFixed(0)}/s): ${trouble.join('; ')}`);
  return r;
}

function service(lab: DataplaneLab, port: number): ServiceSpec {
  return {
    id: `tcp:${VIP4}:${port}`, family: 4, protocol: 'tcp', address: VIP4, port, scheduler: 'rr',
    realServers: lab.rs4.map((a) => ({ id: `${a}:80`, address: a, port: 80, weight: 1, method: 'nat' as const })),
  };
}

async function main(): Promise<void> {
  removeStaleNamespaces();
  const lab = await createDataplaneLab('bench', { clientRouteToBack: true, nginxWorkers: 1 });
  // Headroom for the `Connection: close` rounds (~15,000 new connections/s at best here): all ports, and the
  // client's own TIME_WAIT ports reusable. Measured before this: at most 3,836 of 28,232 ports in TIME_WAIT.
  await lab.client.sh('sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv4.tcp_tw_reuse=1');
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-bench-'));
  const nft = createNftablesDataplane({ netns: lab.director.name });
  // Two processes by default: HAProxy runs one thread per CPU (two here), so this is the like-for-like setup.
  const userspace = await startUserspaceRunner(lab.director, JSON.parse(process.env.BENCH_USERSPACE_OPTIONS ?? '{"workers":2}') as Record<string, unknown>);
  const userspace1 = await startUserspaceRunner(lab.director, { workers: 1 });
  const handles = await startUserspaceRunner(lab.director, { workers: 2, engine: 'handles' });
  const haproxyCfg = join(dir, 'haproxy.cfg');
  writeFileSync(haproxyCfg, `global
  maxconn 8000
defaults
  mode tcp
  timeout connect 5s
  timeout client 60s
  timeout server 60s
listen lvsd_bench
  bind ${VIP4}:${HAPROXY_PORT}
  balance roundrobin
${lab.rs4.map((a, i) => `  server rs${i + 1} ${a}:80`).join('\n')}
`);
  const haproxy = lab.director.spawn('haproxy', ['-db', '-f', haproxyCfg]);
  let haproxyErr = '';
  haproxy.stderr?.on('data', (d: Buffer) => (haproxyErr += d.toString()));
  haproxy.once('exit', (code) => {
    if (code !== null) console.error(`haproxy exited (${code}): ${haproxyErr}`);
  });
  const rows: { name: string; keep: WrkResult; close: WrkResult }[] = [];
  try {
    await nft.apply({ services: [service(lab, 80)] });
    await userspace.call('apply', { services: [service(lab, USERSPACE_PORT)] });
    await userspace1.call('apply', { services: [service(lab, USERSPACE1_PORT)] });
    await handles.call('apply', { services: [service(lab, HANDLES_PORT)] });
    await waitForPort(lab.director, HAPROXY_PORT);
    const targets: [string, string][] = [
      ['direct', `http://${lab.rs4[0] ?? ''}/`],
      ['nftables', `http://${VIP4}/`],
      ['userspace', `http://${VIP4}:${USERSPACE_PORT}/`],
      ['userspace-1', `http://${VIP4}:${USERSPACE1_PORT}/`],
      ['userspace-handles', `http://${VIP4}:${HANDLES_PORT}/`],
      ['haproxy', `http://${VIP4}:${HAPROXY_PORT}/`],
    ];
    console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    console.log(`wrk -t2 -c${CONNS} -d${SECONDS}s, median of ${REPEATS} rounds; each round runs every setup once (interleaved, so load from other processes hits all alike)`);
    console.log(`lab at start: ${describeState(await labState(lab.director, lab.client))}`);
    const samples = new Map<string, { keep: WrkResult[]; close: WrkResult[]; failed: number }>();
    for (let round = 0; round < REPEATS; round++) {
      for (const [name, url] of targets) {
        if (!ONLY.includes(name)) continue;
        const s = samples.get(name) ?? { keep: [], close: [], failed: 0 };
        const keep = await wrk(lab, name, url, false);
        const close = await wrk(lab, name, url, true);
        if (keep === undefined) s.failed++;
        else s.keep.push(keep);
        if (close === undefined) s.failed++;
        else s.close.push(close);
        samples.set(name, s);
      }
    }
    const combine = (rs: WrkResult[]): WrkResult => ({ rps: median(rs.map((r) => r.rps)), p99ms: median(rs.map((r) => r.p99ms)), errors: rs.reduce((n, r) => n + r.errors, 0) });
    for (const [name, s] of samples) {
      const keep = combine(s.keep);
      const close = combine(s.close);
      rows.push({ name, keep, close });
      console.log(`${name.padEnd(17)} keepalive ${keep.rps.toFixed(0).padStart(7)} req/s p99 ${keep.p99ms.toFixed(2)} ms  |  new conn ${close.rps.toFixed(0).padStart(6)} conn/s p99 ${close.p99ms.toFixed(2)} ms  |  errors ${keep.errors + close.errors}` +
        (s.failed > 0 ? `  |  ${s.failed} of ${2 * REPEATS} rounds FAILED (median of the rest)` : ''));
      console.log(`${''.padEnd(17)} rounds: keepalive ${range(s.keep, (r) => r.rps, 0)} req/s, p99 ${range(s.keep, (r) => r.p99ms, 1)} ms  |  new conn ${range(s.close, (r) => r.rps, 0)} conn/s, p99 ${range(s.close, (r) => r.p99ms, 1)} ms`);
    }
    const get = (n: string): { keep: WrkResult; close: WrkResult } | undefined => rows.find((r) => r.name === n);
    const ratio = (a: string, b: string): void => {
      const x = get(a);
      const y = get(b);
      if (x === undefined || y === undefined) return;
      console.log(`${a} / ${b}: keepalive ${(x.keep.rps / y.keep.rps).toFixed(2)}×, new connections ${(x.close.rps / y.close.rps).toFixed(2)}×; ` +
        `p99 ${x.keep.p99ms.toFixed(1)} vs ${y.keep.p99ms.toFixed(1)} ms keepalive, ${x.close.p99ms.toFixed(1)} vs ${y.close.p99ms.toFixed(1)} ms new connections`);
    };
    ratio('nftables', 'direct');
    ratio('userspace', 'haproxy');
    ratio('userspace-1', 'haproxy');
    ratio('userspace-handles', 'haproxy');
    ratio('haproxy', 'direct');
    console.log(`load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);

  } finally {
    haproxy.kill('SIGKILL');
    await userspace.stop();
    await userspace1.stop();
    await handles.stop();
    await nft.close();
    await lab.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
