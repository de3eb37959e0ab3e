// What a chain costs the kernel's commit of a transaction that does not touch it (issue #19, goal 2). In a
// throwaway namespace: one element of a data map (mark → ipv4_addr) in a small table `probe` replaced by one
// netlink batch (nft-netlink-floor.ts, mode "data": nothing to validate), while another table holds N empty
// chains that nothing reaches. nf_tables_commit() visits every chain of every table in the namespace to swap
// its rule generation, whether or not the batch touched it: the slope is that walk, per chain.
// The anchor is the same batch with no other chain in the namespace (N = 0), measured in the same run.
// Second, the validation: the same N chains reached from a nat base chain through a verdict map (one element
// each, `… : goto cI`), and one element of that vmap replaced (mode "vmap": a goto element marks the table
// for validation, and the commit then walks the jump graph from the base chains). Its slope beside the first
// is what validation adds per reachable chain. lvsd keeps one chain per service since stop 29's second session (two before),
// so a table of 5,000 services is ~5,000 chains (~10,000 before).
//
//   node dist/bench/nft-chain-walk.js      (BENCH_WALK_CHAINS=0,2000,5000,10000,20000  BENCH_WALK_ROUNDS=41)
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { Topology, removeStaleNamespaces } from '../test/support/netns.js';

const CHAINS = (process.env.BENCH_WALK_CHAINS ?? '0,2000,5000,10000,20000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_WALK_ROUNDS ?? 41);
const here = dirname(fileURLToPath(import.meta.url));

type Exec = (cmd: string, args: string[], input?: string) => Promise<string>;

/** The table `probe`: the data map of mode "data", and svc4 with N elements going to N chains (mode "vmap": `reached`). */
function probeTable(n: number, reached: boolean): string {
  const lines = [
    'add table inet probe', 'delete table inet probe', 'add table inet probe',
    'add map inet probe probe4 { type mark : ipv4_addr; }',
    'add map inet probe svc4 { type ipv4_addr . inet_proto . inet_service : verdict; }',
    'add chain inet probe c0',
    'add chain inet probe pre { type nat hook prerouting priority -100; policy accept; }',
    'add rule inet probe pre ip daddr . meta l4proto . th dport vmap @svc4',
  ];
  if (reached) {
    for (let i = 1; i < n; i++) lines.push(`add chain inet probe c${i}`);
    for (let i = 0; i < n; i += 1000) {
      const elems: string[] = [];
      for (let j = i; j < Math.min(n, i + 1000); j++) elems.push(`10.${200 + (j >> 16)}.${(j >> 8) & 255}.${j & 255} . tcp . 80 : goto c${j}`);
      lines.push(`add element inet probe svc4 { ${elems.join(', ')} }`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** N empty chains in a table of their own, reached by nothing. */
function fillerTable(n: number): string {
  const lines = ['add table inet filler', 'delete table inet filler', 'add table inet filler'];
  for (let i = 0; i < n; i++) lines.push(`add chain inet filler f${i}`);
  return `${lines.join('\n')}\n`;
}

/** Median of one kind of batch at N chains: reached (mode vmap) or beside (mode data). */
async function once(exec: Exec, n: number, mode: 'data' | 'vmap'): Promise<number> {
  await exec('nft', ['-f', '-'], probeTable(n, mode === 'vmap'));
  await exec('nft', ['-f', '-'], fillerTable(mode === 'data' ? n : 0));
  const r = JSON.parse(await exec('node', [join(here, 'nft-netlink-floor.js'), 'probe', 'c0', String(ROUNDS), mode])) as { medianMs: number };
  return r.medianMs;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? my) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? NaN : num / den;
}

async function main(): Promise<void> {
  removeStaleNamespaces();
  const topo = await Topology.create('nftwalk');
  try {
    const host = await topo.addHost({ name: 'k', addresses: ['10.9.0.2/24'] });
    const exec: Exec = async (cmd, args, input) => (await host.exec(cmd, args, { timeoutMs: 600_000, ...(input === undefined ? {} : { input }) })).stdout;
    const results = new Map<string, number[]>();
    // Three passes, up and down and up, so that a change of the machine's load lands on every size alike.
    const order = [...CHAINS, ...[...CHAINS].reverse(), ...CHAINS];
    for (const n of order) {
      for (const mode of ['data', 'vmap'] as const) {
        const key = `${mode} ${n}`;
        results.set(key, [...(results.get(key) ?? []), await once(exec, n, mode)]);
      }
    }
    const at = (mode: string, n: number): number => median(results.get(`${mode} ${n}`) ?? []);
    const base = CHAINS[0] ?? 0;
    console.log(`one netlink batch (an element replaced), medians of ${ROUNDS}, median of 3 passes; the anchor: the same batch with ${base} other chains in the namespace`);
    for (const n of CHAINS) {
      const d = at('data', n);
      const v = at('vmap', n);
      console.log(`N=${String(n).padStart(6)} chains  data element, N chains in another table: ${d.toFixed(3)} ms (${(d / at('data', base)).toFixed(2)}× the anchor)  ` +
        `vmap element, N chains reached from it: ${v.toFixed(3)} ms (${(v / at('vmap', base)).toFixed(2)}× the anchor ${at('vmap', base).toFixed(3)} ms)`);
    }
    const walk = slope(CHAINS, CHAINS.map((n) => at('data', n))) * 1e6;
    const validate = slope(CHAINS, CHAINS.map((n) => at('vmap', n))) * 1e6;
    console.log(`per chain: the commit's walk ${walk.toFixed(1)} ns (chains of another table, not touched); with validation (chains reached through the vmap) ${validate.toFixed(1)} ns, so validation adds ${(validate - walk).toFixed(1)} ns`);
    console.log(`at 5,000 services: dispatch + slot chain (10,000 chains) ${(walk * 10_000 / 1e6).toFixed(3)} ms of walk; one slot chain (5,000) ${(walk * 5_000 / 1e6).toFixed(3)} ms`);
  } finally {
    topo.destroy();
  }
}

await main();
