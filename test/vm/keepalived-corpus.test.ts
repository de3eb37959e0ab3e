// The keepalived corpus on a real IPVS kernel, one guest boot: keepalived with every original corpus file
// that has virtual servers and lvsd with its import, side by side in two namespaces of the guest, must
// program the same table — with every real server up, with quorum lost (sorry server) and regained — and
// differ only where test/vm/guest/corpus.ts names the difference. Each check there is a subtest here.
// Time: 378 s measured with the host at load 10–13 on 2 cores, 228 s of it `lvsd run` loading its modules
// in the emulated guest (`lvsd version` alone took 104 s there); lvsd now runs from the one-file bundle and
// programmed the corpus after 59–81 s (host load 15–21), 17–29 s at load 1–4. With fail-and-recover.conf
// (servers failing each its checker's way) the whole boot took 131 s at host load 1–2 (2026-12-03).
import { test } from 'node:test';
import { bundleLvsd } from './bundle.js';
import { DEFAULT_GUEST_MODULES, guestChecks } from './harness.js';

// nf_tables: the PING_CHECK failure drops ICMP echo requests with nft.
test('keepalived corpus: keepalived and lvsd program the same IPVS table (QEMU guest)', { timeout: 1_200_000 }, (t) => {
  bundleLvsd();
  // test/fixtures/keepalived-checks/fail-and-recover.conf runs too (LVSD_VM_CORPUS_CHECKS=0 leaves it out: guest/corpus.ts).
  return guestChecks(t, 'test/vm/guest/corpus.js', 1_140_000, {
    memoryMb: 2048, modules: [...DEFAULT_GUEST_MODULES, 'nf_tables'], env: { LVSD_VM_CORPUS_CHECKS: process.env.LVSD_VM_CORPUS_CHECKS ?? '' },
  });
});
