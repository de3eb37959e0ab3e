// How long a dead director keeps its route at the ECMP router: from the crash (its core link down, lvsd and
// BIRD SIGKILLed — a machine dying, so no TCP close tells the router) to the router's kernel table without
// its next hop. Run twice in the same run, on the ECMP lab (test/support/ecmp-lab.ts, 2 directors, real
// BIRD 2 on both ends): with the BGP hold timer alone (hold 3 s, keepalive 1 s: the anchor) and with BFD
// (100 ms × 3). Prints each median (and the spread) side by side and the ratio BFD / hold timer.
// The time to detect is what remains of the hold or BFD interval when the crash happens, so the figures
// vary between rounds by up to one keepalive. Needs root (network namespaces), bird, nft, nginx.
//
//   node dist/bench/bgp-withdraw.js      (BENCH_BGP_ROUNDS=5)
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createEcmpLab, ECMP_VIP, type EcmpLab } from '../test/support/ecmp-lab.js';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_BGP_ROUNDS ?? 5);

async function gateways(lab: EcmpLab): Promise<string> {
  const { stdout } = await run('ip', ['-n', lab.router.name, 'route', 'show', `${ECMP_VIP}/32`]);
  return stdout;
}

/** Milliseconds from the crash of d1 until the router's route for the VIP no longer names it, per round. */
async function measure(bfd: boolean): Promise<number[]> {
  const lab = await createEcmpLab(bfd ? 'wdbfd' : 'wdhold', { directors: 2, realServers: 1, bfd });
  const out: number[] = [];
  try {
    await Promise.all(lab.directors.map((d) => lab.startDirector(d)));
    const [d1, d2] = lab.directors;
    if (d1 === undefined || d2 === undefined) throw new Error('the lab has no two directors');
    for (let r = 0; r < ROUNDS; r++) {
      await lab.waitNexthops([d1.core, d2.core], 60_000);
      // Let the sessions settle past their first keepalives, so every round starts from a steady state.
      await new Promise((res) => setTimeout(res, 1_500));
      const t0 = performance.now();
      await lab.crash(d1);
      for (;;) {
        if (!(await gateways(lab)).includes(d1.core)) break;
        if (performance.now() - t0 > 60_000) throw new Error('the route via d1 outlived 60 s');
        await new Promise((res) => setTimeout(res, 5));
      }
      out.push(performance.now() - t0);
      process.stderr.write(`${bfd ? 'bfd' : 'hold timer'} round ${String(r + 1)}: ${out.at(-1)?.toFixed(0) ?? ''} ms\n`);
      await lab.revive(d1);
    }
  } finally {
    await lab.destroy();
  }
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

const hold = await measure(false);
const bfd = await measure(true);
const row = (name: string, xs: number[]): string =>
  `${name.padEnd(28)} median ${median(xs).toFixed(0).padStart(5)} ms   min ${Math.min(...xs).toFixed(0).padStart(5)}   max ${Math.max(...xs).toFixed(0).padStart(5)}   (${String(xs.length)} rounds)`;
console.log(`director crash → route withdrawn at the router (BIRD 2, ${String(ROUNDS)} rounds each)`);
console.log(row('hold timer (hold 3 s) anchor', hold));
console.log(row('BFD (100 ms × 3)', bfd));
console.log(`ratio BFD / hold timer: ${(median(bfd) / median(hold)).toFixed(3)}`);
