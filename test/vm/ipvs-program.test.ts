// Real IPVS in a QEMU guest, one boot: every method and scheduler programmed through lvsd and read back
// through lvsd and ipvsadm, typed errors, ownership/adoption/drift, sync daemon, timeouts, and the
// keepalived differential. The checks run in the guest (test/vm/guest/program.ts); each is a subtest here.
import { test } from 'node:test';
import { guestChecks } from './harness.js';

test('IPVS programming on a real kernel (QEMU guest), and use_ipvlan', { timeout: 540_000 }, (t) => guestChecks(t, 'test/vm/guest/program.js', 480_000));
