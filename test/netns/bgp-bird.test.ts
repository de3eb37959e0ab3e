// lvsd driving a real BIRD 2 over its control socket, peering with a real BIRD router (issue #14):
//   router ── lan ── d1 (lvsd + bird, VIP 192.0.2.10 on lo) ── lan ── rs1 (nginx)
// The router's kernel table is the judge: the VIP's route appears via d1 while its virtual server has quorum,
// disappears when rs1 fails, comes back with it, carries the graceful-shutdown community during a stop's
// drain, and is gone once lvsd has stopped. A second run points lvsd at a socket that does not exist.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { BIN, startRun, type LvsdRun } from '../support/lvsd-run.js';
import { startNginx, type NginxHandle } from '../support/nginx.js';

const VIP = '192.0.2.10';

let topo: Topology;
let router: Netns;
let d1: Netns;
let rs1: Netns;
let dir: string;
const birds: ChildProcess[] = [];

function birdConf(routerId: string, body: string): string {
  return `router id ${routerId};\nprotocol device {}\n${body}\n`;
}

async function startBird(ns: Netns, name: string, conf: string): Promise<string> {
  const file = join(dir, `${name}.conf`);
  const socket = join(dir, `${name}.ctl`);
  writeFileSync(file, conf);
  await ns.exec('bird', ['-p', '-c', file]); // parse only: a broken test config fails here, with BIRD's message
  const child = ns.spawn('bird', ['-f', '-c', file, '-s', socket]);
  let err = '';
  child.stderr?.on('data', (d: Buffer) => { err += d.toString(); });
  birds.push(child);
  await until(async () => (await ns.exec('birdc', ['-s', socket, 'show', 'status'])).stdout.includes('Daemon is up'), `${name}'s bird to answer (stderr: ${err})`);
  return socket;
}

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const routeOnRouter = async (): Promise<string> => (await router.exec('ip', ['route', 'show', `${VIP}/32`])).stdout.trim();

before(async () => {
  requireRoot();
  requireCommands('ip', 'bird', 'birdc', 'nginx');
  dir = mkdtempSync(join(tmpdir(), 'lvsd-bgp-'));
  topo = await Topology.create('bgp');
  router = await topo.addHost({ name: 'router', addresses: ['10.77.0.1/24'] });
  d1 = await topo.addHost({ name: 'd1', addresses: ['10.77.0.2/24'] });
  rs1 = await topo.addHost({ name: 'rs1', addresses: ['10.77.0.10/24'] });
  await d1.addAddress('lo', `${VIP}/32`);
  // Short BGP timers so the test is quick; the defaults are minutes (docs/bgp.md).
  const timers = 'hold time 3; keepalive time 1; connect retry time 1;';
  await startBird(router, 'router', birdConf('10.77.0.1', `
protocol kernel { ipv4 { export all; }; merge paths on; }
protocol bgp d1 { local 10.77.0.1 as 65000; neighbor 10.77.0.2 as 65001; ${timers} ipv4 { import all; export none; }; }`));
});

