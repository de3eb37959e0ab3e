// keepalived's notify FIFO, measured: Debian's keepalived 2.2.7 writes its event lines into a FIFO read by
// its notify_fifo_script; lvsd, given the same life (start as BACKUP, become MASTER, hear a lower-priority
// master after a split brain, stop), must write the same lines in the same order.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepalivedConf, startKeepalived } from '../support/keepalived.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { labSuite, lvsdOptions, sleep, VIP4, waitFor } from '../support/vrrp-lab.js';

let dir: string;

const suite = labSuite('vrrpfifo', 2, ['ip', 'keepalived', 'nft', 'mkfifo']);
const { host, own, stopAll } = suite;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lvsd-fifo-'));
  // The reader: keepalived and lvsd start it with the FIFO's path as its last argument.
  const reader = join(dir, 'reader.sh');
  writeFileSync(reader, `#!/bin/sh\necho "args: $*" > "$1.args"\nwhile read -r line; do echo "$line" >> "$1.lines"; done < "$2"\n`);
  chmodSync(reader, 0o755);
});

const lines = (out: string): string[] => (existsSync(`${out}.lines`) ? readFileSync(`${out}.lines`, 'utf8').trim().split('\n') : []);

async function lvsdPeer(): Promise<LvsdNode> {
  return own(await startLvsdNode(host(2), lvsdOptions({ priority: 100 })));
}
/** d2 cut off VRRP: it becomes master too; then its adverts get out again, so d1 hears a lower-priority master. */
async function splitAndHeal(peer: LvsdNode): Promise<void> {
  await host(2).sh(
    "nft add table inet split && nft add chain inet split in '{ type filter hook input priority 0; }' && nft add chain inet split out '{ type filter hook output priority 0; }'" +
      ' && nft add rule inet split in ip protocol 112 drop && nft add rule inet split out ip protocol 112 drop',
  );
  const m = await peer.waitState('VI_1', 'MASTER', 5000);
  await host(2).sh('nft delete chain inet split out');
  // It steps down only when the table goes (it cannot hear d1 before): d1 hears its adverts meanwhile.
  await sleep(500);
  await host(2).sh('nft delete table inet split');
  await peer.waitState('VI_1', 'BACKUP', 5000, m.mono);
}

test('notify FIFO: lvsd writes keepalived 2.2.7\'s lines (INSTANCE "VI_1" STATE prio, GROUP "G" STATE 0, MASTER_RX_LOWER_PRI) in the same order', { timeout: 120_000 }, async () => {
  const reader = join(dir, 'reader.sh');
  // keepalived first: the reference.
  const kOut = join(dir, 'k');
  const conf = keepalivedConf([{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, version: 3, interval: 0.1, vips: [`${VIP4}/24`] }], 'kad', [
    `vrrp_notify_fifo ${kOut}.fifo`,
    `vrrp_notify_fifo_script "${reader} ${kOut}"`,
  ]).replace(/$/, '\nvrrp_sync_group G {\n  group {\n    VI_1\n  }\n}\n');
  const k = await startKeepalived(host(1), conf);
  own(k);
  await k.waitForLog(/Entering MASTER STATE/, 5000);
  const p1 = await lvsdPeer();
  await sleep(500);
  await splitAndHeal(p1);
  await waitFor('keepalived heard the lower-priority master', () => lines(kOut).some((l) => l.includes('MASTER_RX_LOWER_PRI')), 5000);
  await k.stop();
  await sleep(500);
  await stopAll();
  await sleep(300);
  const want = lines(kOut);

  const lOut = join(dir, 'l');
  const l = await startLvsdNode(host(1), lvsdOptions({ priority: 150 }, { syncGroups: [{ name: 'G', instances: ['VI_1'] }], notifyFifo: { path: `${lOut}.fifo`, script: `${reader} ${lOut}` } }));
  own(l);
  await l.waitState('VI_1', 'MASTER', 5000);
  const p2 = await lvsdPeer();
  await sleep(500);
  await splitAndHeal(p2);
  await waitFor('lvsd heard the lower-priority master', () => lines(lOut).some((x) => x.includes('MASTER_RX_LOWER_PRI')), 5000);
  await l.stop();
  await sleep(500);
  await stopAll();
  const got = lines(lOut);

  // The answer count to lower-priority adverts may differ by one or two; compare the lines with repeats folded.
  const fold = (xs: string[]): string[] => xs.filter((x, i) => x !== xs[i - 1]);
  // Measured: GROUP "G" BACKUP 0 | INSTANCE "VI_1" BACKUP 150 | INSTANCE "VI_1" MASTER 150 | GROUP "G" MASTER 0 |
  // INSTANCE "VI_1" MASTER_RX_LOWER_PRI 150 (once or twice), and no STOP line: the reader is stopped first.
  assert.ok(want.includes('INSTANCE "VI_1" MASTER 150') && want.includes('GROUP "G" MASTER 0'), `keepalived wrote: ${want.join(' | ')}`);
  assert.deepEqual(fold(got), fold(want), `keepalived: ${want.join(' | ')}\nlvsd:      ${got.join(' | ')}`);
  // Both readers got the FIFO's path as their last argument; both FIFOs were removed on stop (they created them).
  assert.equal(readFileSync(`${lOut}.args`, 'utf8'), `args: ${lOut} ${lOut}.fifo\n`);
  assert.equal(readFileSync(`${kOut}.args`, 'utf8'), `args: ${kOut} ${kOut}.fifo\n`);
  assert.equal(existsSync(`${lOut}.fifo`), false);
  assert.equal(existsSync(`${kOut}.fifo`), false);
});
