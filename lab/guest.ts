// `LVSD_LAB=guest npm start`: for a kernel without IPVS, the LVS DR pair inside the QEMU guest of test/vm (Debian's
// kernel, which has ip_vs): boots it, shows lab/guest-demo.ts's live lines as they come, sends Enter on to the
// guest (fail the master over now), and returns the guest's exit status.
import { join } from 'node:path';
import { bundleLvsd } from '../test/vm/bundle.js';
import { CACHE_DIR, REPO_ROOT, runInGuest } from '../test/vm/harness.js';

export async function runGuestLab(failoverAfterS: number): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('LVSD_LAB=guest needs root (the guest builds network namespaces; QEMU reads / read-only)');
  const out = (l: string): void => { process.stdout.write(`${l}\n`); };
  out(`lvsd lab (guest): bundling lvsd, then booting a QEMU guest with Debian's kernel (IPVS); the kernel package is downloaded once into ${CACHE_DIR}.`);
  out('  Software emulation (TCG): expect a minute or more before the traffic starts.');
  out(`  The master (d1) is SIGKILLed after ${failoverAfterS} s of traffic, or when you press Enter.`);
  bundleLvsd();
  const r = await runInGuest({
    command: `node ${join(REPO_ROOT, 'dist', 'lab', 'guest-demo.js')}`,
    timeoutMs: 20 * 60_000,
    cpus: 2,
    memoryMb: 1536,
    env: { LVSD_LAB_FAILOVER_AFTER: String(failoverAfterS) },
    onStdout: (text) => process.stdout.write(text),
    onRunning: (poke) => {
      if (!process.stdin.isTTY) return;
      process.stdin.once('data', () => { poke('failover'); });
    },
  });
  process.stdin.pause();
  if (r.status !== 0) process.stdout.write(`lvsd lab (guest): the guest ended with status ${r.status}${r.timedOut ? ' (timed out)' : ''}\n${r.stderr.slice(-3000)}\n`);
  return r.status;
}