after(() => {
  for (const b of birds) b.kill('SIGKILL');
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function lvsdConfig(socket: string, fragment: string): string {
  return `
node: { name: d1 }
api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }
stateFile: ${join(dir, 'state.json')}
dataplane: userspace
bgp:
  socket: ${socket}
  configFile: ${fragment}
  drainOnStop: 3s
  announce:
    - prefix: ${VIP}/32
      communities: ["65001:100"]
virtualServers:
  - name: web
    address: ${VIP}
    port: 80
    protocol: tcp
    scheduler: rr
    method: nat
    quorum: 1
    healthCheck: { type: tcp, interval: 500ms, timeout: 400ms, rise: 1, fall: 1 }
    realServers:
      - { address: 10.77.0.10, port: 80 }
`;
}

test('BIRD announces the VIP while its virtual server has quorum, withdraws it on quorum loss and on stop (after a graceful-shutdown drain); an operator withdraw outlives a restart', { timeout: 240_000 }, async () => {
  const fragment = join(dir, 'lvsd-bird.conf');
  writeFileSync(fragment, '');
  const socket = await startBird(d1, 'd1', birdConf('10.77.0.2', `
include "${fragment}";
protocol bgp upstream { local 10.77.0.2 as 65001; neighbor 10.77.0.1 as 65000; hold time 3; keepalive time 1; connect retry time 1;
  ipv4 { import none; export where proto ~ "lvsd_*"; next hop self; }; }`));
  let nginx: NginxHandle | null = await startNginx(rs1);
  const cfg = join(dir, 'lvsd.yaml');
  writeFileSync(cfg, lvsdConfig(socket, fragment));
  const run: LvsdRun = startRun(['--config', cfg, '--state', join(dir, 'state.json')], ['ip', 'netns', 'exec', d1.name]);
  try {
    await run.waitFor(/^running$/);
    await until(async () => (await routeOnRouter()).includes('via 10.77.0.2'), 'the VIP route via d1 on the router');
    assert.match(await routeOnRouter(), /^192\.0\.2\.10 via 10\.77\.0\.2 dev eth0 proto bird/);
    await run.waitFor(/^bgp: announcing 192\.0\.2\.10\/32/);

    // The snapshot (what `lvsd status`, the API and the panel read) shows the session and the announcement.
    await until(async () => {
      const s = JSON.parse((await d1.exec(process.execPath, [BIN, 'status', '--json', '--socket', join(dir, 'lvsd.sock')])).stdout) as { bgp?: { sessions: { name: string; state: string; info: string }[]; announcements: { prefix: string; announced: boolean }[] } };
      return s.bgp?.sessions.some((x) => x.name === 'upstream' && x.info === 'Established') === true && s.bgp.announcements.some((a) => a.prefix === `${VIP}/32` && a.announced);
    }, 'lvsd status --json to show the established session and the announcement');
    const text = (await d1.exec(process.execPath, [BIN, 'status', '--socket', join(dir, 'lvsd.sock')])).stdout;
    assert.match(text, /^BGP \(bird at .*d1\.ctl\)$/m);
    assert.match(text, /^ {2}session upstream +up +Established/m);
    assert.match(text, /^ {2}announced 192\.0\.2\.10\/32 +announced: quorum on tcp:192\.0\.2\.10:80$/m);

    // A reload BIRD refuses (configure check): the whole reload is rolled back, the fragment put back, the route kept.
    const good = readFileSync(fragment, 'utf8');
    writeFileSync(cfg, lvsdConfig(socket, fragment).replace('communities: ["65001:100"]', 'communities: ["65001:100"]\n    - prefix: 192.0.2.10/24\n      virtualServers: [web]'));
    run.child.kill('SIGHUP');
    const refused = await run.waitFor(/Invalid IPv4 prefix 192\.0\.2\.10\/24/);
    assert.equal(refused.level, 'error');
    assert.match(refused.msg, /lvsd-bird\.conf:\d+:\d+ Invalid IPv4 prefix/, 'BIRD\'s FILE:LINE:COL passed on');
    assert.equal(readFileSync(fragment, 'utf8'), good, 'the fragment BIRD runs is back');
    assert.match(await routeOnRouter(), /via 10\.77\.0\.2/);
    writeFileSync(cfg, lvsdConfig(socket, fragment));

    // Quorum lost: the real server stops; the route is withdrawn.
    await nginx.stop();
    nginx = null;
    await until(async () => (await routeOnRouter()) === '', 'the route withdrawn after quorum loss');
    const withdrawn = await run.waitFor(/^bgp: withdrawing 192\.0\.2\.10\/32/);
    assert.match(withdrawn.msg, /quorum lost on tcp:192\.0\.2\.10:80/);

    // Quorum back: announced again.
    nginx = await startNginx(rs1);
    await until(async () => (await routeOnRouter()).includes('via 10.77.0.2'), 'the route back with the real server');

    // Graceful stop: the route carries 65535:0 (and the configured community) during the drain, then goes.
    run.child.kill('SIGTERM');
    await until(async () => {
      const r = (await router.exec('birdc', ['-s', join(dir, 'router.ctl'), 'show', 'route', 'for', `${VIP}/32`, 'all'])).stdout;
      return r.includes('(65535,0)') && r.includes('(65001,100)');
    }, 'the graceful-shutdown community on the router during the drain', 30_000);
    assert.notEqual(await routeOnRouter(), '', 'still routed during the drain');
    assert.equal(await run.exit, 0);
    await until(async () => (await routeOnRouter()) === '', 'the route withdrawn after lvsd stopped');
    assert.ok(run.lines.some((l) => /^bgp: withdrawing 192\.0\.2\.10\/32 \(withdrawn: lvsd stopped\)/.test(l.msg)));

    // An operator's withdraw outlives a restart: the restarted lvsd's first fragment has it withdrawn.
    const lvsdCli = (...args: string[]) => d1.exec(process.execPath, [BIN, ...args, '--socket', join(dir, 'lvsd.sock')]);
    const again = (): LvsdRun => startRun(['--config', cfg, '--state', join(dir, 'state.json')], ['ip', 'netns', 'exec', d1.name]);
    const second = again();
    let third: LvsdRun | null = null;
    try {
      await second.waitFor(/^running$/);
      await until(async () => (await routeOnRouter()).includes('via 10.77.0.2'), 'the route back after the restart');
      assert.match((await lvsdCli('bgp', 'withdraw', `${VIP}/32`)).stdout, /withdrawn \(by /);
      await until(async () => (await routeOnRouter()) === '', 'the route withdrawn by the operator');
      second.child.kill('SIGTERM');
      assert.equal(await second.exit, 0);
      third = again();
      await third.waitFor(/^running$/);
      await until(async () => {
        const st = JSON.parse((await lvsdCli('status', '--json')).stdout) as { bgp?: { sessions: { info: string }[]; announcements: { announced: boolean; withdrawnBy: string | null }[] } };
        return st.bgp?.sessions.some((x) => x.info === 'Established') === true && st.bgp.announcements[0]?.withdrawnBy !== null && st.bgp.announcements[0]?.announced === false;
      }, 'the restarted lvsd to show the session up and the prefix still withdrawn by the operator');
      assert.equal(await routeOnRouter(), '', 'not announced after the restart');
      assert.ok(!third.lines.some((l) => /^bgp: announcing 192\.0\.2\.10\/32/.test(l.msg)), 'never announced, not even for a moment');
      await lvsdCli('bgp', 'restore', `${VIP}/32`);
      await until(async () => (await routeOnRouter()).includes('via 10.77.0.2'), 'the route back after the restore');
    } finally {
      for (const r of [second, third]) if (r !== null && r.child.exitCode === null) r.child.kill('SIGKILL');
    }
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await nginx?.stop();
  }
});

test('lvsd says clearly when BIRD\'s socket is missing, and keeps serving', { timeout: 120_000 }, async () => {
  const cfg = join(dir, 'lvsd-nosock.yaml');
  const missing = join(dir, 'no-such-bird.ctl');
  writeFileSync(cfg, lvsdConfig(missing, join(dir, 'unused-fragment.conf')).replace('lvsd.sock', 'lvsd2.sock').replace('9180', '9181'));
  const run = startRun(['--config', cfg, '--state', join(dir, 'state2.json')], ['ip', 'netns', 'exec', d1.name]);
  try {
    const line = await run.waitFor(/^bgp: .*does not exist/);
    assert.equal(line.level, 'error');
    assert.ok(line.msg.includes(missing), 'names the socket');
    assert.match(line.msg, /is bird running/);
    await run.waitFor(/^running$/);
    assert.equal(run.child.exitCode, null);
    run.child.kill('SIGTERM');
    assert.equal(await run.exit, 0);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});
