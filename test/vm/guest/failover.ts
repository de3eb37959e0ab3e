// Runs INSIDE the guest: two lvsd directors in DR with VRRP and the IPVS sync daemon (follow-vrrp, lvsd's sync
// defaults), 30 long-lived connections through the VIP exchanging a line every 300 ms, and a SIGKILL of the
// master's lvsd and its VRRP engine. What must hold: the backup had the connections synced before the kill,
// every connection is still alive afterwards, no new connection fails once the backup holds the VIP, and the
// new master runs the master sync daemon. Figures (gap, takeover) are reported, never asserted.
import assert from 'node:assert/strict';
import { Checks } from './checks.js';
import { LVSD_BUNDLE } from '../bundle-path.js';
import { runFailover } from './failover-scenario.js';

const checks = new Checks();

await checks.check('DR pair, master lvsd + VRRP engine SIGKILLed under 30 long-lived connections: all kept, no new connection fails after the takeover', async () => {
  let doctor = '';
  const f = await runFailover('lvsd', {
    log: (l) => process.stderr.write(`[failover] ${l}\n`),
    // lvsd doctor on the surviving director: all good (exit 0), then multicast off on the sync interface (exit 1).
    afterwards: async ([, d2]) => {
      if (d2 === undefined) return;
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
  assert.equal(f.total, 30, detail);
  // The short new connections of the moment count too: at least the 30 long-lived ones.
  assert.ok(f.syncedBeforeKill >= 30, `the backup's IPVS table did not hold every connection before the kill: ${detail}`);
  assert.equal(f.kept, 30, `connections lost across the failover: ${detail}`);
  assert.ok(f.newAfterTakeover > 0, `no new connection was tried after the takeover: ${detail}`);
  assert.equal(f.newFailedAfterTakeover, 0, detail);
  assert.ok(f.syncMasterAfterMs >= 0, `the new master never started the master sync daemon: ${detail}`);
  assert.match(f.daemons.d2 ?? '', /master sync daemon \(mcast=eth1, syncid=51/, `the new master does not send: ${detail}`);
  assert.notEqual(doctor, '', 'lvsd doctor did not run');
  return `doctor: ${doctor}\nkept ${f.kept}/${f.total}, longest gap ${f.longestGapMs} ms, takeover ${f.takeoverMs} ms, master sync daemon ${f.syncMasterAfterMs} ms after it, new after takeover ${f.newAfterTakeover} (${f.newFailedAfterTakeover} failed), during the gap ${f.newDuringGap} (${f.newFailedDuringGap} failed)`;
});

checks.finish();
