// The HA lab under continuous client traffic: two lvsd directors (VRRP v3 at 100 ms, nftables
// dataplane), three nginx real servers. Each scenario reports requests sent, failed and the longest
// gap without a successful response, and checks the outcome an operator cares about.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Lab, LAB } from '../../lab/lab.js';
import { failoverCommand } from '../../lab/banner.js';
import { startNginx } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { labScenario, labTraffic, sleep, until } from '../support/lab-scenario.js';

let lab: Lab;
const scenario = labScenario(() => lab);
const { holders, withTraffic, noFailures } = labTraffic(() => lab);

const run = promisify(execFile);





function transitionsIn(director: string): number {
  const log = readFileSync(`${lab.director(director).dir}/lvsd.log`, 'utf8');
  return log.split('\n').filter((l) => l.includes('"msg":"Entering ')).length;
}

before(async () => {
  requireRoot();
  requireCommands('nginx', 'nft', 'conntrack', 'ip');
  lab = await Lab.up({ advertInterval: '100ms', checkInterval: '500ms' });
  await until('d1 to hold the VIP', holders(['d1']), 20_000);
});

after(async () => {
  await lab.down();
});

scenario('steady state: round robin over the three real servers through the VIP', async (t) => {
  const stats = await withTraffic(t, () => sleep(500), 0);
  noFailures(stats);
  assert.deepEqual(Object.keys(stats.byServer).sort(), ['rs1', 'rs2', 'rs3']);
});

scenario('config reload (weight change, SIGHUP): no failed request, no VRRP transition', async (t) => {
  const d1 = lab.director('d1');
  const before = transitionsIn('d1');
  const original = readFileSync(d1.configPath, 'utf8');
  const stats = await withTraffic(t, async () => {
    writeFileSync(d1.configPath, original.replace(`{ address: ${LAB.realServers[0]}, port: 80, weight: 1 }`, `{ address: ${LAB.realServers[0]}, port: 80, weight: 3 }`));
    d1.process?.kill('SIGHUP');
    await until('the reload to be logged', () => Promise.resolve(readFileSync(`${d1.dir}/lvsd.log`, 'utf8').includes('reload done')));
  });
  noFailures(stats);
  assert.equal(transitionsIn('d1'), before, 'the reload caused no VRRP transition');
  writeFileSync(d1.configPath, original);
  d1.process?.kill('SIGHUP');
});

scenario('real server crash: health check takes it out, then back in when it returns', async (t) => {
  const rs2 = lab.realServers[1];
  assert.ok(rs2?.nginx);
  let detectedMs = 0;
  const stats = await withTraffic(t, async () => {
    await rs2.nginx?.stop();
    rs2.nginx = null;
    const started = Date.now();
    // down after fall (2) × interval (500 ms) + timeout: the dataplane map no longer holds rs2
    await until('rs2 to leave the nftables map', async () => !(await lab.director('d1').ns.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout.includes(LAB.realServers[1]));
    detectedMs = Date.now() - started;
  });
  t.diagnostic(`rs2 left the dataplane ${detectedMs} ms after nginx stopped`);
  assert.ok(!('rs2' in stats.byServer) || stats.failed < stats.sent / 2, 'most requests still succeed');
  const after = await withTraffic(t, () => sleep(1000), 0);
  noFailures(after, 'no failures once rs2 is out');
  assert.equal(after.byServer.rs2, undefined);

  rs2.nginx = await startNginx(rs2.ns, { body: 'rs2' });
  await until('rs2 to come back', async () => (await lab.director('d1').ns.exec('nft', ['list', 'table', 'inet', 'lvsd'])).stdout.includes(LAB.realServers[1]));
  const back = await withTraffic(t, () => sleep(1000), 0);
  noFailures(back);
  assert.ok((back.byServer.rs2 ?? 0) > 0, 'rs2 serves again');
});

scenario('master crash (SIGKILL): the backup takes the VIP and traffic resumes', async (t) => {
  let tookMs = 0;
  const stats = await withTraffic(t, async () => {
    await lab.stopDirector('d1', 'SIGKILL');
    tookMs = await until('d2 to take the VIP', async () => (await lab.vipHolders()).includes('d2'));
  });
  t.diagnostic(`VIP on d2 ${tookMs} ms after the kill`);
  assert.ok(stats.longestGapMs < 5000, `longest gap ${stats.longestGapMs} ms`);
  const settled = await withTraffic(t, () => sleep(800), 0);
  noFailures(settled, 'no failures once d2 is master');

  // d1 comes back with priority 150, clears the stale VIP a crash left behind and preempts.
  await lab.startDirector('d1');
  await until('d1 to be the only VIP holder again', holders(['d1']), 20_000);
});

scenario('master graceful stop with the command `npm start` prints (SIGTERM): d1 only, the backup takes over at once', async (t) => {
  let tookMs = 0;
  const stats = await withTraffic(t, async () => {
    // What a user pastes from the banner, run from the host as they would: it must stop d1 and nothing else.
    await run('sh', ['-c', failoverCommand(lab.director('d1'))]);
    assert.equal(await lab.director('d1').exited, 0, 'd1 stopped gracefully');
    await lab.stopDirector('d1', 'SIGTERM');
    tookMs = await until('d2 to be the only VIP holder', holders(['d2']));
  });
  t.diagnostic(`VIP only on d2 ${tookMs} ms after d1 exited`);
  assert.ok(stats.longestGapMs < 5000, `longest gap ${stats.longestGapMs} ms`);
  const d2 = lab.director('d2').process;
  assert.ok(d2 !== null && d2.exitCode === null && d2.signalCode === null, 'd2 still runs');
  await lab.startDirector('d1');
  await until('d1 to be the only VIP holder again', holders(['d1']), 20_000);
});

scenario('lvsd restart on the master: traffic keeps flowing through the restart', async (t) => {
  const stats = await withTraffic(t, async () => {
    await lab.stopDirector('d1', 'SIGTERM');
    await lab.startDirector('d1');
    await until('d1 to be the only VIP holder again', holders(['d1']), 20_000);
  });
  assert.ok(stats.failed <= stats.sent * 0.05, `${stats.failed} of ${stats.sent} failed`);
});
