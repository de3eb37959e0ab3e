// Several checkers per real server against real nginx, from the config file down: a virtual server
// whose HTTP check has two urls (keepalived: two url blocks) plus a TCP check on another port
// (keepalived: a 2nd checker in the real_server), loaded with loadConfigText, planned with
// healthPlan, run by the monitor in a namespace. keepalived 2.2.7 (issue #16, measured in the guest)
// keeps only the server that serves both urls and drops a server when either checker fails; the
// same here, with the failing checker named in the event and the snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { Topology, type Netns } from '../support/netns.js';
import { startNginx, waitForPort, type NginxHandle } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthPlan } from '../../daemon/director/plan.js';
import { MonitorDriver, dropTcp, tempDir } from '../fixtures/health/harness.js';

const CONFIG = `
virtualServers:
  - address: 10.78.0.100
    port: 80
    alpha: true
    healthCheck:
      type: http
      interval: 250ms
      timeout: 300ms
      rise: 2
      fall: 2
      http:
        urls:
          - { path: /check, bodyRegex: "^healthy" }
          - { path: /api, status: [200] }
    moreChecks:
      - { type: tcp, connectPort: 8080, interval: 250ms, timeout: 300ms, rise: 1, fall: 1 }
    realServers:
      - address: 10.78.0.11
      - address: 10.78.0.12
`;
const ID1 = 'tcp:10.78.0.100:80/10.78.0.11:80';
const ID2 = 'tcp:10.78.0.100:80/10.78.0.12:80';
/** Generous: this asserts what happens, not how fast (a shared 2-core machine). */
const WAIT = 10_000;

/** The two pages nginx serves, switched by rewriting an included file and reloading nginx. */
async function pages(ns: Netns, nginx: ChildProcess, file: string, api: 200 | 503): Promise<void> {
  writeFileSync(file, [
    'location = /check { default_type text/plain; return 200 "healthy\\n"; }',
    `location = /api { default_type text/plain; return ${api} "api\\n"; }`,
  ].join('\n') + '\n');
  nginx.kill('SIGHUP');
  const deadline = Date.now() + 5_000;
  for (;;) {
    const { stdout } = await ns.sh('curl -s -o /dev/null -m 0.5 -w "%{http_code}" http://127.0.0.1/api || true');
    if (stdout.trim() === String(api)) return;
    if (Date.now() > deadline) throw new Error(`nginx in ${ns.name} did not switch /api to ${api}: ${stdout}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('every checker of a real server must pass: two urls and a tcp check, against real nginx', async (t) => {
  requireRoot();
  requireCommands('ip', 'nginx', 'nft', 'curl');
  const loaded = loadConfigText(CONFIG);
  if (!loaded.ok) assert.fail(loaded.errors.map(formatError).join('\n'));
  const plan = healthPlan(loaded.config);
  assert.deepEqual(plan.targets.map((x) => [x.id, x.check.http?.path, ...(x.moreChecks ?? []).map((m) => m.http?.path ?? `${m.type}:${m.connectPort ?? ''}`)]), [
    [ID1, '/check', '/api', 'tcp:8080'],
    [ID2, '/check', '/api', 'tcp:8080'],
  ]);

  const topo = await Topology.create('hmulti');
  const tmp = tempDir('multi');
  const nginxes: NginxHandle[] = [];
  const drivers: MonitorDriver[] = [];
  t.after(async () => {
    for (const x of drivers) x.stop();
    for (const n of nginxes) await n.stop();
    topo.destroy();
    tmp.cleanup();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.78.0.1/24'] });
  const webs: { ns: Netns; nginx: NginxHandle; file: string }[] = [];
  for (const [i, addr] of ['10.78.0.11/24', '10.78.0.12/24'].entries()) {
    const ns = await topo.addHost({ name: `web${i + 1}`, addresses: [addr] });
    const file = join(tmp.dir, `pages${i + 1}.conf`);
    writeFileSync(file, '');
    const nginx = await startNginx(ns, { ports: [80, 8080], extraServerConfig: `include ${file};` });
    nginxes.push(nginx);
    await waitForPort(ns, 8080);
    await pages(ns, nginx.process, file, 200);
    webs.push({ ns, nginx, file });
  }
  const [web1, web2] = webs;
  assert.ok(web1 && web2);

  const d = await MonitorDriver.start(client);
  drivers.push(d);
  const rec = await d.reconcile(plan.services, plan.targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  // Plain HTTP (body judged in JS) and TCP all run on the native engine when it is built: 3 per server.
  assert.ok(rec.nativeTargets === 6 || rec.nativeTargets === 0, `checkers on the native engine: ${String(rec.nativeTargets)}`);
  await d.transition(ID1, 'up', WAIT, 0);
  await d.transition(ID2, 'up', WAIT, 0);

  // 1. Only the 2nd url of web1 fails: web1 goes down (its tcp and /check still pass), web2 stays.
  let from = d.events.length;
  await pages(web1.ns, web1.nginx.process, web1.file, 503);
  const down1 = await d.transition(ID1, 'down', WAIT, from);
  assert.equal(down1.reason, 'status');
  assert.equal(down1.detail, 'http GET /api: status 503');
  const snap = await d.snapshot();
  const s1 = snap.targets.find((x) => x.id === ID1);
  assert.equal(s1?.state, 'down');
  assert.deepEqual(s1.checkers?.map((c) => [c.label, c.state]), [['http GET /check', 'up'], ['http GET /api', 'down'], ['tcp :8080', 'up']]);
  assert.equal(s1.last?.detail, 'http GET /api: status 503');
  assert.equal(snap.targets.find((x) => x.id === ID2)?.state, 'up');
  await pages(web1.ns, web1.nginx.process, web1.file, 200);
  const up1 = await d.transition(ID1, 'up', WAIT, from);
  assert.match(up1.detail, /^http GET \/api: /);

  // 2. The tcp checker of web2 (port 8080 dropped by nft) fails while both pages still pass: down.
  from = d.events.length;
  await dropTcp(web2.ns, 8080, true);
  const down2 = await d.transition(ID2, 'down', WAIT, from);
  assert.equal(down2.reason, 'timeout');
  assert.equal(down2.detail, 'tcp :8080: no answer within 300 ms');
  await dropTcp(web2.ns, 8080, false);
  await d.transition(ID2, 'up', WAIT, from);

  assert.deepEqual(d.transitionsOf(ID1).map((e) => e.to), ['up', 'down', 'up'], 'web1 moved only for its own /api');
  assert.deepEqual(d.transitionsOf(ID2).map((e) => e.to), ['up', 'down', 'up'], 'web2 moved only for its own tcp check');
});
