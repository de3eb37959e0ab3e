// The chaos half of the HA lab's matrix (issue #17; lab-scenarios.test.ts has the crash, graceful stop,
// real-server crash and restart rows, lab-operations.test.ts the reload storm and an nft error injected):
// a real server that accepts and never answers, a link flap on the master's VRRP interface, the VRRP engine
// process killed under a running lvsd, and a full disk under the state and config files. Each row runs
// under continuous traffic and reports sent, failed and the longest gap; each checks what an operator needs:
// the director recovers on its own, and nothing is lost or half-written.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Lab, LAB } from '../../lab/lab.js';
import { localRequest, LocalApiError } from '../../daemon/api/local-client.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { labScenario, labTraffic, sleep, until } from '../support/lab-scenario.js';
import { children } from '../support/crash.js';

let lab: Lab;
const scenario = labScenario(() => lab);
const { holders, withTraffic, noFailures } = labTraffic(() => lab);
const SERVICE = `tcp:${LAB.vip}:80`;

const nftHas = async (d: string, addr: string): Promise<boolean> => (await lab.director(d).ns.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout.includes(addr);



/** How far lvsd's wall clock is from ours: the Date header of its answer on the admin socket. */
function clockSkewMs(socket: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ socketPath: socket, path: '/api/v1/status' }, (res) => {
      res.resume();
      resolve(Date.parse(res.headers.date ?? '') - Date.now());
    }).on('error', reject).end();
  });
}

const log = (d: string): string => readFileSync(join(lab.director(d).dir, 'lvsd.log'), 'utf8');

before(async () => {
  requireRoot();
  requireCommands('nginx', 'nft', 'conntrack', 'ip', 'mount');
  lab = await Lab.up({ advertInterval: '100ms', checkInterval: '500ms' });
  await until('d1 to hold the VIP', holders(['d1']), 20_000);
});

after(async () => {
  await lab.down();
});

scenario('a real server that accepts and never answers (nginx stopped with SIGSTOP): the health check takes it out, SIGCONT brings it back', async (t) => {
  const rs2 = lab.realServers[1];
  const pid = rs2?.nginx?.process.pid;
  assert.ok(rs2 !== undefined && pid !== undefined);
  const nginxPids = [pid, ...children(pid)];
  let outMs = 0;
  // The kernel still completes the handshake (the listen backlog): only the HTTP check can see this one.
  const stats = await withTraffic(t, async () => {
    for (const p of nginxPids) process.kill(p, 'SIGSTOP');
    outMs = await until('rs2 to leave the dataplane', async () => !(await nftHas('d1', LAB.realServers[1])));
  });
  t.diagnostic(`rs2 out of the nftables map ${outMs} ms after it hung; ${stats.failed} requests failed meanwhile (those sent to rs2)`);
  assert.ok(stats.failed < stats.sent / 2, 'most requests still succeed while rs2 hangs');
  noFailures(await withTraffic(t, () => sleep(1000), 0), 'once rs2 is out');
  for (const p of nginxPids) process.kill(p, 'SIGCONT');
  await until('rs2 to come back', () => nftHas('d1', LAB.realServers[1]));
  const back = await withTraffic(t, () => sleep(1000), 0);
  noFailures(back, 'once rs2 answers again');
  assert.ok((back.byServer.rs2 ?? 0) > 0, 'rs2 serves again');
});

scenario('link flap on the master\'s VRRP interface: d1 goes to FAULT and lets the VIP go, d2 takes it, d1 takes it back when the link returns', async (t) => {
  const d1 = lab.director('d1');
  let d2Ms = 0;
  let backMs = 0;
  const stats = await withTraffic(t, async () => {
    await d1.ns.exec('ip', ['link', 'set', 'eth0', 'down']);
    d2Ms = await until('d2 alone to hold the VIP while d1\'s link is down', holders(['d2']));
    await sleep(1000);
    await d1.ns.exec('ip', ['link', 'set', 'eth0', 'up']);
    backMs = await until('d1 alone to hold the VIP again', holders(['d1']));
  });
  t.diagnostic(`VIP on d2 alone ${d2Ms} ms after the link went down; back on d1 alone ${backMs} ms after it came up`);
  assert.match(log('d1'), /Entering FAULT STATE/, 'd1 logged its FAULT');
  assert.ok(stats.longestGapMs < 5000, `longest gap ${stats.longestGapMs} ms`);
  noFailures(await withTraffic(t, () => sleep(800), 0), 'once d1 is master again');
});

