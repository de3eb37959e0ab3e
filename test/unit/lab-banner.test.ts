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
import { dataplaneLine, labBanner, pidFile } from '../../lab/banner.js';

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

test('npm start says which dataplane the lab uses and why, and where the IPVS pair runs', () => {
  const without = dataplaneLine('nftables', { available: false, reason: 'no /proc/net/ip_vs' });
  assert.match(without, /^dataplane nftables \(this kernel has no IPVS: no \/proc\/net\/ip_vs; .*node dist\/bench\/failover-guest\.js\)$/);
  assert.match(dataplaneLine('nftables', { available: true, reason: '' }), /this kernel has IPVS, but the lab's namespaces use nftables/);
});
