// Benchmark: programming IPVS, lvsd (generic netlink, pipelined) vs ipvsadm, on a real IPVS kernel.
// 1,000 virtual services × 10 real servers from empty, then one weight change in the full table.
// Anchors measured in the same run: `ipvsadm --restore` of the same set, and ipvsadm one command
// per change. Prints figures and ratios; never fails on timing.
//
//   node dist/bench/ipvs-program.js         # on the host: boots the QEMU guest (test/vm/harness) and runs itself there
//   LVSD_BENCH_SERVICES=200 node dist/…     # a smaller table
import { execFileSync, execSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVICES = Number(process.env.LVSD_BENCH_SERVICES ?? 1000);
const SERVERS = 10;

if (process.env.LVSD_IN_GUEST !== '1') {
  const { runInGuest } = await import('../test/vm/harness.js');
  const r = await runInGuest({ command: `node ${fileURLToPath(import.meta.url)}`, timeoutMs: 2_400_000, env: { LVSD_BENCH_SERVICES: String(SERVICES) } });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  process.exit(r.status);
}

const { createIpvsDataplane } = await import('../daemon/dataplane/ipvs/backend.js');
const { memoryOwnership } = await import('../daemon/dataplane/ipvs/ownership.js');
type Desired = import('../daemon/dataplane/types.js').DesiredTable;

const vip = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
function table(): Desired {
  return {
    services: Array.from({ length: SERVICES }, (_, i) => ({
      id: `tcp:${vip(i)}:80`, family: 4 as const, protocol: 'tcp' as const, address: vip(i), port: 80, scheduler: 'wrr' as const,
      realServers: Array.from({ length: SERVERS }, (_, j) => ({ id: `10.200.${j}.${(i % 250) + 1}:8080`, address: `10.200.${j}.${(i % 250) + 1}`, port: 8080, weight: 1, method: 'nat' as const })),
    })),
  };
}
function restoreText(t: Desired): string[] {
  const lines: string[] = [];
  for (const s of t.services) {
    lines.push(`-A -t ${s.address ?? ''}:${s.port ?? 0} -s ${s.scheduler}`);
    for (const r of s.realServers) lines.push(`-a -t ${s.address ?? ''}:${s.port ?? 0} -r ${r.address}:${r.port} -m -w ${r.weight}`);
  }
  return lines;
}
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const entries = (): number => execSync('ipvsadm -Sn').toString().split('\n').filter((l) => l.startsWith('-')).length;
const dir = mkdtempSync(join(tmpdir(), 'lvsd-bench-'));
const desired = table();
const ops = SERVICES * (1 + SERVERS);
const fmt = (x: number): string => (x < 10 ? x.toFixed(2) : x.toFixed(0));
// Each figure as soon as it is measured (a slow guest must not lose the ones already taken).
const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
say(`IPVS programming benchmark — ${SERVICES} services × ${SERVERS} real servers (${SERVICES * (1 + SERVERS)} entries), real kernel in a QEMU TCG guest (${execSync('uname -r').toString().trim()})`);

// --- lvsd: full table from empty
execSync('ipvsadm -C');
let dp = await createIpvsDataplane({ ownership: memoryOwnership(), resyncIntervalMs: 0 });
let t0 = process.hrtime.bigint();
const full = await dp.apply(desired);
const lvsdFull = ms(t0);
if (full.failures !== undefined || entries() !== ops) throw new Error(`lvsd programmed ${entries()} entries, want ${ops}: ${JSON.stringify(full.failures?.slice(0, 3))}`);
say(`  lvsd full program from empty      ${fmt(lvsdFull)} ms   (${fmt(lvsdFull / ops * 1000)} µs/entry)`);

// --- lvsd: one weight change in the full table (median of 21)
const changeTimes: number[] = [];
for (let k = 0; k < 21; k++) {
  const rs = desired.services[(k * 37) % SERVICES]?.realServers[k % SERVERS];
  if (rs === undefined) throw new Error('bench table shape');
  rs.weight = rs.weight === 1 ? 5 : 1;
  t0 = process.hrtime.bigint();
  const r = await dp.apply(desired);
  changeTimes.push(ms(t0));
  if (r.operations !== 1) throw new Error(`one change took ${r.operations} operations`);
}
const lvsdChange = median(changeTimes);
say(`  lvsd one weight change (median/21) ${fmt(lvsdChange)} ms  (min ${fmt(Math.min(...changeTimes))}, max ${fmt(Math.max(...changeTimes))})`);

// --- one netlink round trip (GET_INFO), for scale
const rtt: number[] = [];
for (let k = 0; k < 21; k++) {
  t0 = process.hrtime.bigint();
  await dp.info();
  rtt.push(ms(t0));
}
const roundTrip = median(rtt);
say(`  one netlink round trip (GET_INFO)  ${fmt(roundTrip)} ms  (median/21: the floor for any single change from Node in this guest)`);

// --- lvsd restarted: adopt the full table (reads all of it, 0 operations)
await dp.close();
dp = await createIpvsDataplane({ ownership: memoryOwnership(desired.services.map((s) => s.id)), resyncIntervalMs: 0 });
t0 = process.hrtime.bigint();
const adopt = await dp.apply(desired);
const lvsdAdopt = ms(t0);
if (adopt.operations !== 0) throw new Error(`restart adoption made ${adopt.operations} operations`);
say(`  lvsd restart: adopt full table     ${fmt(lvsdAdopt)} ms  (reads ${ops} entries, 0 operations)`);
await dp.close();

// --- anchor: ipvsadm --restore of the same set
const restoreFile = join(dir, 'restore');
writeFileSync(restoreFile, restoreText(table()).join('\n') + '\n');
execSync('ipvsadm -C');
t0 = process.hrtime.bigint();
execSync(`ipvsadm -R < ${restoreFile}`);
const restore = ms(t0);
if (entries() !== ops) throw new Error('ipvsadm --restore programmed a different table');
say(`  ipvsadm --restore, same set       ${fmt(restore)} ms   → lvsd / restore = ${(lvsdFull / restore).toFixed(2)}`);

// --- anchor: one ipvsadm process per change (a sample, extrapolated: 11,000 processes take too long under TCG)
const sample = restoreText(table()).slice(0, 11 * 5);
execSync('ipvsadm -C');
t0 = process.hrtime.bigint();
for (const line of sample) execFileSync('ipvsadm', line.split(' '));
const perCmd = ms(t0) / sample.length;
const perCmdFull = perCmd * ops;
// One weight change with ipvsadm -e in a full table.
execSync(`ipvsadm -C && ipvsadm -R < ${restoreFile}`);
const editTimes: number[] = [];
for (let k = 0; k < 7; k++) {
  t0 = process.hrtime.bigint();
  execFileSync('ipvsadm', ['-e', '-t', `${vip(k)}:80`, '-r', `10.200.0.${(k % 250) + 1}:8080`, '-m', '-w', String(k + 2)]);
  editTimes.push(ms(t0));
}
const ipvsadmEdit = median(editTimes);
execSync('ipvsadm -C');

say(`  ipvsadm one command per entry     ${fmt(perCmdFull)} ms (extrapolated from ${sample.length} commands, ${fmt(perCmd)} ms each) → lvsd / per-command = ${(lvsdFull / perCmdFull).toFixed(4)}`);
say(`  ipvsadm -e one weight change       ${fmt(ipvsadmEdit)} ms  → lvsd / ipvsadm -e = ${(lvsdChange / ipvsadmEdit).toFixed(3)}`);