scenario('the VRRP engine process killed under a running lvsd: lvsd logs it, starts a new one, and d1 is master again', async (t) => {
  const d1 = lab.director('d1');
  const lvsd = d1.process?.pid;
  assert.ok(lvsd !== undefined);
  const engineOf = (): number | undefined => children(lvsd).find((p) => readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('engine-process'));
  const engine = engineOf();
  assert.ok(engine !== undefined, `no VRRP engine process under lvsd ${lvsd}: children ${JSON.stringify(children(lvsd))}`);
  let respawnMs = 0;
  const stats = await withTraffic(t, async () => {
    process.kill(engine, 'SIGKILL');
    const killedAt = Date.now();
    await until('a new VRRP engine process', () => Promise.resolve((engineOf() ?? engine) !== engine));
    respawnMs = Date.now() - killedAt;
    await until('d1 alone to hold the VIP', holders(['d1']));
  }, 2500);
  t.diagnostic(`new engine ${respawnMs} ms after the kill; longest gap ${stats.longestGapMs} ms`);
  assert.match(log('d1'), /VRRP engine process exited unexpectedly/);
  assert.equal(d1.process?.exitCode, null, 'lvsd itself still runs');
  assert.ok(stats.longestGapMs < 5000, `longest gap ${stats.longestGapMs} ms`);
  noFailures(await withTraffic(t, () => sleep(800), 0), 'once the new engine runs');
});

scenario('split brain and its heal: VRRP cut on d2 makes both masters; when it heals d1 answers, d2 steps down, the client follows d1', async (t) => {
  const d2 = lab.director('d2');
  const cut = 'table inet lvt_chaos {\n chain in { type filter hook input priority 0; ip protocol vrrp drop; }\n chain out { type filter hook output priority 0; ip protocol vrrp drop; }\n}\n';
  let bothMs = 0;
  let healMs = 0;
  const stats = await withTraffic(t, async () => {
    await d2.ns.exec('nft', ['-f', '-'], { input: cut });
    bothMs = await until('both directors to hold the VIP', holders(['d1', 'd2']));
    await sleep(1000);
    await d2.ns.exec('nft', ['delete', 'table', 'inet', 'lvt_chaos']);
    healMs = await until('d1 alone to hold the VIP after the heal', holders(['d1']));
  }, 2000);
  t.diagnostic(`both masters ${bothMs} ms after the cut; d1 alone ${healMs} ms after the heal`);
  assert.ok(stats.longestGapMs < 5000, `longest gap ${stats.longestGapMs} ms`);
  noFailures(await withTraffic(t, () => sleep(800), 0), 'once the split has healed');
});

