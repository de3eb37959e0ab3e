// Memory and CPU of 10,000 idle relayed connections, in one run on the same lab: lvsd's userspace
// dataplane with the native relay and with the handles engine (one process each), and HAProxy (mode
// tcp, the anchor). The client namespace opens the connections and leaves them silent; each real
// server namespace runs a holder that accepts and never answers (nginx would close idle keepalives).
// Printed per setup: RSS added by the connections, CPU spent accepting them, CPU per second while
// they sit idle. Never fails on a figure.
//
// Figures are scaled to 10,000 connections; 9,000 are opened by default, since a proxy holds two
// descriptors per connection and this machine's hard limit is 20,000.
//
//   node dist/bench/dataplane-idle.js          (BENCH_IDLE_CONNECTIONS=9000 BENCH_IDLE_SECONDS=10)
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDataplaneLab, startUserspaceRunner, VIP4, type DataplaneLab } from '../test/support/dataplane-lab.js';
import { waitForPort } from '../test/support/nginx.js';
import { removeStaleNamespaces } from '../test/support/netns.js';
import type { ServiceSpec } from '../daemon/dataplane/types.js';

const N = Number(process.env.BENCH_IDLE_CONNECTIONS ?? 9000);
const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const HOLD_PORT = 9000;

// Accepts and holds every connection (the real servers of this benchmark).
const HOLDER = `const s = require('node:net').createServer((c) => { c.on('error', () => {}); }); s.listen(${HOLD_PORT});`;
// Opens N connections to host:port, 200 at a time, prints "open" and holds them until killed.
const OPENER = `const net = require('node:net'); const [host, port, n] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])];
let open = 0, started = 0; const held = [];
function more() { while (started < n && started - open < 200) { started++; const c = net.connect(port, host); held.push(c);
  c.on('error', (e) => { console.error(e.message); process.exit(1); }); c.on('connect', () => { open++; if (open === n) console.log('open'); else more(); }); } }
more();`;

function usage(pid: number): { cpuMs: number; rssKiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { cpuMs: (Number(f[11]) + Number(f[12])) * 10, rssKiB: rss };
}

/** The pid of the director's process whose command line contains `needle`. */
async function pidOf(lab: DataplaneLab, needle: string): Promise<number> {
  const { stdout } = await lab.director.exec('ip', ['netns', 'pids', lab.director.name]);
  for (const pid of stdout.split(/\s+/).filter(Boolean)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').includes(needle)) return Number(pid);
    } catch {
      /* exited */
    }
  }
  throw new Error(`no process in ${lab.director.name} with ${needle}`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function measure(lab: DataplaneLab, name: string, pid: number, port: number): Promise<void> {
  const before = usage(pid);
  const opener = lab.client.spawn('node', ['-e', OPENER, VIP4, String(port), String(N)]);
  let err = '';
  opener.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    opener.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('open')) resolve();
    });
    opener.once('exit', (code) => {
      reject(new Error(`${name}: the opener exited (${String(code)}): ${err}`));
    });
  });
  const openS = (performance.now() - t0) / 1000;
  await sleep(2000); // the last connects to the real servers settle
  const held = usage(pid);
  await sleep(IDLE_S * 1000);
  const idle = usage(pid);
  opener.kill('SIGKILL');
  await sleep(2000);
  const per = 10_000 / N;
  console.log(
    `${name.padEnd(16)} RSS +${(((held.rssKiB - before.rssKiB) / 1024) * per).toFixed(1).padStart(6)} MiB per 10,000  |  ` +
      `accepting them ${((held.cpuMs - before.cpuMs) * per).toFixed(0).padStart(5)} ms CPU (${openS.toFixed(1)} s)  |  ` +
      `idle ${((idle.cpuMs - held.cpuMs) / IDLE_S).toFixed(1).padStart(5)} ms CPU/s  |  RSS at ${N}: ${(held.rssKiB / 1024).toFixed(0)} MiB`,
  );
}

async function main(): Promise<void> {
  removeStaleNamespaces();
  const lab = await createDataplaneLab('idle', { nginxWorkers: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-bench-'));
  const holders = lab.rs.map((ns) => ns.spawn('node', ['-e', HOLDER]));
  const native = await startUserspaceRunner(lab.director, { engine: 'native', tag: 'idle-native' });
  const handles = await startUserspaceRunner(lab.director, { engine: 'handles', tag: 'idle-handles' });
  const cfg = join(dir, 'haproxy.cfg');
  writeFileSync(cfg, `global
  maxconn ${N + 500}
defaults
  mode tcp
  timeout connect 5s
  timeout client 600s
  timeout server 600s
listen idle
  bind ${VIP4}:8001
  balance roundrobin
${lab.rs4.map((a, i) => `  server rs${i + 1} ${a}:${HOLD_PORT}`).join('\n')}
`);
  // HAProxy refuses a maxconn above what its descriptor limit allows (Node raises its own to the hard one).
  const haproxy = lab.director.spawn('sh', ['-c', `ulimit -n "$(ulimit -Hn)" && exec haproxy -db -f ${cfg}`]);
  let haproxyErr = '';
  haproxy.stderr?.on('data', (d: Buffer) => (haproxyErr += d.toString()));
  haproxy.once('exit', (code) => {
    if (code !== null) console.error(`haproxy exited (${code}): ${haproxyErr}`);
  });
  try {
    const svc = (port: number): ServiceSpec => ({
      id: `tcp:${VIP4}:${port}`, family: 4, protocol: 'tcp', address: VIP4, port, scheduler: 'rr',
      realServers: lab.rs4.map((a) => ({ id: `${a}:${HOLD_PORT}`, address: a, port: HOLD_PORT, weight: 1, method: 'nat' as const })),
    });
    await native.call('apply', { services: [svc(8000)] });
    await handles.call('apply', { services: [svc(8002)] });
    for (const ns of lab.rs) await waitForPort(ns, HOLD_PORT);
    await waitForPort(lab.director, 8001).catch((e: unknown) => {
      throw new Error(`haproxy: ${String(e)}: ${haproxyErr}`);
    });
    console.log(`${N} idle connections per setup, held ${IDLE_S} s; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    await measure(lab, 'userspace native', await pidOf(lab, 'idle-native'), 8000);
    await measure(lab, 'userspace handles', await pidOf(lab, 'idle-handles'), 8002);
    await measure(lab, 'haproxy', haproxy.pid ?? 0, 8001);
  } finally {
    haproxy.kill('SIGKILL');
    for (const h of holders) h.kill('SIGKILL');
    await native.stop();
    await handles.stop();
    await lab.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
