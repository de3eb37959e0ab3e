// Maglev lookup tables (daemon/dataplane/maglev.ts) for D directors × B real servers, beside plain hash-mod-N
// measured in the same run as the control, and the Maglev paper's published figures (NSDI 2016, §5.3):
//   generation 1.8 ms at M = 65,537 and N = 1,000 (their C++ on a 2016 server);
//   with 1 % of backends failed, ≈ 2.3 % of entries change at M = 65,537.
// Printed per row: table generation (median), the anchor (filling the same M slots with hash mod N, the least
// work a table of that size takes) and the ratio; load imbalance (largest backend's share over the mean);
// the fraction of flows that change real server when one real server leaves, when 1 % leave, and when a
// director leaves and ECMP moves its flows to the others (each director built its table itself, from the real
// servers in the order it happened to learn them).
//
//   node dist/bench/maglev.js      (BENCH_MAGLEV_SIZES=4093,65537  BENCH_MAGLEV_SERVERS=10,100,1000
//                                   BENCH_MAGLEV_DIRECTORS=3  BENCH_MAGLEV_ROUNDS=9  BENCH_MAGLEV_FLOWS=200000)
import { hash32, maglevTable, slotCounts, type MaglevBackend, type MaglevTable } from '../daemon/dataplane/maglev.js';

const SIZES = (process.env.BENCH_MAGLEV_SIZES ?? '4093,65537').split(',').map(Number);
const SERVERS = (process.env.BENCH_MAGLEV_SERVERS ?? '10,100,1000').split(',').map(Number);
const DIRECTORS = Number(process.env.BENCH_MAGLEV_DIRECTORS ?? 3);
const ROUNDS = Number(process.env.BENCH_MAGLEV_ROUNDS ?? 9);
const FLOWS = Number(process.env.BENCH_MAGLEV_FLOWS ?? 200_000);

const PAPER_GEN_MS = 1.8; // M = 65,537, N = 1,000
const PAPER_CHANGED_1PCT = 0.023; // M = 65,537, 1 % of backends failed

