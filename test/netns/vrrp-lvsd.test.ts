// lvsd against lvsd: pairs and three nodes, graceful stop and crash, preemption and nopreempt, sync
// groups, interface/script/file tracking, notify hooks with keepalived's arguments.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { removeStaleNamespaces } from '../support/netns.js';
import { startLvsdNode, type LvsdNode } from '../support/vrrp-node.js';
import { createLab, lvsdOptions, sleep, VIP4, waitFor, type Lab } from '../support/vrrp-lab.js';
import type { VrrpInstanceOptions, VrrpOptions } from '../../daemon/vrrp/options.js';

let lab: Lab;
let dir: string;
const nodes: LvsdNode[] = [];

before(async () => {
  requireRoot();
  requireCommands('ip');
  removeStaleNamespaces();
  lab = await createLab('vrrplv', 3);
  dir = mkdtempSync(join(tmpdir(), 'lvsd-vrrp-'));
});
/** A test that leaves the segment clean (no lvsd, no VIPs) even when it fails half-way. */
function scenario(name: string, fn: () => Promise<void>): void {
  test(name, { timeout: 120_000 }, async () => {
    try {
      await fn();
    } finally {
      await reset();
    }
  });
}
after(async () => {
  for (const n of nodes.splice(0)) await n.kill().catch(() => undefined);
  lab.destroy();
  rmSync(dir, { recursive: true, force: true });
});

async function node(host: number, o: Partial<VrrpInstanceOptions> & { priority: number }, extra: Partial<VrrpOptions> = {}): Promise<LvsdNode> {
  const n = await startLvsdNode(lab.hosts[host - 1] ?? assert.fail('no host'), lvsdOptions(o, extra));
  nodes.push(n);
  return n;
}

async function reset(): Promise<void> {
  for (const n of nodes.splice(0)) await n.kill();
  for (const h of lab.hosts) await h.sh(`ip addr flush dev eth0 label 'eth0:*' 2>/dev/null; ip addr del ${VIP4}/24 dev eth0 2>/dev/null; true`);
}

async function onlyOn(host: string, vip = VIP4, ifname = 'eth0'): Promise<void> {
  await waitFor(`${vip} only on ${host}`, async () => {
    const h = await lab.holders(vip, ifname);
    return h.length === 1 && h[0] === host;
  }, 5000);
}

const now = (): number => performance.timeOrigin + performance.now();

scenario('pair: election, graceful stop (Skew_Time), preemption on return, crash (Master_Down_Interval), stale VIP cleaned on restart', async () => {
  const a = await node(1, { priority: 150, vips: [{ address: `${VIP4}/24`, label: 'eth0:vip' }] });
  const b = await node(2, { priority: 100 });
  await a.waitState('VI_1', 'MASTER', 5000);
  await onlyOn('d1');
  // The VIP carries its label, as keepalived's `label` (ifconfig-style alias).
  const labelled = await lab.hosts[0]?.exec('ip', ['-o', '-4', 'addr', 'show', 'dev', 'eth0', 'label', 'eth0:vip']);
  assert.match(labelled?.stdout ?? '', new RegExp(`${VIP4.replace(/\./g, '\\.')}/24 .*eth0:vip`));
  await sleep(500);
  assert.notEqual(b.state('VI_1'), 'MASTER');

  let t0 = now();
  await a.stop();
  let m = await b.waitState('VI_1', 'MASTER', 3000, t0);
  assert.ok(m.mono - t0 < 1000, `graceful takeover ${Math.round(m.mono - t0)} ms (Skew_Time 61 ms)`);
  await onlyOn('d2');

  const a2 = await node(1, { priority: 150 });
  await a2.waitState('VI_1', 'MASTER', 5000);
  await b.waitState('VI_1', 'BACKUP', 3000, m.mono);
  await onlyOn('d1');

  t0 = now();
  await a2.kill();
  m = await b.waitState('VI_1', 'MASTER', 3000, t0);
  assert.ok(m.mono - t0 > 150, `takeover after crash only ${Math.round(m.mono - t0)} ms`);
  // The crashed node keeps its VIP (nobody removed it) …
  await waitFor('VIP on d2', async () => (await lab.holders(VIP4)).includes('d2'));
  assert.deepEqual((await lab.holders(VIP4)).sort(), ['d1', 'd2']);
  // … until lvsd starts there again: it clears it while Backup, then preempts.
  const a3 = await node(1, { priority: 150 });
  await a3.waitLine((l) => l.msg === 'removed a stale VIP left from an earlier run', 5000);
  await a3.waitState('VI_1', 'MASTER', 5000);
  await onlyOn('d1');
});

