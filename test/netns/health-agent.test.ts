// The agent check end to end: a real `lvsd run` in a namespace (nftables dataplane) in front of two
// real servers; rs1 runs a weight-feedback agent (a small Node TCP server, the real thing for this
// protocol) whose answer the test rewrites; rs2 runs none. What the agent says must reach the
// dataplane's table — read back from the kernel through `lvsd status --json` — with events naming
// the reason: a percentage scales rs1's configured weight, drain keeps it at weight 0 and up, maint
// takes it out, ready brings it back, garbage fails the check naming the agent. rs2's silent agent
// keeps it at its configured weight (an agent that does not answer must not take a server out).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Topology } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { BIN, startRun, type LvsdRun } from '../support/lvsd-run.js';
import { fixturePath } from '../fixtures/health/harness.js';

const run = promisify(execFile);
const SERVICE = 'tcp:10.79.0.100:80';
const RS1 = '10.79.0.11:80';
const RS2 = '10.79.0.12:80';

let topo: Topology;
let dir: string;
let answerFile: string;
let lvsd: LvsdRun;
const children: ChildProcess[] = [];

interface RsStatus { id: string; weight: { configured: number; effective: number | null }; health: { status: string; lastCheck: { result: string } | null } }

async function realServers(): Promise<Map<string, RsStatus>> {
  const { stdout } = await run(process.execPath, [BIN, 'status', '--json', '--socket', join(dir, 'lvsd.sock')]);
  const doc = JSON.parse(stdout) as { virtualServices: { id: string; realServers: RsStatus[] }[] };
  return new Map((doc.virtualServices.find((v) => v.id === SERVICE)?.realServers ?? []).map((r) => [r.id, r]));
}

/** Waits until rs1 and rs2 show these (effective weight, health) in the dataplane; returns rs1. */
async function until(rs1: [number | null, string], rs2: [number | null, string] = [7, 'up'], timeoutMs = 10_000): Promise<RsStatus> {
  const end = Date.now() + timeoutMs;
  let seen = '';
  for (;;) {
    const m = await realServers();
    const a = m.get(RS1);
    const b = m.get(RS2);
    const got = JSON.stringify([[a?.weight.effective, a?.health.status], [b?.weight.effective, b?.health.status]]);
    if (got === JSON.stringify([rs1, rs2]) && a !== undefined) return a;
    seen = `${got}; rs1 last check: ${a?.health.lastCheck?.result ?? '-'}`;
    if (Date.now() > end) throw new Error(`timed out waiting for rs1 ${JSON.stringify(rs1)}, rs2 ${JSON.stringify(rs2)}: ${seen}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Replaces the agent's answer atomically (a rename), so no check reads a half-written file. */
const say = (line: string): void => {
  writeFileSync(`${answerFile}.new`, line);
  renameSync(`${answerFile}.new`, answerFile);
};

before(async () => {
  requireRoot();
  requireCommands('ip', 'nft');
  topo = await Topology.create('hagent');
  dir = mkdtempSync(join(tmpdir(), 'lvsd-agent-'));
  answerFile = join(dir, 'answer');
  say('100%\n');
  const director = await topo.addHost({ name: 'd1', addresses: ['10.79.0.1/24'] });
  for (const [name, addr] of [['rs1', '10.79.0.11'], ['rs2', '10.79.0.12']] as const) {
    const ns = await topo.addHost({ name, addresses: [`${addr}/24`] });
    // rs2 serves port 80 but has no agent on 9999: its agent check is refused every time.
    const child = ns.spawn(process.execPath, [fixturePath('agent-server.js'), addr, name === 'rs1' ? '9999' : '9998', '80', answerFile]);
    children.push(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => { resolve(); }));
  }
  // Weights 10 and 7 share no divisor, so nftables' slot table shows the weights themselves.
  const config = join(dir, 'lvsd.yaml');
  writeFileSync(config, `node: { name: d1 }
api: { listen: 127.0.0.1:9180, socket: ${join(dir, 'lvsd.sock')} }
stateFile: ${join(dir, 'state.json')}
dataplane: nftables
nftables: { table: lvsd, masquerade: false }
virtualServers:
  - name: web
    address: 10.79.0.100
    port: 80
    protocol: tcp
    scheduler: wrr
    method: nat
    healthCheck:
      type: tcp
      interval: 200ms
      timeout: 500ms
      agent: { port: 9999 }
    realServers:
      - { address: 10.79.0.11, port: 80, weight: 10 }
      - { address: 10.79.0.12, port: 80, weight: 7 }
`);
  lvsd = startRun(['--config', config], ['ip', 'netns', 'exec', director.name]);
  await lvsd.waitFor(/^running$/);
});

after(async () => {
  if (lvsd.child.exitCode === null) {
    lvsd.child.kill('SIGTERM');
    await lvsd.exit;
  }
  for (const c of children) c.kill('SIGKILL');
  topo.destroy();
  rmSync(dir, { recursive: true, force: true });
});

test('the agent\'s word reaches the dataplane: percentage, drain, maint, ready, garbage', async () => {
  await until([10, 'up']);

  say('50% #busy\n');
  await until([5, 'up']);
  const halved = await lvsd.waitFor(/^real server weight 10 → 5: /);
  assert.equal(halved.msg, 'real server weight 10 → 5: agent: 50% (busy)');
  assert.equal(halved.realServer, RS1);

  say('drain\n');
  const drained = await until([0, 'up']);
  assert.equal(drained.health.lastCheck?.result, 'agent: drain', 'drained, still up, still in the table');
  await lvsd.waitFor(/^real server weight 5 → 0: agent: drain$/);

  say('maint #kernel upgrade\n');
  await until([null, 'down']);
  const down = await lvsd.waitFor(/^real server down: /);
  assert.deepEqual([down.msg, down.reason], ['real server down: agent: maint (kernel upgrade)', 'agent']);

  // ready ends maint and drain; the percentage the agent gave last (50 %) still holds.
  say('ready up\n');
  await until([5, 'up']);

  say('75%\n');
  await until([8, 'up']);

  say('HTTP/1.1 400 Bad Request\r\n');
  const garbage = await until([null, 'down']);
  assert.equal(garbage.health.lastCheck?.result, 'protocol: agent 10.79.0.11:9999: unknown word "HTTP/1.1" in "HTTP/1.1 400 Bad Request" (expected N%, up, down, stopped, fail, ready, drain, maint, maxconn:N, #reason)');

  say('100%\n');
  await until([10, 'up']);
  assert.ok(!lvsd.lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('real server') && l.realServer === RS2), 'rs2 (no agent) never changed');
});
