// Runs INSIDE the QEMU guest (bench/ecmp-guest.ts boots it): the active-active IPVS lab of
// test/vm/guest/ecmp-scenario.ts twice on the same kernel and CPU — three lvsd directors (DR, mh) behind an ECMP
// router with the sync daemon in both roles, then the same without any sync daemon (the control: what mh alone
// keeps). Under 30 long-lived connections director d1 crashes; in the first run d2 then stops gracefully.
// Prints broken connections, failed new connections, gaps, withdraw times, the spread over directors, and the
// broken connections of the sync run beside the control's.
//   node dist/bench/ecmp-pair.js
import { runEcmp, type ClientWindow, type EcmpFigures } from '../test/vm/guest/ecmp-scenario.js';

const log = (l: string): void => { process.stderr.write(`[ecmp] ${l}\n`); };
const win = (w: ClientWindow): string =>
  `broken ${String(w.broken)}  longest gap ${String(w.longestGapMs)} ms  new ${String(w.newTotal)} (${String(w.newFailed)} failed${w.newFailed > 0 ? ` ${JSON.stringify(w.newErrors)}` : ''})`;
const spread = (f: EcmpFigures): string => {
  const fair = f.flows / Object.keys(f.counted).length;
  return Object.entries(f.counted).map(([d, n]) => `${d} ${String(n)} (${(((n - fair) / fair) * 100).toFixed(1)} %)`).join(', ');
};
const report = (name: string, f: EcmpFigures): void => {
  process.stdout.write(`${name}: ${String(f.flows)} fixed flows per director (IPVS Conns): ${spread(f)}; router's hash ${JSON.stringify(f.predicted)}\n`);
  process.stdout.write(`${name}: long-lived per director ${JSON.stringify(f.longVia)}, held before the crash ${JSON.stringify(f.held)}\n`);
  process.stdout.write(`${name} crash: route withdrawn after ${String(f.withdrawMs)} ms (hold 3 s, polled); ${String(f.ofD1)} of d1's flows moved, replay: ${String(Object.keys(f.afterCrash.failed).length)} failed, ${String(f.afterCrash.otherServer.length)} on another real server\n`);
  process.stdout.write(`${name} crash: long-lived ${String(f.client.total)}: ${win(f.client.crash)}; new before the withdraw ${String(f.client.crashGap.newTotal)} (${String(f.client.crashGap.newFailed)} failed), after ${String(f.client.crashAfter.newTotal)} (${String(f.client.crashAfter.newFailed)} failed)\n`);
  if (f.stop !== undefined && f.client.stop !== undefined) {
    process.stdout.write(`${name} graceful stop: exit ${String(f.stop.exit)}, route gone after ${String(f.stop.withdrawMs)} ms; ${win(f.client.stop)}; replay ${String(Object.keys(f.stop.replay.failed).length)} failed\n`);
  }
};

const withSync = await runEcmp({ log });
report('sync both + mh', withSync);
const control = await runEcmp({ log, sync: false, gracefulStop: false });
report('mh, no sync (control)', control);
process.stdout.write(`broken across the crash: ${String(withSync.client.crash.broken)} of ${String(withSync.long)} with sync, ${String(control.client.crash.broken)} of ${String(control.long)} without (the long-lived connections the crash moved to another director: ${String(control.longVia.d1 ?? 0)} were d1's)\n`);