scenario('nopreempt: a higher-priority node joining a running master stays Backup; preemptDelay delays the takeover', async () => {
  const b = await node(2, { priority: 100 });
  await b.waitState('VI_1', 'MASTER', 5000);
  const a = await node(1, { priority: 150, preempt: false });
  await sleep(1200);
  assert.equal(a.state('VI_1'), 'BACKUP');
  await onlyOn('d2');
  await a.kill();
  const t0 = now();
  const c = await node(1, { priority: 150, preemptDelayMs: 1500 });
  const m = await c.waitState('VI_1', 'MASTER', 6000);
  assert.ok(m.mono - t0 > 1500, `preempted after ${Math.round(m.mono - t0)} ms despite a 1.5 s preempt_delay`);
  await onlyOn('d1');
});

scenario('a busy main thread (1.5 s blocked, 4× Master_Down_Interval) does not stop the VRRP worker: no failover', async () => {
  const a = await node(1, { priority: 150 });
  await a.waitState('VI_1', 'MASTER', 5000);
  const b = await node(2, { priority: 100 });
  await sleep(500);
  const before = b.transitions.length;
  for (let i = 0; i < 2; i++) {
    a.command('block 1500');
    await sleep(1800);
  }
  assert.equal(b.transitions.length, before, JSON.stringify(b.transitions.slice(before)));
  assert.equal(b.state('VI_1') ?? 'BACKUP', 'BACKUP');
  await onlyOn('d1');
});

scenario('three nodes: the highest wins; crash of the master → the next; stop of that → the last; one holder at every step', async () => {
  const n1 = await node(1, { priority: 150 });
  const n2 = await node(2, { priority: 120 });
  const n3 = await node(3, { priority: 100 });
  await n1.waitState('VI_1', 'MASTER', 5000);
  await onlyOn('d1');
  let t0 = now();
  await n1.kill();
  await n2.waitState('VI_1', 'MASTER', 3000, t0);
  await sleep(300);
  assert.notEqual(n3.state('VI_1'), 'MASTER');
  await lab.hosts[0]?.sh(`ip addr del ${VIP4}/24 dev eth0`); // the crashed node's leftover
  await onlyOn('d2');
  t0 = now();
  await n2.stop();
  await n3.waitState('VI_1', 'MASTER', 3000, t0);
  await onlyOn('d3');
  assert.equal(n3.transitions.filter((t) => t.to === 'MASTER').length, 1);
});

