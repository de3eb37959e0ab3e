// The ECMP lab's hints (LVSD_LAB=ecmp npm start) must each touch one director: network namespaces do not isolate
// process ids, so a pkill would stop every director. The graceful stop runs here in a shell against three
// stand-in directors with pid files where the lab writes them; the full lab runs in test/netns/lab-ecmp.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ecmpBanner, ecmpPidFile, type EcmpBannerInput } from '../../lab/ecmp-banner.js';

const run = promisify(execFile);

const input = (dir: string): EcmpBannerInput => ({
  vip: '192.0.2.10', dir, cli: '/x/cli.js', routerNs: 'lab-router', clientNs: 'lab-client', route: '192.0.2.10 proto bird\n\tnexthop via 10.71.0.1\n', password: 'pw',
  directors: ['d1', 'd2', 'd3'].map((name, i) => ({ name, ns: `lab-${name}`, core: `10.71.0.${String(i + 1)}`, panelPort: 9181 + i })),
});

test('each hint names one director; no pkill; three directors are required', () => {
  const text = ecmpBanner(input('/tmp/l'));
  const line = (label: string): string => text.split('\n').find((l) => l.trimStart().startsWith(label)) ?? assert.fail(`no ${label} in ${text}`);
  assert.match(line('graceful stop'), /kill \$\(cat \/tmp\/l\/d1-lvsd\.pid\)/);
  assert.doesNotMatch(line('graceful stop'), /d2|d3/);
  assert.match(line('withdraw'), /ip netns exec lab-d2 node \/x\/cli\.js bgp withdraw 192\.0\.2\.10\/32 --socket \/tmp\/l\/d2-lvsd\.sock/);
  assert.match(line('crash a link'), /^\s*crash a link\s+ip -n lab-d3 link set eth0 down/);
  assert.match(line('watch it'), /ip -n lab-router route show 192\.0\.2\.10$/);
  assert.doesNotMatch(text, /pkill|killall/);
  assert.throws(() => ecmpBanner({ ...input('/tmp/l'), directors: input('/tmp/l').directors.slice(0, 2) }), /three directors/);
});

test('the printed graceful stop, run in a shell, ends d1 only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lab-ecmp-banner-'));
  // Every stand-in carries the same words on its command line, as three lvsd do.
  const procs = ['d1', 'd2', 'd3'].map((name) => {
    const p = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'lvsd-lab'], { stdio: 'ignore' });
    writeFileSync(ecmpPidFile(dir, name), `${String(p.pid)}\n`);
    return { p, exited: new Promise<NodeJS.Signals | null>((r) => p.once('exit', (_c, s) => { r(s); })) };
  });
  t.after(() => {
    for (const { p } of procs) p.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const command = /graceful stop\s+(.*?)\s{3}\(/.exec(ecmpBanner(input(dir)))?.[1];
  assert.ok(command !== undefined);
  await run('sh', ['-c', command]);
  assert.equal(await procs[0]?.exited, 'SIGTERM');
  for (const { p } of procs.slice(1)) {
    assert.equal(p.exitCode, null);
    assert.doesNotThrow(() => process.kill(p.pid ?? 0, 0));
  }
});
