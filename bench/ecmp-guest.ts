// Boots the QEMU guest of test/vm/harness.ts (a real IPVS kernel) and runs bench/ecmp-pair.js in it: three lvsd
// directors behind an ECMP router with the sync daemon in both roles, and the same without sync (the control),
// each under 30 long-lived connections through a director crash (and a graceful stop). Never fails on a figure.
//   node dist/bench/ecmp-guest.js
// LVSD_VM_HARNESS=/path/to/dist/test/vm/harness.js picks the harness (default: this tree's).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Harness = Pick<typeof import('../test/vm/harness.js'), 'runInGuest'>;
type Bundle = typeof import('../test/vm/bundle.js');

const here = dirname(fileURLToPath(import.meta.url));
const harnessPath = process.env.LVSD_VM_HARNESS ?? resolve(here, '..', 'test', 'vm', 'harness.js');
if (!existsSync(harnessPath)) {
  process.stderr.write(`ecmp-guest: no VM harness at ${harnessPath} (build first: npx tsc -p tsconfig.json)\n`);
  process.exit(2);
}
const harness = (await import(pathToFileURL(harnessPath).href)) as Harness;
// lvsd runs in the guest as a one-file bundle (see test/vm/bundle.ts for why).
((await import(pathToFileURL(join(dirname(harnessPath), 'bundle.js')).href)) as Bundle).bundleLvsd();
const command = `node ${join(here, 'ecmp-pair.js')}`;
process.stdout.write(`ecmp-guest: ${command}\n`);
const r = await harness.runInGuest({ command, timeoutMs: 30 * 60_000, cpus: 2, memoryMb: 1536 });
process.stdout.write(r.stdout);
process.stdout.write(`ecmp-guest: guest status ${r.status}${r.timedOut ? ' (timed out)' : ''} after ${(r.durationMs / 1000).toFixed(0)} s\n`);
if (r.status !== 0) {
  process.stdout.write(`--- stderr\n${r.stderr.slice(-4000)}\n--- console\n${r.console.slice(-3000)}\n`);
  process.exitCode = 1;
}
