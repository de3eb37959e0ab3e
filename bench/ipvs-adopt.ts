// Benchmark: lvsd's restart adopting a loaded IPVS table (1,000 services × 10 real servers), beside
// `ipvsadm -S -n` reading the same table, in the same guest boot, interleaved rounds. Adoption is what
// a restart of lvsd does before it is ready: read the kernel's whole table, find it already right, send
// nothing, flush nothing. Prints each figure and the ratio; never fails on timing (it does fail if the
// adoption changed the table).
//
//   node dist/bench/ipvs-adopt.js           # on the host: boots the QEMU guest (test/vm/harness) and runs itself there
//   LVSD_BENCH_SERVICES=200 node dist/…     # a smaller table
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SERVICES = Number(process.env.LVSD_BENCH_SERVICES ?? 1000);
const SERVERS = 10;
const ROUNDS = Number(process.env.LVSD_BENCH_ROUNDS ?? 3);

if (process.env.LVSD_IN_GUEST !== '1') {
  const { runInGuest } = await import('../test/vm/harness.js');
  const r = await runInGuest({ command: `node ${fileURLToPath(import.meta.url)}`, timeoutMs: 1_800_000, env: { LVSD_BENCH_SERVICES: String(SERVICES), LVSD_BENCH_ROUNDS: String(ROUNDS), LVSD_BENCH_SOCKETS: process.env.LVSD_BENCH_SOCKETS ?? '' } });
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

const saveTimes: number[] = [];
const readTimes: number[] = [];
const adoptTimes: number[] = [];
const startTimes: number[] = [];
for (let k = 0; k < ROUNDS; k++) {
  // ipvsadm -S -n: one process reading the whole table (what an operator's backup or keepalived's check does).
  t0 = performance.now();
  execSync('ipvsadm -S -n > /dev/null');
  saveTimes.push(ms(t0));

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

  // lvsd restarted: open the backend over its ownership record and apply the same table (0 operations).
  t0 = performance.now();
  const dp = await createIpvsDataplane({ ownership: memoryOwnership(desired.services.map((s) => s.id)), resyncIntervalMs: 0 });
  const opened = performance.now();
  const r = await dp.apply(desired);
  adoptTimes.push(ms(opened));
  startTimes.push(ms(t0));
  await dp.close();
  if (r.operations !== 0 || r.failures !== undefined) throw new Error(`adoption made ${r.operations} operations: ${JSON.stringify(r.failures?.slice(0, 3))}`);
  say(`  round ${k + 1}: ipvsadm -S -n ${fmt(saveTimes[k] ?? NaN)} ms, lvsd read ${fmt(readTimes[k] ?? NaN)} ms, lvsd open + adopt ${fmt(startTimes[k] ?? NaN)} ms (apply ${fmt(adoptTimes[k] ?? NaN)} ms)`);
}
if (execSync('ipvsadm -S -n', { maxBuffer: 64 << 20 }).toString() !== saved) throw new Error('the table changed across the adoptions');
execSync('ipvsadm -C');
const save = median(saveTimes);
const start = median(startTimes);
say(`  ipvsadm -S -n (median/${ROUNDS})             ${fmt(save)} ms`);
say(`  lvsd read alone (median/${ROUNDS})          ${fmt(median(readTimes))} ms  → read / ipvsadm -S = ${(median(readTimes) / save).toFixed(2)}`);
say(`  lvsd restart: open + adopt (median/${ROUNDS}) ${fmt(start)} ms  (apply alone ${fmt(median(adoptTimes))} ms, 0 operations, table unchanged) → adopt / ipvsadm -S = ${(start / save).toFixed(2)}`);
