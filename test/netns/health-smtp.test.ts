// The smtp checker (keepalived SMTP_CHECK) against a real SMTP server, Debian's OpenSMTPD, in a
// namespace: one smtpd listening on two addresses, one greeting normally ("220 … ESMTP OpenSMTPD")
// and one whose connect-phase filter answers "554 5.7.1 …" and hangs up. keepalived 2.2.7 drops a
// server whose banner is 554 while a TCP check keeps it (issue #16, measured in the guest): the same
// here. Then smtpd stops: the good server goes down as refused. From the config file down
// (loadConfigText → healthPlan → the monitor in the client namespace). Twice: on the native probe
// engine (the C dialog, its transcript judged in JavaScript) and with LVSD_HEALTH_NATIVE=0 (the
// JavaScript checker): the same verdicts, word for word.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Topology } from '../support/netns.js';
import { waitForPort } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthPlan } from '../../daemon/director/plan.js';
import { MonitorDriver, tempDir } from '../fixtures/health/harness.js';

const CONFIG = `
virtualServers:
  - address: 10.79.0.100
    port: 25
    alpha: true
    healthCheck: { type: smtp, interval: 250ms, timeout: 1s, rise: 1, fall: 1, smtp: { helo: checker.lvsd.test } }
    realServers: [{ address: 10.79.0.11 }, { address: 10.79.0.12 }]
  - address: 10.79.0.100
    port: 2525
    alpha: true
    healthCheck: { type: tcp, connectPort: 25, interval: 250ms, timeout: 1s }
    realServers: [{ address: 10.79.0.12 }]
`;
const GOOD = 'tcp:10.79.0.100:25/10.79.0.11:25';
const REFUSING = 'tcp:10.79.0.100:25/10.79.0.12:25';
const REFUSING_TCP = 'tcp:10.79.0.100:2525/10.79.0.12:2525';
/** Generous: this asserts what happens, not how fast (a shared 2-core machine). */
const WAIT = 15_000;

for (const native of [true, false]) {
  test(`smtp check against OpenSMTPD: 220 is up, a 554 banner is down (tcp keeps it), a stopped server is refused (${native ? 'native probe engine' : 'JS checker'})`, async (t) => {
    await scenario(t, native);
  });
}

async function scenario(t: TestContext, native: boolean): Promise<void> {
  requireRoot();
  requireCommands('ip', 'smtpd', 'ss');
  const loaded = loadConfigText(CONFIG);
  if (!loaded.ok) assert.fail(loaded.errors.map(formatError).join('\n'));
  const plan = healthPlan(loaded.config);

  const topo = await Topology.create('hsmtp');
  const tmp = tempDir('smtp');
  const drivers: MonitorDriver[] = [];
  const mail = await topo.addHost({ name: 'mail', addresses: ['10.79.0.11/24', '10.79.0.12/24'] });
  const client = await topo.addHost({ name: 'client', addresses: ['10.79.0.1/24'] });
  const conf = join(tmp.dir, 'smtpd.conf');
  writeFileSync(conf, [
    'table clients { 10.79.0.0/24 }',
    'filter "refuse" phase connect match src <clients> disconnect "554 5.7.1 no service for you"',
    'listen on 10.79.0.11 port 25 hostname mail.lvsd.test',
    'listen on 10.79.0.12 port 25 hostname refuse.lvsd.test filter "refuse"',
    'action "local" mbox',
    'match from any for local action "local"',
  ].join('\n') + '\n');
  // Rejects (with smtpd's message) when the configuration is bad.
  await mail.exec('smtpd', ['-n', '-f', conf]);
  const smtpd = mail.spawn('smtpd', ['-d', '-f', conf]);
  let smtpdLog = '';
  smtpd.stderr?.on('data', (d: Buffer) => { smtpdLog += d.toString(); });
  t.after(() => {
    for (const x of drivers) x.stop();
    if (smtpd.exitCode === null) smtpd.kill('SIGKILL');
    topo.destroy();
    tmp.cleanup();
  });
  await waitForPort(mail, 25);

  const d = await MonitorDriver.start(client, native ? {} : { LVSD_HEALTH_NATIVE: '0' });
  drivers.push(d);
  const rec = await d.reconcile(plan.services, plan.targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  assert.equal(rec.nativeTargets, native ? 3 : 0, 'checks on the native engine (two smtp, one tcp)');
  const up = await d.transition(GOOD, 'up', WAIT, 0);
  assert.equal(up.detail, '220 mail.lvsd.test ESMTP OpenSMTPD');
  await d.transition(REFUSING_TCP, 'up', WAIT, 0);
  // alpha: the refusing server starts down and never comes up; its last result says why. Its first smtp check
  // may still be in flight when the other two are up: wait for it (bounded), then judge it.
  let refusing = (await d.snapshot()).targets.find((x) => x.id === REFUSING);
  for (let i = 0; i < 100 && (refusing?.checks ?? 0) === 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    refusing = (await d.snapshot()).targets.find((x) => x.id === REFUSING);
  }
  assert.equal(refusing?.state, 'down');
  assert.ok((refusing.checks) > 0, 'checked');
  assert.deepEqual([refusing.last?.reason, refusing.last?.detail], ['status', 'banner 554 5.7.1 no service for you']);
  assert.deepEqual(d.transitionsOf(REFUSING), []);
  assert.match(smtpdLog, /no service for you|disconnect/i, 'smtpd logged the refusals');

  // smtpd stops: the good server is refused; the refusing server's tcp check now fails too.
  const from = d.events.length;
  smtpd.kill('SIGTERM');
  const down = await d.transition(GOOD, 'down', WAIT, from);
  assert.equal(down.reason, 'refused');
  const tcpDown = await d.transition(REFUSING_TCP, 'down', WAIT, from);
  assert.equal(tcpDown.reason, 'refused');
}
