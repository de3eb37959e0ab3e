// Active-active behind ECMP on a real IPVS kernel (QEMU guest): a BIRD router with L4 multipath, three lvsd
// directors (DR, mh, the sync daemon in both roles) each with its own BIRD, real servers, a client. A director
// crashes and another stops gracefully under long-lived connections; see test/vm/guest/ecmp.ts for what holds.
import { test } from 'node:test';
import { bundleLvsd } from './bundle.js';
import { guestChecks } from './harness.js';

test('active-active IPVS directors behind an ECMP router keep every connection across a crash and a graceful stop (QEMU guest)', { timeout: 1_300_000 }, (t) => {
  bundleLvsd();
  return guestChecks(t, 'test/vm/guest/ecmp.js', 1_200_000, { cpus: 2, memoryMb: 1536 });
});
