// The lab's failover hint must stop the master's lvsd and nothing else: network namespaces do not isolate
// process ids, so the old `ip netns exec NS pkill -f lvsd.yaml` killed both directors. Here the printed line
// runs in a shell against two stand-in directors (real processes with pid files where the lab writes them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dataplaneLine, figuresLines, labBanner, liveLine, pidFile } from '../../lab/banner.js';
import { labChoice, type LabChoice } from '../../lab/options.js';

const run = promisify(execFile);

test('the banner offers a failover command that names d1 only, never pkill', () => {
  const text = labBanner({ vip: '10.77.0.100', clientNs: 'lab-1-client', ports: [9181, 9182], directors: [{ name: 'd1', dir: '/tmp/lab-1/d1' }, { name: 'd2', dir: '/tmp/lab-1/d2' }], password: 'pw' });
  const line = text.split('\n').find((l) => l.includes('fail over'));
  assert.ok(line !== undefined, text);
  assert.match(line, /kill \$\(cat \/tmp\/lab-1\/d1\/lvsd\.pid\)/);
  assert.doesNotMatch(text, /pkill|killall|\/d2\/lvsd\.pid/);
});

test('the printed failover command, run in a shell, ends the master director and leaves the backup running', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'lab-banner-'));
  const procs: ChildProcess[] = [];
  t.after(() => {
    for (const p of procs) p.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  // Both stand-ins carry "lvsd.yaml" on their command line, as the directors do: the old pkill matched both.
  const directors = ['d1', 'd2'].map((name) => {
    const dir = join(root, name);
    mkdirSync(dir);
    const p = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', join(dir, 'lvsd.yaml')], { stdio: 'ignore' });
    procs.push(p);
    writeFileSync(pidFile({ dir }), `${String(p.pid)}\n`);
    return { name, dir, exited: new Promise<NodeJS.Signals | null>((r) => p.once('exit', (_c, s) => { r(s); })), p };
  });
  const text = labBanner({ vip: '10.77.0.100', clientNs: 'c', ports: [1, 2], directors, password: 'pw' });
  const command = /fail over\s+(.*?)\s+\(/.exec(text)?.[1];
  assert.ok(command !== undefined, text);
  await run('sh', ['-c', command]);
  const [d1, d2] = directors as [(typeof directors)[0], (typeof directors)[0]];
  assert.equal(await d1.exited, 'SIGTERM', 'the master got SIGTERM (a graceful stop)');
  // d2 must still be there: signal 0 only asks whether it exists.
  assert.equal(d2.p.exitCode, null);
  assert.equal(d2.p.signalCode, null);
  assert.doesNotThrow(() => process.kill(d2.p.pid ?? 0, 0));
});

test('npm start says which dataplane the lab uses and why, and offers the guest where the kernel has no IPVS', () => {
  const without = dataplaneLine(labChoice({}, { available: false, reason: 'no /proc/net/ip_vs' }) as Extract<LabChoice, { mode: 'namespaces' }>);
  assert.equal(without, 'dataplane nftables (this kernel has no IPVS: no /proc/net/ip_vs); to watch an LVS DR pair on IPVS fail over with its connections kept: LVSD_LAB=guest npm start');
  const withIpvs = dataplaneLine(labChoice({}, { available: true, reason: '/proc/net/ip_vs is there' }) as Extract<LabChoice, { mode: 'namespaces' }>);
  assert.equal(withIpvs, 'dataplane ipvs (this kernel has IPVS: /proc/net/ip_vs is there)');
});

test('the lab choice: ipvs where the kernel has it, the environment overrides, the guest on request, bad values refused by name', () => {
  const yes = { available: true, reason: 'r' };
  const no = { available: false, reason: 'none here' };
  assert.deepEqual(labChoice({}, yes), { mode: 'namespaces', dataplane: 'ipvs', ipvs: yes, why: 'this kernel has IPVS: r' });
  assert.equal((labChoice({}, no) as { dataplane: string }).dataplane, 'nftables');
  assert.equal((labChoice({ LVSD_LAB: 'namespaces', LVSD_LAB_DATAPLANE: 'userspace' }, yes) as { dataplane: string }).dataplane, 'userspace');
  assert.equal((labChoice({ LVSD_LAB_DATAPLANE: 'nftables' }, yes) as { why: string }).why, 'LVSD_LAB_DATAPLANE=nftables');
  assert.throws(() => labChoice({ LVSD_LAB_DATAPLANE: 'ipvs' }, no), /LVSD_LAB_DATAPLANE=ipvs: this kernel has no IPVS \(none here\); LVSD_LAB=guest npm start/);
  assert.throws(() => labChoice({ LVSD_LAB_DATAPLANE: 'xdp' }, yes), /LVSD_LAB_DATAPLANE=xdp: expected one of ipvs, nftables, userspace/);
  assert.throws(() => labChoice({ LVSD_LAB: 'qemu' }, no), /LVSD_LAB=qemu: expected guest/);
  assert.deepEqual(labChoice({ LVSD_LAB: 'guest' }, no), { mode: 'guest', ipvs: no, failoverAfterS: 20, why: "LVSD_LAB=guest: an LVS DR pair of two lvsd on IPVS, in a QEMU guest with Debian's kernel" });
  assert.equal((labChoice({ LVSD_LAB: 'guest', LVSD_LAB_FAILOVER_AFTER: '45' }, yes) as { failoverAfterS: number }).failoverAfterS, 45);
  for (const bad of ['4', '601', '1.5', 'soon']) assert.throws(() => labChoice({ LVSD_LAB: 'guest', LVSD_LAB_FAILOVER_AFTER: bad }, no), new RegExp(`LVSD_LAB_FAILOVER_AFTER=${bad}: expected whole seconds`));
});

test('the guest demo\'s live line and figures say who holds the VIP, what is alive, and what was lost', () => {
  const base = { alive: 20, total: 20, answers: 66, newOk: 4, newFailed: 0, phase: 'under traffic' };
  assert.equal(liveLine({ ...base, vip: 'd1' }, 7), '   7 s  VIP on d1     connections  20/20 alive  answers   66/s  new 4 ok  under traffic');
  assert.match(liveLine({ ...base, vip: 'none', alive: 19, newFailed: 2, phase: "d1's lvsd SIGKILLed" }, 21), /VIP on nobody .*connections  19\/20 alive .*new 4 ok 2 FAILED  d1's lvsd SIGKILLed$/);
  assert.match(liveLine({ ...base, vip: 'both' }, 0), /VIP on BOTH/);
  const f = { kept: 20, total: 20, longestGapMs: 1650, takeoverMs: 3711, newAfterTakeover: 40, newFailedAfterTakeover: 0, newDuringGap: 12, newFailedDuringGap: 3, syncedBeforeKill: 24, syncMasterAfterMs: 900 };
  const text = figuresLines(f);
  assert.match(text, /kept across the master's SIGKILL: 20 of 20\n/);
  assert.match(text, /longest silence on a connection: 1650 ms/);
  assert.match(text, /new connections after the takeover: 40, 0 failed \(during the takeover: 12, 3 failed\)/);
  assert.match(figuresLines({ ...f, kept: 17 }), /17 of 20 \(some were lost\)/);
  assert.match(figuresLines({ ...f, syncMasterAfterMs: -1 }), /sends sync messages not within 60 s/);
});
