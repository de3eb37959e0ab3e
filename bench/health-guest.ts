// The side-by-side with keepalived, which needs IPVS: boots the QEMU guest of test/vm/harness.ts
// (Debian kernel, the host's / read-only over 9p) and runs `health-scale.js --keepalived …` in it,
// so both checkers meet the same targets on the same emulated CPU. Arguments go to health-scale.
//   node dist/bench/health-guest.js [--sizes 100,1000,10000] [--types tcp,http] [--seconds 10] …
// LVSD_VM_HARNESS=/path/to/dist/test/vm/harness.js picks the harness (default: this tree's).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { targetsBinary } from './targets-binary.js';

type Harness = Pick<typeof import('../test/vm/harness.js'), 'runInGuest'>;

const here = dirname(fileURLToPath(import.meta.url));
const harnessPath = process.env.LVSD_VM_HARNESS ?? resolve(here, '..', 'test', 'vm', 'harness.js');
if (!existsSync(harnessPath)) {
  process.stderr.write(`health-guest: no VM harness at ${harnessPath} (build test/vm first, or set LVSD_VM_HARNESS)\n`);
  process.exit(2);
}
const harness = (await import(pathToFileURL(harnessPath).href)) as Harness;
targetsBinary(); // compiled here: the guest's view of the tree should not need a compiler run
const args = process.argv.slice(2).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
const command = `ulimit -n 65536; node ${join(here, 'health-scale.js')} --keepalived ${args}`;
process.stdout.write(`health-guest: ${command}\n`);
const r = await harness.runInGuest({
  command,
  timeoutMs: 60 * 60_000,
  cpus: 2,
  memoryMb: 3072,
  modules: ['ip_vs', 'ip_vs_rr', 'veth', 'bridge', 'nf_conntrack', 'nf_tables'], // nf_tables: ping targets are killed with nft
});
process.stdout.write(r.stdout);
process.stdout.write(`health-guest: guest status ${r.status}${r.timedOut ? ' (timed out)' : ''} after ${(r.durationMs / 1000).toFixed(0)} s\n`);
if (r.status !== 0) {
  process.stdout.write(`--- stderr\n${r.stderr.slice(-4000)}\n--- console\n${r.console.slice(-3000)}\n`);
  process.exitCode = 1;
}
