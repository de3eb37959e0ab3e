// Runs INSIDE the QEMU guest (bench/failover-guest.ts boots it): the same scenario (one virtual server per
// forwarding method, DR, TUN and NAT, on the same directors) with a keepalived pair
// (lvs_sync_daemon … inst VI_1, the anchor), an lvsd pair and a mixed pair (keepalived master, lvsd backup: the
// migration case), one after the other on the same kernel and CPU. Under the same long-lived connections the
// keepalived and lvsd masters are stopped gracefully (SIGTERM), started again, then SIGKILLed; the mixed pair's
// keepalived master is SIGKILLed. Prints every figure and lvsd's beside keepalived's.
//   node dist/bench/failover-pair.js [--connections 30] [--interval 300] [--rounds 1]
import { describeFailed, runFailover, type FailoverFigures, type Method, type PhaseFigures } from '../test/vm/guest/failover-scenario.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const connections = arg('connections', 30);
const intervalMs = arg('interval', 300);
const rounds = arg('rounds', 1);
const log = (l: string): void => { process.stderr.write(`[failover] ${l}\n`); };

const perMethod = (f: FailoverFigures): string =>
  (Object.entries(f.methods) as [Method, NonNullable<FailoverFigures['methods'][Method]>][]).map(([m, x]) => `${m.toUpperCase()} ${x.kept}/${x.total}`).join(' ');
const row = (f: FailoverFigures): string =>
  `${`${f.kind} kill`.padEnd(16)} kept ${String(f.kept).padStart(3)}/${f.total} (${perMethod(f)})  synced before kill ${String(f.syncedBeforeKill).padStart(3)}  longest gap ${String(f.longestGapMs).padStart(6)} ms  ` +
  `takeover ${String(f.takeoverMs).padStart(6)} ms  master sync daemon +${f.syncMasterAfterMs} ms  new after takeover ${f.newAfterTakeover} (${f.newFailedAfterTakeover} failed)  during the gap ${f.newDuringGap} (${f.newFailedDuringGap} failed)` +
  (f.newFailedAt.length > 0 ? `  failed: ${describeFailed(f.newFailedAt)} (from the takeover)` : '') +
  (Object.keys(f.deadReasons).length > 0 ? `  lost: ${JSON.stringify(f.deadReasons)}` : '');
const phaseRow = (kind: string, p: PhaseFigures): string =>
  `${`${kind} ${p.name}`.padEnd(16)} lost ${String(p.lost).padStart(3)}  longest gap ${String(p.longestGapMs).padStart(6)} ms  VIP moved in ${String(p.moveMs).padStart(6)} ms  new ${p.newTotal} (${p.newFailed} failed)` +
  (p.serviceConnsBefore === undefined ? '' : `  service Conns ${p.serviceConnsBefore} → ${String(p.serviceConnsAfter)} (${String(p.newCountedSinceBack)} new since back: ${(p.serviceConnsAfter ?? 0) >= p.serviceConnsBefore + (p.newCountedSinceBack ?? 0) ? 'adopted' : 're-created'})`) +
  (p.lost > 0 ? `  lost: ${JSON.stringify(p.lostReasons)}` : '') +
  (p.clientStallMs > 0 ? `  the client itself stalled up to ${p.clientStallMs} ms` : '') +
  (p.newFailed > 0 ? `  failed: ${describeFailed(p.newFailedAt)} (from the VIP's move)` : '');
const ratio = (a: number, b: number): string => (b === 0 ? (a === 0 ? '1.00' : '∞') : (a / b).toFixed(2));

for (let r = 0; r < rounds; r++) {
  const anchor = await runFailover('keepalived', { connections, intervalMs, log, steps: ['restart'] });
  const lvsd = await runFailover('lvsd', { connections, intervalMs, log, steps: ['restart'] });
  const mixed = await runFailover('mixed', { connections, intervalMs, log });
  process.stdout.write(`round ${r + 1}: ${connections} connections per method (DR, TUN, NAT), a line every ${intervalMs} ms; graceful stop, restart, then SIGKILL of the master\n`);
  for (const f of [anchor, lvsd]) for (const p of f.phases) process.stdout.write(`  ${phaseRow(f.kind, p)}\n`);
  process.stdout.write(`  ${row(anchor)}\n  ${row(lvsd)}\n  ${row(mixed)}\n`);
  const [aStop, aRestart] = anchor.phases;
  const [lStop, lRestart] = lvsd.phases;
  if (aStop !== undefined && aRestart !== undefined && lStop !== undefined && lRestart !== undefined) {
    process.stdout.write(
      `  lvsd / keepalived: graceful stop lost ${lStop.lost} vs ${aStop.lost}, longest gap ${ratio(lStop.longestGapMs, aStop.longestGapMs)}; ` +
        `restart lost ${lRestart.lost} vs ${aRestart.lost}, failed new ${lRestart.newFailed} vs ${aRestart.newFailed}, longest gap ${ratio(lRestart.longestGapMs, aRestart.longestGapMs)}\n`,
    );
  }
  process.stdout.write(
    `  lvsd / keepalived kill: kept ${ratio(lvsd.kept, anchor.kept)}, longest gap ${ratio(lvsd.longestGapMs, anchor.longestGapMs)}, takeover ${ratio(lvsd.takeoverMs, anchor.takeoverMs)}, ` +
      `failed new after takeover ${lvsd.newFailedAfterTakeover} vs ${anchor.newFailedAfterTakeover}\n` +
      `  mixed / keepalived kill: kept ${ratio(mixed.kept, anchor.kept)}, longest gap ${ratio(mixed.longestGapMs, anchor.longestGapMs)}, takeover ${ratio(mixed.takeoverMs, anchor.takeoverMs)}, ` +
      `failed new after takeover ${mixed.newFailedAfterTakeover} vs ${anchor.newFailedAfterTakeover}\n`,
  );
}
