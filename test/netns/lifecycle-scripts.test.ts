// keepalived's startup_script and shutdown_script, measured on keepalived 2.2.7 and then asked of lvsd
// run from the import of the same keepalived.conf: the startup script runs before VRRP starts (no VIP
// yet) and the daemon waits for it; one that hangs past startup_script_timeout gets SIGTERM and the
// daemon starts anyway; the shutdown script runs once the VIP is released and the daemon exits after
// it. Both get the daemon's environment and no arguments.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { importKeepalived } from '../../daemon/config/keepalived/index.js';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { startRun } from '../support/lvsd-run.js';

const VIP = '10.83.0.100';
let topo: Topology;
let d1: Netns;
let dir: string;

before(async () => {
  requireRoot();
  requireCommands('ip', 'keepalived', 'nft');
  topo = await Topology.create('lcscr');
  d1 = await topo.addHost({ name: 'd1', addresses: ['10.83.0.2/24'] });
  dir = mkdtempSync(join(tmpdir(), 'lvsd-lcscr-'));
  const stamp = `"$(cut -d" " -f1 /proc/uptime) vip=$(ip -4 addr show dev eth0 | grep -c ${VIP}) args=$# env=$LCSCR_ENV"`;
  // The startup script hangs until it is told to stop; the shutdown script takes half a second.
  writeFileSync(join(dir, 'start.sh'), `#!/bin/sh\necho start ${stamp} >> ${dir}/events\ntrap 'echo start-term ${stamp} >> ${dir}/events; exit 143' TERM\nsleep 30 &\nwait\n`);
  writeFileSync(join(dir, 'stop.sh'), `#!/bin/sh\necho stop ${stamp} >> ${dir}/events\nsleep 0.5\necho stop-end ${stamp} >> ${dir}/events\n`);
  chmodSync(join(dir, 'start.sh'), 0o755);
  chmodSync(join(dir, 'stop.sh'), 0o755);
  writeFileSync(
    join(dir, 'keepalived.conf'),
    [
      'global_defs {',
      '  router_id d1',
      `  startup_script ${dir}/start.sh`,
      '  startup_script_timeout 1',
      `  shutdown_script ${dir}/stop.sh`,
      '}',
      'vrrp_instance VI_1 {',
      '  interface eth0',
      '  state MASTER',
      '  virtual_router_id 62',
      '  priority 150',
      '  version 3',
      '  advert_int 0.1',
      `  virtual_ipaddress { ${VIP}/24 }`,
      '}',
      '',
    ].join('\n'),
  );
});

after(() => {
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

interface Event {
  what: string;
  at: number;
  vip: number;
  args: number;
  env: string;
}

function events(): Event[] {
  const file = join(dir, 'events');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => {
    const m = /^(\S+) (\S+) vip=(\d+) args=(\d+) env=(.*)$/.exec(l);
    assert.ok(m, l);
    return { what: m[1] ?? '', at: Number(m[2]), vip: Number(m[3]), args: Number(m[4]), env: m[5] ?? '' };
  });
}

const uptime = (): number => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);

async function waitVip(held: boolean, ms: number): Promise<number> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
    if ((await d1.exec('ip', ['-4', 'addr', 'show', 'dev', 'eth0'])).stdout.includes(VIP) === held) return uptime();
  }
  throw new Error(`VIP ${held ? 'never came' : 'never went'}`);
}

/** What one daemon did: the scripts' events, when the VIP came, when the daemon exited. */
interface Run {
  events: Event[];
  vipAt: number;
  exitAt: number;
}

/** The same walk for keepalived and for lvsd: start, wait for the VIP, stop, wait for the exit. */
async function walk(start: () => { stop: () => void; exited: Promise<unknown> }): Promise<Run> {
  rmSync(join(dir, 'events'), { force: true });
  const d = start();
  const vipAt = await waitVip(true, 20_000);
  d.stop();
  await d.exited;
  const exitAt = uptime();
  await waitVip(false, 2000);
  return { events: events(), vipAt, exitAt };
}

function assertKeepalivedOrder(who: string, r: Run): void {
  assert.deepEqual(r.events.map((e) => e.what), ['start', 'start-term', 'stop', 'stop-end'], `${who}: ${JSON.stringify(r.events)}`);
  const [start, term, stop, stopEnd] = r.events as [Event, Event, Event, Event];
  // The startup script runs first, with no VIP; at its 1 s timeout it gets SIGTERM; only then VRRP starts.
  assert.equal(start.vip, 0, `${who}: the startup script runs before VRRP`);
  assert.ok(term.at - start.at >= 0.9 && term.at - start.at < 3, `${who}: SIGTERM ${(term.at - start.at).toFixed(2)} s after the start (timeout 1 s)`);
  assert.ok(r.vipAt >= term.at, `${who}: the VIP comes after the startup script ended`);
  // The shutdown script runs once the VIP is released, and the daemon exits after it finished.
  assert.equal(stop.vip, 0, `${who}: the shutdown script runs after the VIP is released`);
  assert.ok(r.exitAt >= stopEnd.at, `${who}: the daemon exits after the shutdown script`);
  for (const e of r.events) assert.deepEqual([e.args, e.env], [0, 'inherited'], `${who}: no arguments, the daemon's environment`);
}

test('startup_script and shutdown_script: keepalived 2.2.7, then lvsd from the import of the same file', { timeout: 90_000 }, async () => {
  const kad = await walk(() => {
    const child = d1.spawn('env', ['LCSCR_ENV=inherited', 'keepalived', '-n', '-l', '-D', '-P', '-f', join(dir, 'keepalived.conf'), '-p', join(dir, 'k.pid'), '-r', join(dir, 'v.pid')]);
    const exited = new Promise((r) => child.once('exit', r));
    return { stop: () => child.kill('SIGTERM'), exited };
  });
  assertKeepalivedOrder('keepalived', kad);

  const imported = importKeepalived(join(dir, 'keepalived.conf'));
  assert.deepEqual(imported.diagnostics, [], 'the import is complete');
  assert.deepEqual(imported.config.node, { name: 'd1', startupScript: { command: `${dir}/start.sh`, timeout: '1s' }, shutdownScript: { command: `${dir}/stop.sh` } });
  const cfg = join(dir, 'lvsd.yaml');
  writeFileSync(cfg, YAML.stringify({ ...imported.config, api: { listen: '127.0.0.1:9182', socket: join(dir, 'lvsd.sock') }, stateFile: join(dir, 'state.json'), dataplane: 'nftables', nftables: { table: 'lvsd_lcscr', masquerade: false } }));
  const lvsd = await walk(() => {
    const run = startRun(['--config', cfg], ['ip', 'netns', 'exec', d1.name, 'env', 'LCSCR_ENV=inherited']);
    return { stop: () => run.child.kill('SIGTERM'), exited: run.exit };
  });
  assertKeepalivedOrder('lvsd', lvsd);
});
