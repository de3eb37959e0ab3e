// `lvsd run` as an operator starts it, inside a network namespace made for the test (eth0 and eth1, as
// the example config expects), so the real director — VRRP, VIPs, nftables — touches nothing of the host.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { startRun as startLvsd, type LvsdRun } from '../support/lvsd-run.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE_TEXT = readFileSync(join(ROOT, 'config/lvsd.yaml'), 'utf8');

let topo: Topology;
let host: Netns;
let dir: string;
let EXAMPLE: string;

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft');
  topo = await Topology.create('clirun');
  host = await topo.addHost({ name: 'd1', addresses: ['192.168.77.2/24'] });
  await topo.link('d1', 'eth1', 'inside', ['10.0.1.2/24']);
  dir = mkdtempSync(join(tmpdir(), 'lvsd-run-'));
  EXAMPLE = join(dir, 'example.yaml');
  writeFileSync(EXAMPLE, localise(EXAMPLE_TEXT));
});

after(() => {
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** The example config with its admin socket and state file moved into this test's directory. */
function localise(text: string): string {
  return text.replace('/run/lvsd/lvsd.sock', join(dir, 'lvsd.sock')).replace('/var/lib/lvsd/state.json', join(dir, 'state.json'));
}

const startRun = (args: string[]): LvsdRun => startLvsd(args, ['ip', 'netns', 'exec', host.name]);

test('run: starts, reports capabilities, SIGHUP with a bad config keeps the old one, a good one applies the diff, SIGTERM exits 0', async () => {
  const cfg = join(dir, 'lvsd.yaml');
  writeFileSync(cfg, localise(EXAMPLE_TEXT));
  const run = startRun(['--config', cfg, '--state', join(dir, 'state.json')]);
  try {
    const starting = await run.waitFor(/^starting$/);
    assert.equal(starting.stateFile, join(dir, 'state.json'));
    await run.waitFor(/^running$/);
    assert.ok(run.lines.some((l) => /^IPVS: /.test(l.msg)), 'IPVS capability reported');
    assert.ok(run.lines.some((l) => /^raw sockets \(CAP_NET_RAW\): /.test(l.msg)), 'raw socket capability reported');
    assert.ok(run.lines.some((l) => /^dataplane: (ipvs|nftables|userspace) \(/.test(l.msg)), 'dataplane choice reported');
    assert.ok(run.lines.some((l) => l.instance === 'VI_OUTSIDE'), 'instance lines carry the instance name');
    assert.ok(run.lines.some((l) => l.virtualServer === 'web'), 'service lines carry the service name');

    // A broken config: every error logged with its place, the old config kept, still running.
    writeFileSync(cfg, localise(EXAMPLE_TEXT).replace('priority: 150                  # director-2: 100\n      state: MASTER                  # director-2: BACKUP (a hint', 'priority: 0\n      state: MASTER                  # director-2: BACKUP (a hint').replace('scheduler: wlc', 'scheduler: wlcc'));
    run.child.kill('SIGHUP');
    const rejected = await run.waitFor(/^reload refused: /);
    assert.equal(rejected.errors, 2);
    assert.ok(run.lines.some((l) => l.level === 'error' && l.msg.startsWith(`${cfg}:`) && /priority: 0 is out of range 1\.\.255/.test(l.msg)));
    assert.ok(run.lines.some((l) => l.level === 'error' && /scheduler: "wlcc" is not one of/.test(l.msg)));
    assert.equal(run.child.exitCode, null, 'still running after a bad reload');

    // A good change: only the difference is reported and handed to the daemon.
    writeFileSync(cfg, localise(EXAMPLE_TEXT).replace('{ address: 10.0.1.12, port: 80, weight: 100 }', '{ address: 10.0.1.12, port: 80, weight: 10 }'));
    run.child.kill('SIGHUP');
    const done = await run.waitFor(/^reload done: /);
    // One line per reload, with the difference only.
    assert.deepEqual(done.changes, ['~ real server web 10.0.1.12:80: weight']);
    assert.equal(run.lines.filter((l) => /^reload done: /.test(l.msg)).length, 1);

    run.child.kill('SIGTERM');
    assert.equal(await run.exit, 0);
    assert.ok(run.lines.some((l) => l.msg === 'SIGTERM: shutting down'));
    assert.equal(run.lines.at(-1)?.msg, 'shut down');
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});

test('run: SIGINT also stops gracefully', async () => {
  const run = startRun(['--config', EXAMPLE]);
  try {
    await run.waitFor(/^running$/);
    run.child.kill('SIGINT');
    assert.equal(await run.exit, 0);
  } finally {
    if (run.child.exitCode === null) run.child.kill('SIGKILL');
  }
});

