// keepalived's UDP_CHECK without require_reply, as lvsd's udp check without `expect` does it: a server
// that never answers stays up, one whose port answers with an ICMP port-unreachable goes down
// (issue #16: measured with keepalived 2.2.7 in the guest, it "keeps a silent server and drops one that
// answers ICMP port-unreachable"). Real kernel behaviour in namespaces: a UDP socket that reads and
// never replies, the same port with nothing bound (the kernel answers port-unreachable), and an nft
// rule dropping the datagrams (silence again). From the config file down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Topology } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthPlan } from '../../daemon/director/plan.js';
import { MonitorDriver } from '../fixtures/health/harness.js';

const CONFIG = `
virtualServers:
  - address: 10.80.0.100
    port: 5300
    protocol: udp
    healthCheck: { type: udp, interval: 250ms, timeout: 1s, rise: 1, fall: 1, udp: { payload: "6c767364" } }
    realServers: [{ address: 10.80.0.12 }]
`;
const ID = 'udp:10.80.0.100:5300/10.80.0.12:5300';
const WAIT = 15_000;

test('udp check without expect: a silent server stays up, an ICMP port-unreachable takes it down (keepalived semantics)', async (t) => {
  requireRoot();
  requireCommands('ip', 'nft');
  const loaded = loadConfigText(CONFIG);
  if (!loaded.ok) assert.fail(loaded.errors.map(formatError).join('\n'));
  const plan = healthPlan(loaded.config);
  assert.equal(plan.targets[0]?.check.udp?.expect, undefined);

  const topo = await Topology.create('hudp');
  const drivers: MonitorDriver[] = [];
  const svc = await topo.addHost({ name: 'svc', addresses: ['10.80.0.12/24'] });
  const client = await topo.addHost({ name: 'client', addresses: ['10.80.0.1/24'] });
  // Four checks a second to one peer: the kernel's ICMP rate limit must not turn port-unreachables into silence.
  await svc.exec('sysctl', ['-qw', 'net.ipv4.icmp_ratelimit=0']);
  // A UDP service that reads every datagram and never answers, counting them.
  const silent = svc.spawn(process.execPath, ['-e', [
    "const s = require('node:dgram').createSocket('udp4');",
    "let n = 0; s.on('message', () => { n++; });",
    "s.bind(5300, '10.80.0.12', () => process.stdout.write('ready\\n'));",
    "process.on('SIGUSR2', () => process.stdout.write(`heard ${n}\\n`));",
  ].join(' ')]);
  t.after(() => {
    for (const x of drivers) x.stop();
    if (silent.exitCode === null) silent.kill('SIGKILL');
    topo.destroy();
  });
  const lines: string[] = [];
  silent.stdout?.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
  const until = async (pred: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(pred(), what);
  };
  await until(() => lines.includes('ready'), 'the silent server is listening');

  const d = await MonitorDriver.start(client);
  drivers.push(d);
  const rec = await d.reconcile(plan.services, plan.targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  // Not alpha: it starts up. Let a dozen checks reach the silent server: it stays up.
  await until(() => { silent.kill('SIGUSR2'); return lines.some((l) => /^heard (\d+)$/.test(l) && Number(l.slice(6)) >= 12); }, 'the checks reached the silent server');
  let snap = await d.snapshot();
  const s0 = snap.targets[0];
  assert.ok(s0 !== undefined);
  assert.equal(s0.state, 'up');
  // Each check waits a quiet spell for an ICMP error before it passes, so fewer have finished than were sent.
  assert.ok(s0.checks >= 3, `${s0.checks} checks finished`);
  assert.equal(s0.failures, 0, 'silence is not a failure without expect');
  assert.deepEqual(d.transitionsOf(ID), []);

  // Nothing bound to the port: the kernel answers port-unreachable, the server goes down as refused.
  silent.kill('SIGKILL');
  const down = await d.transition(ID, 'down', WAIT, 0);
  assert.equal(down.reason, 'refused');

  // The datagrams dropped by nft instead: silence, so it comes back up (as under keepalived).
  const from = d.events.length;
  await svc.exec('nft', ['-f', '-'], { input: 'table inet lvt_udp {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    udp dport 5300 drop\n  }\n}\n' });
  await d.transition(ID, 'up', WAIT, from);
  snap = await d.snapshot();
  assert.equal(snap.targets[0]?.state, 'up');
});
