// Boots the QEMU guest of test/vm/harness.ts (a real IPVS kernel) and runs bench/failover-pair.js in it: a
// keepalived pair (the anchor), an lvsd pair and a mixed pair (keepalived master, lvsd backup) in the same boot,
// each with a DR, a TUN and a NAT virtual server. Under long-lived connections the master is stopped gracefully, restarted, then SIGKILLed (the mixed pair:
// SIGKILL only). Prints connections lost and kept, the longest gaps, failed new connections, whether the restart
// adopted the table, and lvsd's figures as ratios to keepalived's. Never fails on a figure.
//   node dist/bench/failover-guest.js [--connections 30] [--interval 300] [--rounds 1]
// LVSD_VM_HARNESS=/path/to/dist/test/vm/harness.js picks the harness (default: this tree's).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Harness = Pick<typeof import('../test/vm/harness.js'), 'runInGuest'>;
type Bundle = typeof import('../test/vm/bundle.js');

const here = dirname(fileURLToPath(import.meta.url));
const harnessPath = process.env.LVSD_VM_HARNESS ?? resolve(here, '..', 'test', 'vm', 'harness.js');
if (!existsSync(harnessPath)) {
  process.stderr.write(`failover-guest: no VM harness at ${harnessPath} (build first: npx tsc -p tsconfig.json)\n`);
  process.exit(2);
}
const harness = (await import(pathToFileURL(harnessPath).href)) as Harness;
// lvsd runs in the guest as a one-file bundle (see test/vm/bundle.ts for why).
((await import(pathToFileURL(join(dirname(harnessPath), 'bundle.js')).href)) as Bundle).bundleLvsd();
const args = process.argv.slice(2).map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
const command = `node ${join(here, 'failover-pair.js')} ${args}`;
process.stdout.write(`failover-guest: ${command}\n`);
const r = await harness.runInGuest({ command, timeoutMs: 20 * 60_000, cpus: 2, memoryMb: 1536 });
process.stdout.write(r.stdout);
process.stdout.write(`failover-guest: guest status ${r.status}${r.timedOut ? ' (timed out)' : ''} after ${(r.durationMs / 1000).toFixed(0)} s\n`);
if (r.status !== 0) {
  process.stdout.write(`--- stderr\n${r.stderr.slice(-4000)}\n--- console\n${r.console.slice(-3000)}\n`);
  process.exitCode = 1;
}
