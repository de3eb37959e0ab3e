// The panel's graphs from a real Prometheus (Debian's, issue 18): it scrapes an lvsd API's /metrics every
// second on loopback, and GET /api/v1/history with `api.prometheus` set answers from Prometheus — the
// virtual server's connections/s from its counter, each real server's connections as /metrics had them,
// the marks lvsd's own. With the Prometheus stopped, or asked something it refuses, the graphs are lvsd's
// own samples and say why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { History } from '../../daemon/api/history.js';
import { harness } from '../support/api-harness.js';
import { FakeDirector } from '../support/fake-director.js';
import { freePort } from '../support/loopback-servers.js';
import { requireCommands } from '../support/prereq.js';

const WEB = 'tcp:192.168.77.100:80';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface View { source: string; problem?: string; t: number[]; series: { scope: string; service: string; realServer: string | null; metric: string; values: (number | null)[] }[]; marks: { text: string }[] }

test('graphs from Prometheus: the same series from its scrapes, lvsd\'s marks; a Prometheus that is down or refuses falls back to lvsd\'s samples, saying why', { timeout: 120_000 }, async (t) => {
  requireCommands('prometheus');
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-prom-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const director = new FakeDirector();
  const promPort = await freePort();
  const match = 'job="lvsd"';
  const history = new History(director, { periodMs: 1000, capacity: 120, prometheus: { url: `http://127.0.0.1:${String(promPort)}`, match } }).start();
  t.after(() => { history.stop(); });
  const h = await harness({ director, history });
  t.after(() => h.close());
  const apiUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await writeFile(join(dir, 'prometheus.yml'), `global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: lvsd
    static_configs: [{ targets: ['${new URL(apiUrl).host}'] }]
`);
  const prom = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${String(promPort)}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let promLog = '';
  prom.stderr.on('data', (d: Buffer) => { promLog += d.toString(); });
  const exited = new Promise((r) => prom.once('exit', r));
  t.after(async () => {
    if (prom.exitCode === null) prom.kill('SIGTERM');
    await exited;
  });
  // Traffic the way the dataplane counts it: every second, from now on.
  const ticker = setInterval(() => { director.tick(1); }, 1000);
  t.after(() => { clearInterval(ticker); });
  director.tick(1);
  director.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED');
  director.setHealth(WEB, '10.0.1.13:80', true);

  const viewer = await h.as('viewer');
  const read = async (): Promise<View> => (await h.call(viewer, 'GET', `/api/v1/history?service=${encodeURIComponent(WEB)}`)).json<View>();
  const cps = (v: View): number[] => (v.series.find((s) => s.scope === 'virtualServer' && s.metric === 'cps')?.values ?? []).filter((x): x is number => x !== null);
  let v: View | undefined;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    v = await read();
    if (v.source === 'prometheus' && cps(v).length >= 3) break;
    await sleep(1000);
  }
  assert.ok(v, 'no answer');
  assert.equal(v.source, 'prometheus', `${v.problem ?? ''}\n${promLog}`);
  assert.equal(v.problem, undefined);
  assert.ok(cps(v).length >= 3, `connections/s from Prometheus: ${JSON.stringify(cps(v))}`);
  // The fake dataplane schedules 3–4 connections/s per unit of weight to every live real server.
  const snap = director.snapshot();
  const web = snap.virtualServices.find((s) => s.id === WEB) ?? assert.fail('no web service');
  const weight = web.realServers.reduce((n, r) => n + (r.weight.effective ?? 0), 0);
  const last = cps(v).at(-1) ?? 0;
  assert.ok(last >= 3 * weight * 0.7 && last <= 4 * weight * 1.3, `cps ${last.toFixed(1)} for a total weight of ${weight}`);
  // Every real server's connections as /metrics had them, on the same time axis.
  for (const rs of web.realServers) {
    const s: View['series'][number] | undefined = v.series.find((x) => x.scope === 'realServer' && x.realServer === rs.id && x.metric === 'active');
    assert.ok(s, `no active connections of ${rs.id}`);
    assert.equal(s.values.length, v.t.length);
    assert.equal(s.values.filter((x: number | null) => x !== null).at(-1), rs.connections.active);
  }
  assert.ok(v.series.every((s) => s.service === WEB), 'a series of another service');
  assert.ok(v.marks.some((m) => m.text.includes('10.0.1.13:80')), 'the health marks are lvsd\'s own');

  // Prometheus refuses the query (a matcher it cannot parse): lvsd's own samples, and why.
  const bad = new History(director, { periodMs: 1000, capacity: 120, prometheus: { url: `http://127.0.0.1:${String(promPort)}`, match: 'job=' } }).start();
  t.after(() => {
    bad.stop();
  });
  const refused = await bad.read({ service: WEB });
  assert.equal(refused.source, 'ring');
  assert.match(refused.problem ?? '', new RegExp(`^Prometheus at http://127\\.0\\.0\\.1:${String(promPort)}: 400 .*parse error`));

  // Prometheus stopped: the same, naming it.
  prom.kill('SIGTERM');
  await exited;
  const down = await read();
  assert.equal(down.source, 'ring');
  assert.match(down.problem ?? '', new RegExp(`^Prometheus at http://127\\.0\\.0\\.1:${String(promPort)}: .*ECONNREFUSED.*; lvsd's own samples shown$`));
  assert.ok(down.t.length > 0, 'the ring kept sampling');
});
