// An instance a reload removes, measured: Debian's keepalived 2.2.7 tells its hooks and its notify FIFO FAULT
// (the old way, kept as its default: the generic notify and the FIFO only, not notify_fault) and DELETED when
// the instance has notify_deleted, running that directive's script. lvsd, given the same three masters and the same reload, must say the same.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepalivedConf, startKeepalived, type KeepalivedInstance } from '../support/keepalived.js';
import { startLvsdNode } from '../support/vrrp-node.js';
import { labSuite, sleep, waitFor } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions, VrrpOptions } from '../../daemon/vrrp/options.js';

let dir: string;
const suite = labSuite('vrrpdel', 1, ['ip', 'keepalived', 'mkfifo']);
const { host, own } = suite;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'lvsd-deleted-'));
  // The FIFO reader (path of its output, then the FIFO's) and the hook (its output, then what it was given).
  writeFileSync(join(dir, 'reader.sh'), '#!/bin/sh\nwhile read -r line; do echo "$line" >> "$1.fifo-lines"; done < "$2"\n');
  writeFileSync(join(dir, 'hook.sh'), '#!/bin/sh\nout="$1"; shift; echo "$*" >> "$out.hooks"\n');
  chmodSync(join(dir, 'reader.sh'), 0o755);
  chmodSync(join(dir, 'hook.sh'), 0o755);
});

const read = (f: string): string[] => (existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n') : []);
/** What was said of VI_1 and VI_2 (the removed ones), sorted: the two are told in either order. */
const aboutRemoved = (xs: string[]): string[] => xs.filter((x) => /VI_[12]\b/.test(x) && !/MASTER|BACKUP/.test(x)).sort();

const VIPS = ['192.168.100.201/24', '192.168.100.202/24', '192.168.100.203/24'];

test('a reload that removes instances: FAULT by default, DELETED (and its script) with notify_deleted, as keepalived 2.2.7', { timeout: 90_000 }, async () => {
  const hook = join(dir, 'hook.sh');
  const reader = join(dir, 'reader.sh');

  // keepalived first: the reference.
  const k = join(dir, 'k');
  const kInst = (n: number, extra: string[]): KeepalivedInstance => ({ name: `VI_${n}`, interface: 'eth0', vrid: 50 + n, priority: 150, version: 3, interval: 0.1, vips: [VIPS[n - 1] ?? ''], extra });
  const globals = [`vrrp_notify_fifo ${k}.fifo`, `vrrp_notify_fifo_script "${reader} ${k}"`];
  const all = keepalivedConf(
    [
      kInst(1, [`notify "${hook} ${k} any"`, `notify_fault "${hook} ${k} fault-hook VI_1"`, `notify_deleted "${hook} ${k} deleted-hook VI_1"`]),
      kInst(2, [`notify "${hook} ${k} any"`, `notify_fault "${hook} ${k} fault-hook VI_2"`]),
      kInst(3, []),
    ],
    'kad',
    globals,
  );
  const kad = own(await startKeepalived(host(1), all));
  await waitFor('keepalived: three masters', () => read(`${k}.fifo-lines`).filter((l) => l.endsWith('MASTER 150')).length === 3, 10_000);
  kad.reload(keepalivedConf([kInst(3, [])], 'kad', globals));
  await waitFor('keepalived told VI_1 and VI_2 their removal', () => aboutRemoved(read(`${k}.fifo-lines`)).length >= 2, 10_000);
  await sleep(1000);
  await kad.stop();
  assert.doesNotMatch(kad.log(), /Unknown keyword 'notify_deleted'/);
  const want = { fifo: aboutRemoved(read(`${k}.fifo-lines`)), hooks: aboutRemoved(read(`${k}.hooks`)) };

  // lvsd, the same life.
  const l = join(dir, 'l');
  const lInst = (n: number, o: Partial<VrrpInstanceOptions>): VrrpInstanceOptions => ({ name: `VI_${n}`, interface: 'eth0', vrid: 50 + n, version: 3, advertIntervalMs: 100, priority: 150, vips: [VIPS[n - 1] ?? ''], ...o });
  const top: Partial<VrrpOptions> = { garp: { masterDelayMs: 0 }, notifyFifo: { path: `${l}.fifo`, script: `${reader} ${l}` } };
  const opts: VrrpOptions = {
    ...top,
    instances: [
      lInst(1, { notify: { any: `${hook} ${l} any`, fault: `${hook} ${l} fault-hook VI_1`, deleted: `${hook} ${l} deleted-hook VI_1` }, notifyDeleted: true }),
      lInst(2, { notify: { any: `${hook} ${l} any`, fault: `${hook} ${l} fault-hook VI_2` } }),
      lInst(3, {}),
    ],
  };
  const node = own(await startLvsdNode(host(1), opts));
  await waitFor('lvsd: three masters', () => read(`${l}.fifo-lines`).filter((x) => x.endsWith('MASTER 150')).length === 3, 10_000);
  node.command(`reconfigure ${JSON.stringify({ ...top, instances: [lInst(3, {})] })}`);
  const done = await node.waitLine((x) => x.kind === 'reconfigured', 10_000);
  assert.equal(done.error, undefined, String(done.error));
  await waitFor('lvsd told VI_1 and VI_2 their removal', () => aboutRemoved(read(`${l}.fifo-lines`)).length >= 2, 10_000);
  await sleep(1000);
  await node.stop();
  const got = { fifo: aboutRemoved(read(`${l}.fifo-lines`)), hooks: aboutRemoved(read(`${l}.hooks`)) };

  // Measured here: FIFO INSTANCE "VI_1" DELETED 150 and INSTANCE "VI_2" FAULT 150; hooks: VI_1's deleted-hook and
  // `any … DELETED`, VI_2's `any … FAULT` but not its fault-hook (keepalived picks the hook before it turns
  // DELETED into FAULT).
  assert.ok(want.fifo.includes('INSTANCE "VI_1" DELETED 150') && want.fifo.includes('INSTANCE "VI_2" FAULT 150'), `keepalived wrote: ${want.fifo.join(' | ')}`);
  assert.deepEqual(got, want, `keepalived: ${JSON.stringify(want)}\nlvsd:      ${JSON.stringify(got)}`);
});
