// Runs INSIDE the QEMU guest (bench/failover-guest.ts boots it): the same DR failover scenario with a keepalived
// pair (lvs_sync_daemon … inst VI_1, the anchor) and an lvsd pair, one after the other on the same kernel and
// CPU; prints both sets of figures and lvsd's beside keepalived's.
//   node dist/bench/failover-pair.js [--connections 30] [--interval 300] [--rounds 1]
import { runFailover, type FailoverFigures } from '../test/vm/guest/failover-scenario.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const connections = arg('connections', 30);
const intervalMs = arg('interval', 300);
const rounds = arg('rounds', 1);
const log = (l: string): void => { process.stderr.write(`[failover] ${l}\n`); };

const row = (f: FailoverFigures): string =>
  `${f.kind.padEnd(10)} kept ${String(f.kept).padStart(3)}/${f.total}  synced before kill ${String(f.syncedBeforeKill).padStart(3)}  longest gap ${String(f.longestGapMs).padStart(6)} ms  ` +
  `takeover ${String(f.takeoverMs).padStart(6)} ms  master sync daemon +${f.syncMasterAfterMs} ms  new after takeover ${f.newAfterTakeover} (${f.newFailedAfterTakeover} failed)  during the gap ${f.newDuringGap} (${f.newFailedDuringGap} failed)` +
  (Object.keys(f.deadReasons).length > 0 ? `  lost: ${JSON.stringify(f.deadReasons)}` : '');

for (let r = 0; r < rounds; r++) {
  const anchor = await runFailover('keepalived', { connections, intervalMs, log });
  const lvsd = await runFailover('lvsd', { connections, intervalMs, log });
  process.stdout.write(`round ${r + 1}: ${connections} connections, a line every ${intervalMs} ms, master SIGKILLed\n`);
  process.stdout.write(`  ${row(anchor)}\n  ${row(lvsd)}\n`);
  const ratio = (a: number, b: number): string => (b === 0 ? (a === 0 ? '1.00' : '∞') : (a / b).toFixed(2));
  process.stdout.write(
    `  lvsd / keepalived: kept ${ratio(lvsd.kept, anchor.kept)}, longest gap ${ratio(lvsd.longestGapMs, anchor.longestGapMs)}, takeover ${ratio(lvsd.takeoverMs, anchor.takeoverMs)}, ` +
      `failed new after takeover ${lvsd.newFailedAfterTakeover} vs ${anchor.newFailedAfterTakeover}\n`,
  );
}
