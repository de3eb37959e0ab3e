// The keepalived corpus on a real IPVS kernel, one guest boot: keepalived with every original corpus file
// that has virtual servers and lvsd with its import, side by side in two namespaces of the guest, must
// program the same table — with every real server up, with quorum lost (sorry server) and regained — and
// differ only where test/vm/guest/corpus.ts names the difference. Each check there is a subtest here.
// Time: 378 s measured with the host at load 10–13 on 2 cores, 228 s of it `lvsd run` loading its modules
// in the emulated guest (`lvsd version` alone took 104 s there); the comparisons themselves take ~2 min.
import { test } from 'node:test';
import { guestChecks } from './harness.js';

test('keepalived corpus: keepalived and lvsd program the same IPVS table (QEMU guest)', { timeout: 1_200_000 }, (t) =>
  guestChecks(t, 'test/vm/guest/corpus.js', 1_140_000, { memoryMb: 2048 }));
