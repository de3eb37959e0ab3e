// Real IPVS in a QEMU guest, one boot: HTTP from a client namespace through NAT, DR and TUN to three nginx
// real servers, distribution per scheduler and weight, lvsd restart and graceful removal under traffic.
// The checks run in the guest (test/vm/guest/traffic.ts); each is a subtest here.
import { test } from 'node:test';
import { guestChecks } from './harness.js';

test('IPVS traffic on a real kernel (QEMU guest): NAT, DR, TUN, restart and graceful removal under load', { timeout: 300_000 }, (t) => guestChecks(t, 'test/vm/guest/traffic.js'));
