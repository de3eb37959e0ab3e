// Reproduces the nftables dataplane's stray refusals under a new connection per request, with evidence:
// every request (client.ts: local port, times, who answered or the error), conntrack events on the director,
// and the RSTs seen by the client, the director and each real server, written to OUTDIR.
//   node dist/bench/nft-stray/repro.js [APPLIES] [CONCURRENCY] [OUTDIR]
// Default mode: APPLIES updates of the dataplane test's weights/scheduler/extra-service cycle, 20 ms apart.
// MODE=crash: nginx on rs2 stops under load, DETECT_MS (1500) later rs2 leaves the map (weight 0), then
// AFTER_MS (3000) more traffic. DRIFT=ms sets driftCheckIntervalMs (default 0, as the test);
// CONNTRACK=/nonexistent turns off the deletion of CLOSE entries (for an A/B run).
// Measured 2026-11-29 (2,000 applies, 8 clients): before the three-step update 3–6 refusals per run (every
// one a SYN that fell through the service chain during a commit), after it 0; crash mode with AFTER_MS=8000:
// 3, 2, 0 refusals after rs2 left the map without the CLOSE-entry deletion, 0, 0, 0 with it.
import { mkdirSync, writeFileSync, createWriteStream } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { createDataplaneLab, VIP4 } from '../../test/support/dataplane-lab.js';
import { createNftablesDataplane } from '../../daemon/dataplane/nftables/shards.js';
import type { DesiredTable, RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';

const [appliesArg = '200', concArg = '8', out = '/tmp/stray'] = process.argv.slice(2);
mkdirSync(out, { recursive: true });
const here = dirname(fileURLToPath(import.meta.url));
const lab = await createDataplaneLab('stray');
const dp = createNftablesDataplane({ netns: lab.director.name, driftCheckIntervalMs: Number(process.env.DRIFT ?? 0), ...(process.env.CONNTRACK === undefined ? {} : { conntrack: process.env.CONNTRACK }) });
const procs: ChildProcess[] = [];
const log = createWriteStream(join(out, 'applies.log'));
const stamp = (): string => (Date.now() / 1000).toFixed(6);

function rs(address: string, port: number, weight = 1): RealServerSpec {
  return { id: `${address}:${port}`, address, port, weight, method: 'nat' };
}
function http4(weights: number[], scheduler: ServiceSpec['scheduler'] = 'wrr'): ServiceSpec {
  return { id: `tcp:${VIP4}:80`, family: 4, protocol: 'tcp', address: VIP4, port: 80, scheduler, realServers: lab.rs4.map((a, i) => rs(a, 80, weights[i] ?? 1)) };
}
const table = (...services: ServiceSpec[]): DesiredTable => ({ services });

function record(ns: typeof lab.client, name: string, cmd: string, args: string[]): void {
  const child = ns.spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(createWriteStream(join(out, name)));
  procs.push(child);
}

try {
  await dp.apply(table(http4([1, 1, 1], 'rr')));
  record(lab.director, 'conntrack.log', 'conntrack', ['-E', '-p', 'tcp', '-o', 'timestamp']);
  record(lab.client, 'client-rst.txt', 'tcpdump', ['-l', '-nn', '-tt', '-i', 'eth0', 'tcp[tcpflags] & tcp-rst != 0']);
  record(lab.director, 'dir-rst.txt', 'tcpdump', ['-l', '-nn', '-tt', '-e', '-i', 'eth0', 'tcp[tcpflags] & tcp-rst != 0']);
  for (const [i, h] of lab.rs.entries()) record(h, `rs${i + 1}-rst.txt`, 'tcpdump', ['-l', '-nn', '-tt', '-i', 'eth0', 'tcp[tcpflags] & tcp-rst != 0']);
  await new Promise((r) => setTimeout(r, 1000));
  const client = lab.client.spawn('node', [join(here, 'client.js'), `http://${VIP4}/`, concArg, join(out, 'client.jsonl')], { stdio: ['pipe', 'pipe', 'pipe'] });
  let cout = '';
  client.stdout?.on('data', (d: Buffer) => (cout += d.toString()));
  await new Promise<void>((resolve) => client.stderr?.once('data', () => { resolve(); }));
  await new Promise((r) => setTimeout(r, 500));
  let outEnd = Infinity;
  if (process.env.MODE === 'crash') {
    // A real server stops (nginx SIGTERM) under load; after a health-check-like delay it leaves the map.
    record(lab.rs[1] ?? lab.client, 'rs2-syn.txt', 'tcpdump', ['-l', '-nn', '-tt', '-i', 'eth0', 'tcp[tcpflags] & (tcp-syn|tcp-rst) != 0']);
    await new Promise((r) => setTimeout(r, 800));
    log.write(`${stamp()} stop rs2\n`);
    await lab.nginx[1]?.stop();
    log.write(`${stamp()} stopped rs2\n`);
    await new Promise((r) => setTimeout(r, Number(process.env.DETECT_MS ?? 1500)));
    const t0 = stamp();
    await dp.apply(table(http4([1, 0, 1], 'rr')));
    outEnd = Date.now();
    log.write(`${t0} ${(outEnd / 1000).toFixed(6)} rs2 out\n`);
    await new Promise((r) => setTimeout(r, Number(process.env.AFTER_MS ?? 3000)));
  }
  const variants = JSON.parse(process.env.VARIANTS ?? '[[1, 1, 1], [2, 1, 0], [0, 1, 1], [1, 0, 3], [5, 5, 1]]') as number[][];
  const shEvery = Number(process.env.SH_EVERY ?? 3);
  const applies = Number(appliesArg);
  for (let i = 0; i < (process.env.MODE === 'crash' ? 0 : applies); i++) {
    const w = variants[i % variants.length] ?? [1, 1, 1];
    const extra: ServiceSpec[] = i % 2 === 0 ? [{ ...http4([1, 1, 1]), id: `tcp:${VIP4}:81`, port: 81 }] : [];
    const sched = shEvery > 0 && i % shEvery === 0 ? 'sh' : 'wrr';
    const t0 = stamp();
    const rep = await dp.apply(table(http4(w, sched), ...extra));
    log.write(`${t0} ${stamp()} apply ${i} ${sched} ${w.join(':')} extra=${extra.length} ops=${rep.operations}\n`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 500));
  writeFileSync(join(out, 'table.txt'), (await lab.director.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout);
  const done = new Promise<void>((resolve) => client.once('exit', () => { resolve(); }));
  client.stdin?.end();
  await done;
  writeFileSync(join(out, 'result.json'), cout);
  process.stdout.write(cout);
  if (outEnd !== Infinity) {
    const failures = (JSON.parse(cout) as { failures: { t0: number }[] }).failures;
    process.stdout.write(`failed after rs2 left the map: ${failures.filter((f) => f.t0 > outEnd).length}\n`);
  }
} finally {
  await new Promise((r) => setTimeout(r, 300));
  for (const p of procs) p.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  log.end();
  await dp.close();
  await lab.destroy();
}