scenario('wall-clock jumps on the master (2 hours back, then 3 days ahead): no VRRP transition, no health flap, no failed request', async (t) => {
  // libfaketime moves CLOCK_REALTIME for d1 (and its VRRP engine process) as an NTP step or a bad RTC would;
  // the timers that matter run on the monotonic clock, which it leaves alone.
  const lib = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
  requireCommands('faketime');
  const d1 = lab.director('d1');
  const offset = join(d1.dir, 'faketime-offset');
  writeFileSync(offset, '+0\n');
  await lab.stopDirector('d1');
  await until('d2 to hold the VIP', holders(['d2']));
  await lab.startDirector('d1', { LD_PRELOAD: lib, FAKETIME_TIMESTAMP_FILE: offset, FAKETIME_NO_CACHE: '1', DONT_FAKE_MONOTONIC: '1' });
  await until('d1 alone to hold the VIP', holders(['d1']));
  await sleep(3000); // every real server checked up on the new d1
  const count = (re: RegExp): number => lab.directors.reduce((n, d) => n + log(d.name).split('\n').filter((l) => re.test(l)).length, 0);
  const [transitions, downs] = [count(/"msg":"Entering /), count(/real server down/)];
  const skew: number[] = [];
  const stats = await withTraffic(t, async () => {
    writeFileSync(offset, '-2h\n');
    await sleep(2500);
    skew.push(await clockSkewMs(join(d1.dir, 'lvsd.sock')));
    writeFileSync(offset, '+3d\n');
    await sleep(2500);
    skew.push(await clockSkewMs(join(d1.dir, 'lvsd.sock')));
    writeFileSync(offset, '+0\n');
  });
  t.diagnostic(`d1's wall clock was off by ${skew.map((s) => `${Math.round(s / 3_600_000)} h`).join(', then ')}`);
  // The jumps really happened in lvsd (its HTTP Date header), or this row proves nothing.
  assert.ok(Math.abs((skew[0] ?? 0) + 2 * 3_600_000) < 60_000 && Math.abs((skew[1] ?? 0) - 72 * 3_600_000) < 60_000, `skews ${JSON.stringify(skew)}`);
  noFailures(stats, 'across the clock jumps');
  assert.equal(count(/"msg":"Entering /), transitions, 'no VRRP transition on either director');
  assert.equal(count(/real server down/), downs, 'no real server went down');
  assert.deepEqual(await lab.vipHolders(), ['d1']);
});

scenario('a full disk under the state file and the config: a drain and a config apply are refused naming the file, nothing changes, and both work once there is room', async () => {
  // On the backup (d2), so the traffic through d1 is not part of this row.
  const d2 = lab.director('d2');
  await lab.stopDirector('d2');
  const fs = join(d2.dir, 'small-disk');
  mkdirSync(fs, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'lvsd-chaos', fs]);
  after(() => { execFileSync('umount', ['-l', fs]); });
  for (const f of ['lvsd.yaml', 'state.json']) copyFileSync(join(d2.dir, f), join(fs, f));
  d2.configPath = join(fs, 'lvsd.yaml');
  d2.statePath = join(fs, 'state.json');
  await lab.startDirector('d2');
  const socket = join(d2.dir, 'lvsd.sock');
  // The TCP listener the lab waits for comes up before the admin socket.
  await until('d2\'s admin socket', () => localRequest(socket, 'GET', '/api/v1/status').then(() => true, () => false), 10_000);
  const stateBefore = readFileSync(d2.statePath, 'utf8');
  const configBefore = readFileSync(d2.configPath, 'utf8');
  // Fill the disk to the last block.
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${join(fs, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
  } catch {
    // dd stops with "No space left on device": that is the point
  }

  const rs = `${LAB.realServers[0]}:80`;
  const overridePath = `/api/v1/services/${encodeURIComponent(SERVICE)}/real-servers/${encodeURIComponent(rs)}/override`;
  const refused = await localRequest(socket, 'PUT', overridePath, { drain: true }).then(() => null, (e: unknown) => e);
  assert.ok(refused instanceof LocalApiError, `the drain was accepted on a full disk: ${String(refused)}`);
  assert.equal(refused.status, 507, refused.message);
  assert.match(refused.message, new RegExp(`${d2.statePath.replace(/[./]/g, '\\$&')}.*ENOSPC`));
  const status = await localRequest<{ virtualServices: { id: string; realServers: { id: string; override: unknown }[] }[] }>(socket, 'GET', '/api/v1/status');
  assert.equal(status.body.virtualServices.find((v) => v.id === SERVICE)?.realServers.find((r) => r.id === rs)?.override ?? null, null, 'the refused drain is not in force');
  assert.ok(await nftHas('d2', LAB.realServers[0]), 'rs1 is still in d2\'s dataplane');

  const newText = configBefore.replace(`{ address: ${LAB.realServers[2]}, port: 80, weight: 1 }`, `{ address: ${LAB.realServers[2]}, port: 80, weight: 7 }`);
  const applied = await localRequest(socket, 'POST', '/api/v1/config/apply', { text: newText }).then(() => null, (e: unknown) => e);
  assert.ok(applied instanceof LocalApiError, `the apply was accepted on a full disk: ${String(applied)}`);
  assert.equal(applied.status, 507, applied.message);
  assert.match(applied.message, new RegExp(`${d2.configPath.replace(/[./]/g, '\\$&')}.*ENOSPC`));
  assert.equal(readFileSync(d2.configPath, 'utf8'), configBefore, 'the config file is whole and unchanged');
  assert.equal(readFileSync(d2.statePath, 'utf8'), stateBefore, 'the state file is whole and unchanged');
  assert.equal(d2.process?.exitCode, null, 'lvsd still runs');
  assert.deepEqual(await lab.vipHolders(), ['d1'], 'VRRP did not move');

  execFileSync('rm', ['-f', join(fs, 'filler')]);
  await localRequest(socket, 'PUT', overridePath, { drain: true });
  assert.match(readFileSync(d2.statePath, 'utf8'), /"drain": ?true/, 'the drain is in the state file');
  await until('rs1 to leave d2\'s dataplane', async () => !(await nftHas('d2', LAB.realServers[0])), 5_000);
  await localRequest(socket, 'POST', '/api/v1/config/apply', { text: newText });
  assert.equal(readFileSync(d2.configPath, 'utf8'), newText);
});
