// Benchmark: lvsd's restart adopting a loaded IPVS table (1,000 services × 10 real servers), beside
// `ipvsadm -S -n` reading the same table, in the same guest boot, interleaved rounds. Adoption is what
// a restart of lvsd does before it is ready: read the kernel's whole table, find it already right, send
// nothing, flush nothing. Prints each figure and the ratio; never fails on timing (it does fail if the
// adoption changed the table).
//
//   node dist/bench/ipvs-adopt.js           # on the host: boots the QEMU guest (test/vm/harness) and runs itself there
//   LVSD_BENCH_SERVICES=200 node dist/…     # a smaller table
//   LVSD_BENCH_BASELINE=/path/to/other/dist  # also adopt with another build's lvsd (its dist/, with this bench in it), same rounds
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVICES = Number(process.env.LVSD_BENCH_SERVICES ?? 1000);
const SERVERS = 10;
const ROUNDS = Number(process.env.LVSD_BENCH_ROUNDS ?? 3);

if (process.env.LVSD_IN_GUEST !== '1') {
  const { runInGuest } = await import('../test/vm/harness.js');
  // The bundle lvsd runs from in the guest: its load time is printed beside the adoption.
  (await import('../test/vm/bundle.js')).bundleLvsd();
  const r = await runInGuest({ command: `node ${fileURLToPath(import.meta.url)}`, timeoutMs: 1_800_000, env: { LVSD_BENCH_SERVICES: String(SERVICES), LVSD_BENCH_ROUNDS: String(ROUNDS), LVSD_BENCH_SOCKETS: process.env.LVSD_BENCH_SOCKETS ?? '', LVSD_BENCH_PROFILE: process.env.LVSD_BENCH_PROFILE ?? '', LVSD_BENCH_BASELINE: process.env.LVSD_BENCH_BASELINE ?? '' } });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  process.exit(r.status);
}

const { createIpvsDataplane } = await import('../daemon/dataplane/ipvs/backend.js');
const { memoryOwnership } = await import('../daemon/dataplane/ipvs/ownership.js');
const { IpvsClient } = await import('../daemon/ipvs/client.js');
type Desired = import('../daemon/dataplane/types.js').DesiredTable;

const vip = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const desired: Desired = {
  services: Array.from({ length: SERVICES }, (_, i) => ({
    id: `tcp:${vip(i)}:80`, family: 4 as const, protocol: 'tcp' as const, address: vip(i), port: 80, scheduler: 'wrr' as const,
    realServers: Array.from({ length: SERVERS }, (_, j) => ({ id: `10.200.${j}.${(i % 250) + 1}:8080`, address: `10.200.${j}.${(i % 250) + 1}`, port: 8080, weight: 1, method: 'nat' as const })),
  })),
};
const ms = (t0: number): number => performance.now() - t0;

