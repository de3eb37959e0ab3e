// Runs INSIDE the guest: two lvsd directors in DR with VRRP and the IPVS sync daemon (follow-vrrp, lvsd's sync
// defaults), 30 long-lived connections through the VIP exchanging a line every 300 ms. Under the same
// connections: a graceful stop of the master (SIGTERM; the backup takes over), lvsd started again on it (it
// adopts its kernel table and preempts), then a SIGKILL of the master's lvsd and its VRRP engine. What must
// hold: no connection lost at any step, no new connection failed across the restart, the virtual server kept
// (not flushed and re-created), the backup had the connections synced before the kill, no new connection fails
// once the backup holds the VIP, and the new master runs the master sync daemon. Then the migration case: a
// keepalived master (lvs_sync_daemon) with an lvsd backup; keepalived is SIGKILLed and lvsd keeps every
// connection. Figures (gaps, takeovers) are reported, never asserted.
import assert from 'node:assert/strict';
import { Checks, sh } from './checks.js';
import { LVSD_BUNDLE } from '../bundle-path.js';
import { runFailover, type FailoverFigures, type PhaseFigures, type Step } from './failover-scenario.js';

const checks = new Checks();
// The graceful stop and restart before the kill (LVSD_VM_FAILOVER_STEPS=restart): not in the default run yet —
// it has not completed in the guest on this loaded machine (see docs/ipvs.md).
const STEPS: Step[] = process.env.LVSD_VM_FAILOVER_STEPS === 'restart' ? ['restart'] : [];

/** What must hold after the master's SIGKILL, for every pair whose backup is lvsd. */
function assertKill(f: FailoverFigures): void {
  const detail = JSON.stringify(f);
  assert.equal(f.total, 30, detail);
  // The short new connections of the moment count too: at least the 30 long-lived ones.
  assert.ok(f.syncedBeforeKill >= 30, `the backup's IPVS table did not hold every connection before the kill: ${detail}`);
  assert.equal(f.kept, 30, `connections lost: ${detail}`);
  assert.ok(f.newAfterTakeover > 0, `no new connection was tried after the takeover: ${detail}`);
  assert.equal(f.newFailedAfterTakeover, 0, detail);
  assert.ok(f.syncMasterAfterMs >= 0, `the new master never started the master sync daemon: ${detail}`);
  assert.match(f.daemons.d2 ?? '', /master sync daemon \(mcast=eth1, syncid=51/, `the new master does not send: ${detail}`);
}

const killLine = (f: FailoverFigures): string =>
  `kill: kept ${f.kept}/${f.total}, longest gap ${f.longestGapMs} ms, takeover ${f.takeoverMs} ms, master sync daemon ${f.syncMasterAfterMs} ms after it, new after takeover ${f.newAfterTakeover} (${f.newFailedAfterTakeover} failed), during the gap ${f.newDuringGap} (${f.newFailedDuringGap} failed)`;

await checks.check(`DR pair under 30 long-lived connections: ${STEPS.length > 0 ? 'graceful stop and restart of the master lvsd (table adopted), then ' : ''}lvsd + VRRP engine SIGKILLed: all kept, no new connection fails after the takeover`, async () => {
  let doctor = '';
  let removal = '';
  const f = await runFailover('lvsd', {
    steps: STEPS,
    log: (l) => process.stderr.write(`[failover] ${l}\n`),
    // lvsd doctor on the surviving director: all good (exit 0), then multicast off on the sync interface (exit 1).
    afterwards: async ([, d2]) => {
      if (d2 === undefined) return;
      removal = (await d2.ns.sh('cat /proc/sys/net/ipv4/vs/expire_nodest_conn /proc/sys/net/ipv4/vs/expire_quiescent_template')).stdout.trim().split(/\s+/).join(' ');
      const good = await d2.ns.exec('node', [LVSD_BUNDLE, 'doctor', '--config', d2.config], { timeoutMs: 120_000 });
      assert.match(good.stdout, /ok {4}sync interface: eth1: up, multicast/);
      assert.match(good.stdout, /ip addr add 10\.1\.0\.100\/32 dev lo/);
      await d2.ns.exec('ip', ['link', 'set', 'eth1', 'multicast', 'off']);
      const bad = await d2.ns.exec('node', [LVSD_BUNDLE, 'doctor', '--config', d2.config], { timeoutMs: 120_000 }).then(
        () => assert.fail('doctor exited 0 with multicast off'),
        (e: unknown) => e as { code?: number; stdout?: string },
      );
      assert.equal(bad.code, 1);
      assert.match(bad.stdout ?? '', /FAIL {2}sync interface: eth1 has multicast off/);
      doctor = good.stdout.split('\n').filter((l) => /^(ok|WARN|FAIL)/.test(l)).join(' | ');
    },
  });
  const detail = JSON.stringify(f);
  const phase = (p: PhaseFigures): string => `${p.name}: lost ${p.lost}, longest gap ${p.longestGapMs} ms, VIP moved in ${p.moveMs} ms, new ${p.newTotal} (${p.newFailed} failed)`;
  const [stop, restart] = f.phases;
  let phases = '';
  if (STEPS.length > 0) {
    assert.ok(stop?.name === 'graceful stop' && restart?.name === 'restart', detail);
    assert.equal(stop.lost, 0, `connections lost at the graceful stop: ${detail}`);
    assert.equal(restart.lost, 0, `connections lost across the restart: ${detail}`);
    assert.ok(restart.newTotal > 0, `no new connection was tried across the restart: ${detail}`);
    assert.equal(restart.newFailed, 0, `new connections failed across the restart: ${detail}`);
    // Adopted, not flushed: a re-created service's counter would start again from 0 (see PhaseFigures).
    assert.ok(restart.serviceConnsBefore !== undefined && restart.serviceConnsBefore >= 30, detail);
    assert.ok((restart.serviceConnsAfter ?? 0) >= restart.serviceConnsBefore + (restart.newCountedSinceBack ?? 0), `the virtual server was re-created: ${detail}`);
    phases = `${phase(stop)}\n${phase(restart)}, service Conns ${restart.serviceConnsBefore} → ${restart.serviceConnsAfter} (${restart.newCountedSinceBack} new since d1 is back)\n`;
  }
  assertKill(f);
  assert.notEqual(doctor, '', 'lvsd doctor did not run');
  assert.equal(removal, '1 1', `expire_nodest_conn and expire_quiescent_template on the director: ${removal}`);
  return `doctor: ${doctor}\n${phases}${killLine(f)}`;
});

await checks.check('migration: keepalived master (lvs_sync_daemon) and lvsd backup (follow-vrrp, VRRP v2): keepalived SIGKILLed under 30 long-lived connections, lvsd keeps them all', async () => {
  const f = await runFailover('mixed', { log: (l) => process.stderr.write(`[mixed] ${l}\n`) });
  // The kernel's own account of its sync threads (pr_info, with timestamps): how long a switch took in there.
  const kernel = (await sh('dmesg')).split('\n').filter((l) => /sync thread|sync daemon/i.test(l)).slice(-8).join('\n');
  assertKill(f);
  return `${killLine(f)}\nbackup's log: ${f.backupLog.join(' | ')}\nkernel:\n${kernel}`;
});

checks.finish();
