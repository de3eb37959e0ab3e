// A DR director pair of two lvsd on a real IPVS kernel (QEMU guest): the master crashes under long-lived
// connections and the sync daemon carries them to the backup. The scenario runs in the guest
// (test/vm/guest/failover.ts, failover-scenario.ts), after a graceful stop and a restart of the master, then a
// real server crashes; then the migration case (keepalived master, lvsd backup); bench/failover-guest.ts runs them beside a keepalived pair.
import { test } from 'node:test';
import { bundleLvsd } from './bundle.js';
import { guestChecks } from './harness.js';

test('director pair (DR, TUN, NAT) failover keeps established connections (QEMU guest)', { timeout: 1_800_000 }, (t) => {
  bundleLvsd();
  return guestChecks(t, 'test/vm/guest/failover.js', 1_750_000, { cpus: 2, memoryMb: 1536 });
});
