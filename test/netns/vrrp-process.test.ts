// The VRRP engine runs in a child process of `lvsd run` (daemon/vrrp/channel.ts). Two promises of that
// design, with a real lvsd in a test namespace and a peer capturing the wire: the child never outlives
// its parent (an orphan master would keep the VIP's traffic after lvsd is gone), and a dead child is
// reported and restarted instead of silently leaving VRRP unrun.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { startRun, type LvsdRun } from '../support/lvsd-run.js';

const CLI = fileURLToPath(new URL('../../daemon/cli/main.js', import.meta.url));
const runCli = async (args: string[]): Promise<string> => (await promisify(execFile)(process.execPath, [CLI, ...args])).stdout;

const D1 = '10.82.0.2';
const VIP = '10.82.0.100';
let topo: Topology;
let d1: Netns;
let dir: string;

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft', 'tcpdump');
  topo = await Topology.create('vrproc');
  d1 = await topo.addHost({ name: 'd1', addresses: [`${D1}/24`] });
  await topo.addHost({ name: 'p1', addresses: ['10.82.0.3/24'] });
  dir = mkdtempSync(join(tmpdir(), 'lvsd-vrproc-'));
});

after(() => {
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function start(env: Record<string, string> = {}): LvsdRun {
  const cfg = join(dir, 'lvsd.yaml');
  writeFileSync(
    cfg,
    [
      'node: { name: d1 }',
      `api: { listen: 127.0.0.1:9181, socket: ${join(dir, 'lvsd.sock')} }`,
      `stateFile: ${join(dir, 'state.json')}`,
      'dataplane: nftables',
      'nftables: { table: lvsd, masquerade: false }',
      'vrrp:',
      '  instances:',
      '    - { name: VI_1, interface: eth0, virtualRouterId: 61, priority: 150, state: MASTER, version: 3, advertInterval: 100ms, virtualIpaddresses: [ ' + VIP + '/24 ] }',
      '',
    ].join('\n'),
  );
  return startRun(['--config', cfg], ['ip', 'netns', 'exec', d1.name, 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`)]);
}

/** The VRRP engine process: the one child of lvsd's main process that runs engine-process.js. */
function enginePid(run: LvsdRun): number {
  const pid = run.child.pid ?? 0;
  const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((x) => x !== '').map(Number);
  const cmdline = (k: number): string => {
    try {
      return readFileSync(`/proc/${k}/cmdline`, 'utf8');
    } catch {
      return ''; // a short-lived helper (nft) that just exited
    }
  };
  const engines = kids.filter((k) => cmdline(k).includes('engine-process.js'));
  assert.equal(engines.length, 1, `lvsd runs one VRRP engine process; its children: ${kids.map((k) => `${k} ${cmdline(k)}`).join(', ')}`);
  return engines[0] ?? 0;
}

/** Waits up to `ms` for a process to be gone (a zombie counts as gone: it runs nothing). */
async function gone(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    let status = '';
    try {
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      // reaped
    }
    if (status === '' || /^State:\s+Z/m.test(status)) return true;
    await sleep(50);
  }
  return false;
}

const holdsVip = async (): Promise<boolean> => (await d1.exec('ip', ['-4', 'addr', 'show', 'dev', 'eth0'])).stdout.includes(`${VIP}/24`);

/** VRRP adverts of VRID 61 on the wire, in order, as `src prio`. */
function adverts(capture: string): { src: string; prio: number }[] {
  return [...capture.matchAll(/(\d+\.\d+\.\d+\.\d+) > 224\.0\.0\.18: VRRPv3, Advertisement, vrid 61, prio (\d+)/g)].map((m) => ({ src: m[1] ?? '', prio: Number(m[2]) }));
}

test('SIGKILL of lvsd: its VRRP engine process stops as on shutdown (priority-0 advert, VIP released) and is gone; nothing keeps advertising', async () => {
  const cap = topo.capture('p1', 'eth0', 'ip proto 112');
  // systemd's variables are the main process's: the engine must not see them (WATCHDOG_PID alone makes lvsd do nothing).
  const run = start({ WATCHDOG_PID: '4242' });
  try {
    await run.waitFor(/MASTER/, 30_000);
    const engine = enginePid(run);
    const environ = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    assert.ok(environ(run.child.pid ?? 0).includes('WATCHDOG_PID=4242'), 'lvsd got WATCHDOG_PID');
    assert.ok(!environ(engine).some((e) => e.startsWith('WATCHDOG_PID=')), 'the engine process did not');
    assert.ok(await holdsVip(), 'the master holds its VIP');

    run.child.kill('SIGKILL');
    await run.exit;
    assert.ok(await gone(engine, 10_000), `the engine process ${engine} is gone after its parent was killed`);
    assert.equal(await holdsVip(), false, 'the VIP was released');
    // 10 advert intervals more on the wire: an orphan master would show here.
    await sleep(1000);
    const seen = adverts(await cap.stop()).filter((a) => a.src === D1);
    assert.ok(seen.some((a) => a.prio > 0), 'adverts were seen while lvsd ran');
    const resign = seen.findIndex((a) => a.prio === 0);
    assert.ok(resign >= 0, 'the engine resigned with a priority-0 advert');
    assert.deepEqual(seen.slice(resign).filter((a) => a.prio > 0), [], 'no advert after the resignation');
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  }
});

test('a VRRP engine process that dies is reported and restarted: lvsd keeps serving, a new engine is MASTER again, lvsd still stops cleanly', async () => {
  const run = start();
  try {
    await run.waitFor(/MASTER/, 30_000);
    const engine = enginePid(run);
    process.kill(engine, 'SIGKILL');
    const exited = await run.waitFor(/^VRRP engine process exited unexpectedly$/, 10_000);
    assert.equal(exited.level, 'error');
    assert.equal(exited.how, 'signal SIGKILL');
    const failed = await run.waitFor(/^VRRP engine failed: /, 10_000);
    assert.match(failed.msg, /signal SIGKILL/);
    assert.equal(run.child.exitCode, null, 'lvsd keeps running');
    // As keepalived's parent restarts its VRRP child: after a second, a new engine, which wins again.
    assert.equal((await run.waitFor(/^restarting the VRRP engine in \d+ ms$/, 10_000)).inMs, 1000);
    await run.waitFor(/^VRRP engine restarted$/, 30_000);
    assert.notEqual(enginePid(run), engine);
    const sock = join(dir, 'lvsd.sock');
    const deadline = Date.now() + 20_000;
    let status = '';
    while (!/^ {2}VI_1 +MASTER /m.test(status)) {
      if (Date.now() > deadline) assert.fail(`VI_1 not MASTER again:\n${status}`);
      await sleep(200);
      status = await runCli(['status', '--socket', sock]);
    }
    assert.doesNotMatch(status, /NOT RUNNING/);
    assert.ok((await d1.addresses('eth0')).includes(`${VIP}/24`), 'the new engine holds the VIP');
    run.child.kill('SIGTERM');
    assert.equal(await run.exit, 0);
  } finally {
    if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  }
});