// A restart's adoption runs cold (nothing compiled yet): LVSD_BENCH_CHILD=1 does only that, in a fresh process.
if (process.env.LVSD_BENCH_CHILD === '1') {
  const t0 = performance.now();
  const dp = await createIpvsDataplane({ ownership: memoryOwnership(desired.services.map((s) => s.id)), resyncIntervalMs: 0 });
  const opened = performance.now();
  const r = await dp.apply(desired);
  const applied = performance.now();
  await dp.close();
  if (r.operations !== 0 || r.failures !== undefined) throw new Error(`adoption made ${r.operations} operations: ${JSON.stringify(r.failures?.slice(0, 3))}`);
  process.stdout.write(JSON.stringify({ open: opened - t0, apply: applied - opened }));
  process.exit(0);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (x: number): string => (x < 10 ? x.toFixed(2) : x.toFixed(0));
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const ops = SERVICES * (1 + SERVERS);
say(`IPVS restart adoption benchmark — ${SERVICES} services × ${SERVERS} real servers (${ops} entries), real kernel in a QEMU TCG guest (${execSync('uname -r').toString().trim()}), ${ROUNDS} interleaved rounds`);

execSync('ipvsadm -C');
const loader = await createIpvsDataplane({ ownership: memoryOwnership(), resyncIntervalMs: 0 });
let t0 = performance.now();
const loaded = await loader.apply(desired);
await loader.close();
if (loaded.failures !== undefined) throw new Error(`loading the table failed: ${JSON.stringify(loaded.failures.slice(0, 3))}`);
say(`  table loaded by lvsd in ${fmt(ms(t0))} ms`);
const saved = execSync('ipvsadm -S -n', { maxBuffer: 64 << 20 }).toString();
if (saved.split('\n').filter((l) => l.startsWith('-')).length !== ops) throw new Error('the loaded table has the wrong number of entries');

// Loading lvsd itself (the bundle the guest runs lvsd from), beside a bare node start: what a restart pays
// before its adoption begins. Not part of the adoption figure; printed so it is not hidden either.
const { LVSD_BUNDLE } = await import('../test/vm/bundle-path.js');
const nodeStart: number[] = [];
const bundleStart: number[] = [];
for (let k = 0; k < ROUNDS; k++) {
  let t = performance.now();
  execSync('node -e 0');
  nodeStart.push(ms(t));
  t = performance.now();
  execSync(`node ${LVSD_BUNDLE} --version`);
  bundleStart.push(ms(t));
}

const BASELINE = process.env.LVSD_BENCH_BASELINE ?? '';
const baseTimes: number[] = [];
const saveTimes: number[] = [];
const coldOpen: number[] = [];
const coldApply: number[] = [];
const jsTimes: number[] = [];
const readTimes: number[] = [];
const adoptTimes: number[] = [];
const startTimes: number[] = [];
for (let k = 0; k < ROUNDS; k++) {
  // ipvsadm -S -n: one process reading the whole table (what an operator's backup or keepalived's check does).
  t0 = performance.now();
  execSync('ipvsadm -S -n > /dev/null');
  saveTimes.push(ms(t0));

  // lvsd restarted: a fresh process opens the backend over its ownership record and adopts the table.
  // LVSD_BENCH_PROFILE=dir: a CPU profile of each fresh-process adoption (node --cpu-prof) lands there.
  const prof = (process.env.LVSD_BENCH_PROFILE ?? '') === '' ? '' : `--cpu-prof --cpu-prof-dir=${process.env.LVSD_BENCH_PROFILE} `;
  const child = JSON.parse(execSync(`node ${prof}${fileURLToPath(import.meta.url)}`, { env: { ...process.env, LVSD_BENCH_CHILD: '1' } }).toString()) as { open: number; apply: number };
  coldOpen.push(child.open);
  coldApply.push(child.apply);
  // The same build reading through the JavaScript transport (the native table read switched off).
  const js = JSON.parse(execSync(`node ${fileURLToPath(import.meta.url)}`, { env: { ...process.env, LVSD_BENCH_CHILD: '1', LVSD_IPVS_NATIVE: '0' } }).toString()) as { open: number; apply: number };
  jsTimes.push(js.open + js.apply);
  if (BASELINE !== '') {
    const base = JSON.parse(execSync(`node ${BASELINE}/bench/ipvs-adopt.js`, { env: { ...process.env, LVSD_BENCH_CHILD: '1' } }).toString()) as { open: number; apply: number };
    baseTimes.push(base.open + base.apply);
  }

  // lvsd's read alone: the client's listTable (the netlink dumps and their decoding).
  const client = await IpvsClient.open();
  t0 = performance.now();
  const table = await client.listTable(false);
  readTimes.push(ms(t0));
  client.close();
  if (table.length !== SERVICES) throw new Error(`listTable read ${table.length} services`);
  if ((process.env.LVSD_BENCH_SOCKETS ?? '') !== '') {
    for (const n of (process.env.LVSD_BENCH_SOCKETS ?? '').split(',').map(Number)) {
      const c = await IpvsClient.open({ dumpSockets: n, window: Math.max(64, n * 4) });
      t0 = performance.now();
      await c.listTable(false);
      say(`    read, ${n} dump sockets: ${fmt(ms(t0))} ms`);
      c.close();
    }
  }

  // The same in this (warm) process: open the backend over its ownership record and apply the same table.
  t0 = performance.now();
  const dp = await createIpvsDataplane({ ownership: memoryOwnership(desired.services.map((s) => s.id)), resyncIntervalMs: 0 });
  const opened = performance.now();
  const r = await dp.apply(desired);
  adoptTimes.push(ms(opened));
  startTimes.push(ms(t0));
  await dp.close();
  if (r.operations !== 0 || r.failures !== undefined) throw new Error(`adoption made ${r.operations} operations: ${JSON.stringify(r.failures?.slice(0, 3))}`);
  say(`  round ${k + 1}: ipvsadm -S -n ${fmt(saveTimes[k] ?? NaN)} ms, lvsd restart (fresh process) open ${fmt(coldOpen[k] ?? NaN)} + adopt ${fmt(coldApply[k] ?? NaN)} ms (without the native read: ${fmt(jsTimes[k] ?? NaN)} ms)${BASELINE === '' ? '' : ` (baseline build: ${fmt(baseTimes[k] ?? NaN)} ms)`}, warm: read ${fmt(readTimes[k] ?? NaN)} ms, open + adopt ${fmt(startTimes[k] ?? NaN)} ms (apply ${fmt(adoptTimes[k] ?? NaN)} ms)`);
}
if (execSync('ipvsadm -S -n', { maxBuffer: 64 << 20 }).toString() !== saved) throw new Error('the table changed across the adoptions');
execSync('ipvsadm -C');
const save = median(saveTimes);
const start = median(startTimes);
const range = (xs: number[]): string => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
const cold = coldOpen.map((o, i) => o + (coldApply[i] ?? NaN));
say(`  ipvsadm -S -n (median/${ROUNDS})                        ${fmt(save)} ms (${range(saveTimes)})`);
say(`  lvsd restart, fresh process: open + adopt (median/${ROUNDS}) ${fmt(median(cold))} ms (${range(cold)}; open ${fmt(median(coldOpen))}, adopt ${fmt(median(coldApply))} ms, 0 operations) → adopt / ipvsadm -S = ${(median(cold) / save).toFixed(2)}`);
say(`  the same, native table read off (LVSD_IPVS_NATIVE=0)      ${fmt(median(jsTimes))} ms (${range(jsTimes)}) → ${(median(jsTimes) / save).toFixed(2)}`);
if (BASELINE !== '') say(`  the baseline build (${BASELINE}), fresh process: open + adopt (median/${ROUNDS}) ${fmt(median(baseTimes))} ms (${range(baseTimes)}) → ${(median(baseTimes) / save).toFixed(2)}; this build / baseline = ${(median(cold) / median(baseTimes)).toFixed(2)}`);
say(`  the same in a warm process (median/${ROUNDS})             ${fmt(start)} ms (${range(startTimes)}; apply alone ${fmt(median(adoptTimes))} ms) → ${(start / save).toFixed(2)}; read alone ${fmt(median(readTimes))} ms → ${(median(readTimes) / save).toFixed(2)}`);
say(`  before the adoption: node -e 0 ${fmt(median(nodeStart))} ms, lvsd's bundle loaded (lvsd --version) ${fmt(median(bundleStart))} ms (median/${ROUNDS}; not in the ratio)`);
