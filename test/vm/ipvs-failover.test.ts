// A DR director pair of two lvsd on a real IPVS kernel (QEMU guest): the master crashes under long-lived
// connections and the sync daemon carries them to the backup. The scenario runs in the guest
// (test/vm/guest/failover.ts, failover-scenario.ts); bench/failover-guest.ts runs it beside a keepalived pair.
import { test } from 'node:test';
import { bundleLvsd } from './bundle.js';
import { guestChecks } from './harness.js';

test('DR director pair failover keeps established connections (QEMU guest)', { timeout: 420_000 }, (t) => {
  bundleLvsd();
  return guestChecks(t, 'test/vm/guest/failover.js', 360_000, { cpus: 2, memoryMb: 1536 });
});