/** A seeded PRNG (mulberry32) so every run uses the same flows and the same "arrival orders". */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(xs: readonly T[], rand: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

function timedMs(fn: () => unknown): number {
  const out: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

const servers = (b: number): MaglevBackend[] => Array.from({ length: b }, (_, i) => ({ name: `10.1.${String(i >> 8)}.${String((i & 255) + 1)}:80` }));

/** The control: hash mod N over the list as given, materialised as a table of M slots (the anchor's work). */
function modTable(list: readonly string[], size: number): Int32Array {
  const slots = new Int32Array(size);
  for (let s = 0; s < size; s++) slots[s] = s % list.length;
  return slots;
}

function maglevOf(t: MaglevTable, h: number): string {
  return t.backends[t.slots[h % t.slots.length] as number] as string;
}

/** Fraction of flows whose real server differs between two choosers. */
function moved(flows: Uint32Array, a: (h: number) => string, b: (h: number) => string): number {
  let n = 0;
  for (const h of flows) if (a(h) !== b(h)) n++;
  return n / flows.length;
}

const pct = (x: number): string => `${(100 * x).toFixed(2)} %`;

const rand = rng(14);
const flows = new Uint32Array(FLOWS);
for (let i = 0; i < FLOWS; i++) flows[i] = hash32(`198.51.${String(i >> 16)}.${String((i >> 8) & 255)}:${String(i & 255)}>192.0.2.10:443`, 0x9e3779b9);

console.log(`maglev: ${String(FLOWS)} flows, ${String(DIRECTORS)} directors, median of ${String(ROUNDS)} rounds, node ${process.version}`);
console.log('M        B     gen ms  anchor ms  ratio  imbalance  | 1 RS leaves: maglev  mod-N   ideal  | 1 % leave: maglev (theirs + more)  mod-N  | director leaves: maglev  mod-N');
for (const m of SIZES) {
  for (const b of SERVERS) {
    const all = servers(b);
    const names = all.map((s) => s.name);
    const gen = timedMs(() => maglevTable(all, m));
    const anchor = timedMs(() => modTable(names, m));
    const table = maglevTable(all, m);
    const counts = slotCounts(table);
    const imbalance = Math.max(...counts) / (m / b) - 1;

    // One real server leaves (the first: any would do).
    const less = maglevTable(all.slice(1), m);
    const oneMag = moved(flows, (h) => maglevOf(table, h), (h) => maglevOf(less, h));
    const oneMod = moved(flows, (h) => names[h % b] as string, (h) => names.slice(1)[h % (b - 1)] as string);

    // 1 % leave (at least one), chosen at random.
    const k = Math.max(1, Math.round(b / 100));
    const goneSet = new Set(shuffled(names, rand).slice(0, k));
    const kept = names.filter((n) => !goneSet.has(n));
    const fewer = maglevTable(kept.map((n) => ({ name: n })), m);
    const pctMag = moved(flows, (h) => maglevOf(table, h), (h) => maglevOf(fewer, h));
    const pctMod = moved(flows, (h) => names[h % b] as string, (h) => kept[h % kept.length] as string);
    const ownOfGone = moved(flows, (h) => (goneSet.has(maglevOf(table, h)) ? 'gone' : 'kept'), () => 'kept');

    // A director leaves: its flows go to another director, which built its own table from the real servers in
    // the order it learnt them. Maglev sorts, so the tables are equal; hash mod N follows the list's order.
    const orders = Array.from({ length: DIRECTORS }, () => shuffled(names, rand));
    const tables = orders.map((o) => maglevTable(o.map((n) => ({ name: n })), m));
    const dirOf = (h: number): number => (h >>> 16) % DIRECTORS; // ECMP's choice, independent of the slot
    const nextDir = (d: number): number => (d + 1) % DIRECTORS;
    const t0 = tables[0] as MaglevTable;
    const o0 = orders[0] as string[];
    const f0 = flows.filter((h) => dirOf(h) === 0); // the leaving director's flows
    const dirMag = moved(f0, (h) => maglevOf(t0, h), (h) => maglevOf(tables[nextDir(0)] as MaglevTable, h));
    const dirMod = moved(f0, (h) => o0[h % b] as string, (h) => (orders[nextDir(0)] as string[])[h % b] as string);

    console.log(
      `${String(m).padEnd(8)} ${String(b).padEnd(5)} ${gen.toFixed(2).padStart(6)}  ${anchor.toFixed(3).padStart(9)}  ${(gen / anchor).toFixed(1).padStart(5)}  ${pct(imbalance).padStart(9)}  |`
      + `  ${pct(oneMag).padStart(17)} ${pct(oneMod).padStart(8)} ${pct(1 / b).padStart(7)}  |  ${pct(pctMag).padStart(9)} (${pct(ownOfGone)} + ${pct(pctMag - ownOfGone)}) ${pct(pctMod).padStart(7)}  |  ${pct(dirMag).padStart(16)} ${pct(dirMod).padStart(7)}`,
    );
    if (m === 65_537 && b === 1000) {
      console.log(`  paper (M = 65,537, N = 1,000): generation ${String(PAPER_GEN_MS)} ms → this run ${(gen / PAPER_GEN_MS).toFixed(2)}× the paper; `
        + `1 % failed: ${pct(PAPER_CHANGED_1PCT)} of entries changed → this run ${pct(pctMag)} (${(pctMag / PAPER_CHANGED_1PCT).toFixed(2)}× the paper), `
        + `of which ${pct(ownOfGone)} were the failed servers' own and ${pct(pctMag - ownOfGone)} more (${((pctMag - ownOfGone) / PAPER_CHANGED_1PCT).toFixed(2)}× the paper)`);
    }
  }
}