scenario('sync group + interface tracking + notify: one member faults, the group follows, the peer takes both; hooks ran in order with keepalived args', async () => {
  for (const h of ['d1', 'd2']) await lab.topo.link(h, 'eth1', 'lan2', [h === 'd1' ? '10.78.0.1/24' : '10.78.0.2/24']);
  const log = join(dir, 'notify.log');
  const hook = join(dir, 'notify.sh');
  writeFileSync(hook, `#!/bin/sh\necho "$*" >> ${log}\n`);
  chmodSync(hook, 0o755);
  const group = (priority: number, tag: string): VrrpOptions => ({
    instances: [
      { name: 'VI_1', interface: 'eth0', vrid: 51, priority, advertIntervalMs: 100, vips: [`${VIP4}/24`], notify: { master: `${hook} ${tag} master-hook`, any: `${hook} ${tag}` } },
      { name: 'VI_2', interface: 'eth1', vrid: 52, priority, advertIntervalMs: 100, vips: ['10.78.0.100/24'], trackInterfaces: [{ name: 'eth1' }] },
    ],
    syncGroups: [{ name: 'VG_1', instances: ['VI_1', 'VI_2'], notify: { any: `${hook} ${tag}` } }],
    garp: { masterDelayMs: 0 },
  });
  const a = await startLvsdNode(lab.hosts[0] ?? assert.fail(), group(150, 'A'));
  nodes.push(a);
  await a.waitState('VI_1', 'MASTER', 5000);
  await a.waitState('VI_2', 'MASTER', 5000);
  const b = await startLvsdNode(lab.hosts[1] ?? assert.fail(), group(100, 'B'));
  nodes.push(b);
  await sleep(500);
  await onlyOn('d1');
  await onlyOn('d1', '10.78.0.100', 'eth1');

  const t0 = now();
  await lab.topo.setLink('d1', 'eth1', false);
  await a.waitState('VI_2', 'FAULT', 5000, t0);
  await a.waitState('VI_1', 'FAULT', 5000, t0); // followed its group
  await b.waitState('VI_1', 'MASTER', 5000, t0);
  await b.waitState('VI_2', 'MASTER', 5000, t0);
  await onlyOn('d2');
  await onlyOn('d2', '10.78.0.100', 'eth1');
  const snap = await a.snapshot();
  assert.ok(snap.instances.find((i) => i.name === 'VI_2')?.faultReasons.some((r) => r.includes('eth1 down')), JSON.stringify(snap.instances.map((i) => i.faultReasons)));

  await lab.topo.setLink('d1', 'eth1', true);
  await a.waitState('VI_1', 'MASTER', 8000, t0);
  await onlyOn('d1');
  await waitFor('notify hooks ran', () => {
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    return lines.includes('B GROUP VG_1 MASTER 0') && lines.filter((l) => l.startsWith('A INSTANCE VI_1 MASTER')).length >= 2 && lines;
  }, 5000);
  const lines = readFileSync(log, 'utf8').trim().split('\n').filter((l) => l.startsWith('A '));
  // Per instance: the specific hook first, then `notify` with INSTANCE name STATE priority. The group's
  // hooks run in their own queue, so they may interleave with the instance's.
  const own = lines.filter((l) => !l.includes('GROUP'));
  assert.deepEqual(own, ['A INSTANCE VI_1 BACKUP 150', 'A master-hook', 'A INSTANCE VI_1 MASTER 150', 'A INSTANCE VI_1 FAULT 150', 'A INSTANCE VI_1 BACKUP 150', 'A master-hook', 'A INSTANCE VI_1 MASTER 150']);
  assert.ok(lines.includes('A INSTANCE VI_1 FAULT 150'), lines.join('\n'));
  assert.ok(lines.includes('A GROUP VG_1 FAULT 0'), lines.join('\n'));
});

scenario('track script (weight −60, rise/fall) and track file (value × weight) move the priority and the VIP', async () => {
  const flag = join(dir, 'fail-flag');
  const prio = join(dir, 'prio');
  writeFileSync(prio, '0\n');
  const a = await node(
    1,
    { priority: 150, trackScripts: [{ name: 'chk', weight: -60 }], trackFiles: [{ path: prio, weight: 1 }] },
    { scripts: { chk: { command: `/bin/sh -c '! test -e ${flag}'`, intervalMs: 100, timeoutMs: 1000, rise: 2, fall: 2 } } },
  );
  await node(2, { priority: 100 });
  await a.waitState('VI_1', 'MASTER', 5000);
  await onlyOn('d1');
  // Wait on the cause (a's effective priority), then on the effect (where the VIP is): on a loaded
  // machine a transition alone could also be a spurious one.
  const priorityIs = (p: number): Promise<unknown> => waitFor(`priority ${p}`, async () => (await a.snapshot()).instances[0]?.priority === p, 5000);
  writeFileSync(flag, '');
  await priorityIs(90); // 150 − 60 < 100
  await onlyOn('d2');
  rmSync(flag);
  await priorityIs(150);
  await onlyOn('d1');
  writeFileSync(prio, '-70\n');
  await priorityIs(80); // 150 − 70
  await onlyOn('d2');
});
