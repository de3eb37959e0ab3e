// Quorum, sorry server, notify hooks and flapping, against real nginx real servers in namespaces.
// Three servers (weight 1) form "web" with quorum 2: losing one keeps quorum, losing two brings the
// sorry server in and runs the quorumDown hook; recovery brings quorum back. A fourth nginx answers
// 503 on every other connection: with rise 2 / fall 2 it must never change state.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Topology } from '../support/netns.js';
import { startNginx, type NginxHandle } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { HealthTarget } from '../../daemon/health/monitor.js';
import { MonitorDriver, dropTcp, tempDir } from '../fixtures/health/harness.js';

const INTERVAL = 200;
const TIMEOUT = 250;
const check: CheckOptions = { ...CHECK_DEFAULTS, type: 'http', intervalMs: INTERVAL, timeoutMs: TIMEOUT, rise: 2, fall: 2, http: { path: '/health' } };
const BOUND = INTERVAL * 2 + TIMEOUT;
const SLACK = 1_500;

test('quorum with sorry server, notify hooks, and flapping suppressed, against real nginx', async (t) => {
  requireRoot();
  requireCommands('ip', 'nginx', 'nft');
  const topo = await Topology.create('hquo');
  const tmp = tempDir('quorum');
  const drivers: MonitorDriver[] = [];
  const nginxes: NginxHandle[] = [];
  after(async () => {
    for (const d of drivers) d.stop();
    for (const n of nginxes) await n.stop();
    topo.destroy();
    tmp.cleanup();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.78.0.1/24'] });
  const hosts = [];
  for (let i = 1; i <= 4; i++) hosts.push(await topo.addHost({ name: `rs${i}`, addresses: [`10.78.0.1${i}/24`] }));
  const [rs1, rs2, rs3, rs4] = hosts;
  assert.ok(rs1 && rs2 && rs3 && rs4);
  for (const h of [rs1, rs2, rs3]) nginxes.push(await startNginx(h));
  // Each check is a new connection, and nginx numbers connections: odd ones get 503.
  nginxes.push(await startNginx(rs4, {
    extraServerConfig: 'location = /flap { if ($connection ~ [13579]$) { return 503; } default_type text/plain; return 200 "ok\\n"; }',
  }));

  const hookLog = join(tmp.dir, 'hooks.log');
  const hook = (word: string): string => `echo "${word} $LVSD_SERVICE $LVSD_RS $LVSD_REASON" >> ${hookLog}`;
  const targets: HealthTarget[] = [1, 2, 3].map((i) => ({
    id: `web/rs${i}`, service: 'web', name: `rs${i}`, address: `10.78.0.1${i}`, port: 80, weight: 1, check,
    notify: { up: hook('up'), down: hook('down') },
  }));
  targets.push({ id: 'flap/rs4', service: 'flap', name: 'rs4', address: '10.78.0.14', port: 80, weight: 1, check: { ...check, http: { path: '/flap' } } });
  const services = [
    { name: 'web', quorum: 2, hysteresis: 0, notify: { quorumUp: `echo "quorum-up $LVSD_SERVICE $LVSD_ALIVE_WEIGHT" >> ${hookLog}`, quorumDown: `echo "quorum-down $LVSD_SERVICE $LVSD_ALIVE_WEIGHT" >> ${hookLog}` } },
    { name: 'flap', quorum: 1, hysteresis: 0 },
  ];
  const d = await MonitorDriver.start(client);
  drivers.push(d);
  assert.equal((await d.reconcile(services, targets)).ev, 'reconciled');
  await new Promise((r) => setTimeout(r, INTERVAL * 3));
  let snap = await d.snapshot();
  assert.deepEqual(snap.services.map((s) => [s.name, s.quorumUp, s.aliveWeight]), [['web', true, 3], ['flap', true, 1]]);

  // One server lost: quorum (2) holds, no sorry server.
  const [n1, n2] = nginxes;
  assert.ok(n1 && n2);
  let from = d.events.length;
  await n1.stop();
  const e1 = await d.transition('web/rs1', 'down', BOUND + SLACK + 2_000, from);
  assert.equal(e1.reason, 'refused');
  // Two lost (packets dropped): below quorum, the sorry server takes over.
  from = d.events.length;
  const droppedAt = Date.now();
  await dropTcp(rs2, 80, true);
  const q = await d.waitFor((e) => e.ev === 'quorum', BOUND + SLACK + 2_000, 'quorum lost', from);
  assert.ok(q.ev === 'quorum');
  assert.deepEqual([q.up, q.sorryServer, q.aliveWeight, q.quorum], [false, true, 1, 2]);
  t.diagnostic(`quorum lost ${q.t - droppedAt} ms after the second server's packets were dropped (bound ${BOUND} + ${SLACK} ms)`);
  assert.ok(q.t - droppedAt <= BOUND + SLACK);
  assert.equal(d.events.slice(0, from).filter((e) => e.ev === 'quorum').length, 0, 'no quorum event while one server was down');
  snap = await d.snapshot();
  assert.equal(snap.services.find((s) => s.name === 'web')?.sorryServer, true);

  // Back: rs2's packets flow again → live weight 2 → quorum up, sorry server off.
  from = d.events.length;
  await dropTcp(rs2, 80, false);
  const back = await d.waitFor((e) => e.ev === 'quorum', INTERVAL * 2 + TIMEOUT + SLACK + 2_000, 'quorum back', from);
  assert.ok(back.ev === 'quorum');
  assert.deepEqual([back.up, back.sorryServer, back.aliveWeight], [true, false, 2]);
  assert.ok(back.inPreviousStateMs > 0);

  // Hooks ran, in order, with the event in their environment (they are asynchronous: poll briefly).
  const want = ['down web rs1 refused', 'down web rs2 timeout', 'quorum-down web 1', 'up web rs2 ok', 'quorum-up web 2'];
  const deadline = Date.now() + 5_000;
  let lines: string[] = [];
  while (Date.now() < deadline) {
    lines = existsSync(hookLog) ? readFileSync(hookLog, 'utf8').trim().split('\n') : [];
    if (lines.length >= want.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual([...lines].sort(), [...want].sort());

  // The flapping server alternated 200/503 the whole time and never changed state.
  snap = await d.snapshot();
  const flap = snap.targets.find((x) => x.id === 'flap/rs4');
  assert.ok(flap !== undefined);
  t.diagnostic(`flapping server: ${flap.checks} checks, ${flap.failures} failed, state ${flap.state}`);
  assert.ok(flap.checks >= 8, `${flap.checks} checks`);
  assert.ok(flap.failures >= flap.checks / 3, `${flap.failures} of ${flap.checks} failed`);
  assert.equal(flap.state, 'up');
  assert.deepEqual(d.transitionsOf('flap/rs4'), []);
});
