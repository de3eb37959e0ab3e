// Live events (SSE over a real loopback listener), the recent-events and audit routes with filters,
// Prometheus /metrics fed from the snapshot and the events, and the local admin socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { harness, RS1_ENC, WEB, WEB_ENC, type Harness } from '../support/api-harness.js';
import { SessionTable } from '../../daemon/api/sessions.js';
import { FakeDirector } from '../support/fake-director.js';
import { openStore } from '../../daemon/state/store.js';
import { parseListen, startApi } from '../../daemon/api/listen.js';

interface Sse { events: { event: string; data: Record<string, unknown> }[]; close: () => void; ended: Promise<void>; next: (pred: (e: { event: string; data: Record<string, unknown> }) => boolean) => Promise<{ event: string; data: Record<string, unknown> }> }

function openSse(url: string, cookie: string, lastEventId?: number): Promise<Sse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { cookie, accept: 'text/event-stream' };
    if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
    const req = request(url, { headers }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`SSE ${String(res.statusCode)}`)); return; }
      assert.match(String(res.headers['content-type']), /^text\/event-stream/);
      const sse: Sse = {
        events: [],
        close: () => { req.destroy(); },
        ended: new Promise<void>((done) => { res.once('end', done); res.once('close', done); }),
        next: (pred) => new Promise((res2, rej2) => {
          const found = sse.events.find(pred);
          if (found) { res2(found); return; }
          const timer = setTimeout(() => { rej2(new Error('no such event within 5 s')); }, 5000);
          waiters.push((e) => { if (pred(e)) { clearTimeout(timer); res2(e); return true; } return false; });
        }),
      };
      const waiters: ((e: { event: string; data: Record<string, unknown> }) => boolean)[] = [];
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (ev !== undefined && data !== undefined) {
            const e = { event: ev, data: JSON.parse(data) as Record<string, unknown> };
            sse.events.push(e);
            for (let k = waiters.length - 1; k >= 0; k--) if (waiters[k]?.(e) === true) waiters.splice(k, 1);
          }
        }
      });
      resolve(sse);
    });
    req.on('error', (e) => { if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e); });
    req.end();
  });
}

test('SSE: a drain shows up as a director event and an audit event within a second; replay after Last-Event-ID', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const op = await h.as('operator');
  const sse = await openSse(`${address}/api/v1/events/stream`, op.cookie);
  t.after(() => { sse.close(); });
  const started = Date.now();
  await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/real-servers/${RS1_ENC}/override`, { drain: true });
  const ov = await sse.next((e) => e.data.type === 'override');
  const au = await sse.next((e) => e.event === 'audit');
  assert.ok(Date.now() - started < 5000);
  assert.deepEqual(ov.data.override, { drain: true });
  assert.equal(ov.data.by, 'operator');
  assert.equal(au.data.action, 'override.set');
  h.director.transition('VI_2', 'MASTER', 'master down timer expired');
  const tr = await sse.next((e) => e.data.type === 'vrrp.transition');
  assert.equal(tr.data.instance, 'VI_2');
  assert.equal(tr.data.to, 'MASTER');
  sse.close();
  // a reconnecting client gets what came after its last id
  const firstSeq = Number(ov.data.seq);
  const again = await openSse(`${address}/api/v1/events/stream`, op.cookie, firstSeq);
  t.after(() => { again.close(); });
  const replay = await again.next((e) => e.data.type === 'vrrp.transition');
  assert.equal(replay.data.instance, 'VI_2');
  assert.ok(again.events.every((e) => Number(e.data.seq) > firstSeq));
  const anon = await new Promise<number>((resolve) => { request(`${address}/api/v1/events/stream`, (res) => { resolve(res.statusCode ?? 0); res.resume(); }).end(); });
  assert.equal(anon, 401);
});

/** Resolves true when the stream ends within 5 s (false if it is still open then). */
async function endsSoon(sse: Sse): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => { timer = setTimeout(() => { r(false); }, 5000); });
  const r = await Promise.race([sse.ended.then(() => true), late]);
  clearTimeout(timer);
  return r;
}

test('SSE ends with its session: logout, user deleted, password reset by an admin, my own password change elsewhere', async (t) => {
  const h: Harness = await harness();
  t.after(() => h.close());
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/api/v1/events/stream`;
  const admin = await h.as('admin');

  const loggedOut = await h.login('viewer');
  const a = await openSse(url, loggedOut.cookie);
  const stays = await openSse(url, (await h.login('viewer')).cookie);
  t.after(() => { a.close(); stays.close(); });
  assert.equal((await h.call(loggedOut, 'DELETE', '/api/v1/session')).statusCode, 204);
  assert.equal(await endsSoon(a), true, 'logout ends the stream');

  assert.equal((await h.call(admin, 'POST', '/api/v1/users', { name: 'dave', password: 'dave password', role: 'operator' })).statusCode, 201);
  const dave = await openSse(url, (await h.login('dave', 'dave password')).cookie);
  t.after(() => { dave.close(); });
  assert.equal((await h.call(admin, 'DELETE', '/api/v1/users/dave')).statusCode, 204);
  assert.equal(await endsSoon(dave), true, 'deleting the user ends the stream');

  const reset = await openSse(url, (await h.login('operator')).cookie);
  t.after(() => { reset.close(); });
  assert.equal((await h.call(admin, 'PATCH', '/api/v1/users/operator', { password: 'reset by admin' })).statusCode, 200);
  assert.equal(await endsSoon(reset), true, 'a password reset ends the stream');

  const here = await h.login('admin');
  const elsewhere = await openSse(url, (await h.login('admin')).cookie);
  const mine = await openSse(url, here.cookie);
  t.after(() => { elsewhere.close(); mine.close(); });
  assert.equal((await h.call(here, 'PUT', '/api/v1/session/password', { currentPassword: 'admin password', password: 'a new admin pass' })).statusCode, 204);
  assert.equal(await endsSoon(elsewhere), true, 'my other sessions\' streams end');

  // the streams whose sessions live on still deliver
  h.director.transition('VI_2', 'MASTER', 'still here');
  assert.equal((await stays.next((e) => e.data.type === 'vrrp.transition')).data.instance, 'VI_2');
  assert.equal((await mine.next((e) => e.data.type === 'vrrp.transition')).data.instance, 'VI_2');
  assert.ok(![a, dave, reset, elsewhere].some((s) => s.events.some((e) => e.data.type === 'vrrp.transition')), 'nothing reached an ended stream');
});

test('SSE re-checks its session before each event: an expired session gets nothing more, and the stream ends', async (t) => {
  let now = 1_000_000;
  const h = await harness({ sessions: new SessionTable(60_000, 3600_000, () => now) });
  t.after(() => h.close());
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const sse = await openSse(`${address}/api/v1/events/stream`, (await h.login('viewer')).cookie);
  t.after(() => { sse.close(); });
  h.director.transition('VI_2', 'MASTER', 'first');
  await sse.next((e) => e.data.type === 'vrrp.transition');
  now += 61_000; // idle past the timeout; nobody told the stream
  h.director.transition('VI_2', 'BACKUP', 'second');
  assert.equal(await endsSoon(sse), true);
  assert.equal(sse.events.filter((e) => e.data.type === 'vrrp.transition').length, 1, 'the event after expiry was not sent');
});

test('SSE: a caller that does not read gets its stream ended past 1 MiB waiting, not every event buffered for it', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const { cookie } = await h.login('viewer');
  // a raw connection: read the response head, then stop reading (a stalled or hostile client)
  const url = new URL(address);
  const sock = connect(Number(url.port), url.hostname);
  t.after(() => { sock.destroy(); });
  sock.write(`GET /api/v1/events/stream HTTP/1.1\r\nhost: ${url.host}\r\ncookie: ${cookie}\r\naccept: text/event-stream\r\n\r\n`);
  await new Promise<void>((resolve) => { sock.once('data', () => { sock.pause(); resolve(); }); });
  const reason = 'x'.repeat(64 * 1024);
  const sent = 400; // 25 MiB of events: more than loopback's socket buffers hold
  for (let i = 0; i < sent; i++) h.director.transition('VI_2', i % 2 === 0 ? 'MASTER' : 'BACKUP', `${String(i)} ${reason}`);
  // the response is chunked: its end is the last chunk, "0" (the stream asks for keep-alive, so the connection stays)
  let received = '';
  const ended = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => { resolve(false); }, 10_000);
    sock.on('data', (chunk: string) => {
      received += chunk;
      if (received.endsWith('\r\n0\r\n\r\n')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
  });
  sock.setEncoding('utf8');
  sock.resume();
  assert.equal(await ended, true, 'the server ended the stream');
  const got = received.split('event: director').length - 1;
  assert.ok(got > 0 && got < sent, `${String(got)} of ${String(sent)} events were kept for it`);
  // the director and the API go on: another caller reads the events it missed from the ring
  assert.equal((await h.call(await h.as('viewer'), 'GET', '/api/v1/events?type=vrrp&limit=1')).statusCode, 200);
});

test('recent events and the audit log filter by type / who / action', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const op = await h.as('operator');
  h.director.setHealth(WEB, '10.0.1.12:80', false, 'connect ECONNREFUSED');
  h.director.transition('VI_1', 'BACKUP', 'higher priority advert from 10.0.0.2');
  await h.call(op, 'PUT', `/api/v1/services/${WEB_ENC}/override`, { weight: 2 });
  const vrrp = (await h.call(op, 'GET', '/api/v1/events?type=vrrp')).json<{ type: string }[]>();
  assert.deepEqual(vrrp.map((e) => e.type), ['vrrp.transition']);
  const health = (await h.call(op, 'GET', '/api/v1/events?type=health.change')).json<{ type: string; status: string; realServer: string }[]>();
  assert.equal(health.length, 1);
  assert.equal(health[0]?.status, 'down');
  const results = (await h.call(op, 'GET', '/api/v1/events?type=health.result')).json<unknown[]>();
  assert.deepEqual(results, [], 'single check results stay out of the event history (metrics count them)');
  const all = (await h.call(op, 'GET', '/api/v1/events?limit=2')).json<{ type: string; seq: number }[]>();
  assert.equal(all.length, 2);
  assert.ok((all[0]?.seq ?? 0) > (all[1]?.seq ?? 0), 'newest first');
  const bad = await h.call(op, 'GET', '/api/v1/events?limit=0');
  assert.equal(bad.statusCode, 400);
  assert.match(bad.json<{ message: string }>().message, /querystring\.limit: must be >= 1/);
  // a query string is text: only an exact decimal becomes the declared integer
  for (const q of ['limit=abc', 'limit=2.5', 'limit=0x2', 'limit=%202', 'limit=1&limit=2', 'after=']) {
    const r = await h.call(op, 'GET', `/api/v1/events?${q}`);
    assert.equal(r.statusCode, 400, `?${q}: ${r.body}`);
    assert.match(r.json<{ message: string }>().message, /^querystring\.(limit|after): must be integer/, q);
  }
  const audit = (await h.call(op, 'GET', '/api/v1/audit?who=operator&action=override')).json<{ who: string; action: string; target: string }[]>();
  assert.deepEqual(audit.map((e) => `${e.who} ${e.action} ${e.target}`), [`operator override.set ${WEB}`]);
  const badSince = await h.call(op, 'GET', '/api/v1/audit?since=yesterday');
  assert.equal(badSince.statusCode, 400);
});

test('/metrics: VRRP state and transitions, adverts, health results and latency, weights, counters, reloads', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  h.director.tick(2);
  h.director.transition('VI_2', 'MASTER', 'master down timer expired');
  h.director.setHealth(WEB, '10.0.1.13:80', false, 'connect ECONNREFUSED');
  const admin = await h.as('admin');
  await h.call(admin, 'POST', '/api/v1/config/apply', { text: h.director.snapshot().config.path === '' ? '' : (await h.director.runningConfig()).text.replace('priority: 100', 'priority: 90') });
  const res = await h.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain/);
  const m = res.body;
  const has = (re: RegExp): void => { assert.match(m, re); };
  has(/^lvsd_vrrp_state\{instance="VI_1",state="MASTER"\} 1$/m);
  has(/^lvsd_vrrp_state\{instance="VI_1",state="BACKUP"\} 0$/m);
  has(/^lvsd_vrrp_state\{instance="VI_2",state="MASTER"\} 1$/m);
  has(/^lvsd_vrrp_transitions_total\{instance="VI_2",to="MASTER"\} 1$/m);
  has(/^lvsd_vrrp_priority\{instance="VI_2",kind="base"\} 90$/m);
  has(/^lvsd_vrrp_adverts_sent_total\{instance="VI_1"\} 2$/m);
  has(/^lvsd_vrrp_adverts_dropped_total\{instance="VI_1",reason="ttl"\} 1$/m);
  has(/^lvsd_health_checks_total\{service="tcp:192.168.77.100:80",real_server="10.0.1.13:80",result="fail"\} 1$/m);
  has(/^lvsd_health_check_duration_seconds_count\{service="tcp:192.168.77.100:80"\} 1$/m);
  has(/^lvsd_real_server_up\{service="tcp:192.168.77.100:80",real_server="10.0.1.13:80"\} 0$/m);
  has(/^lvsd_real_server_weight\{service="tcp:192.168.77.100:80",real_server="10.0.1.11:80",kind="effective"\} 10$/m);
  has(/^lvsd_real_server_weight\{service="tcp:192.168.77.100:80",real_server="10.0.1.13:80",kind="effective"\} -1$/m);
  has(/^lvsd_service_connections_total\{service="tcp:192.168.77.100:80"\} \d+$/m);
  // per real server: the dataplane's counters (the fake dataplane counts per destination, as IPVS does),
  // and the last check's latency; a real server with no counters has no series
  const snapRs = h.director.snapshot().virtualServices.find((v) => v.id === 'tcp:192.168.77.100:80')?.realServers.find((r) => r.id === '10.0.1.11:80');
  assert.ok(snapRs?.counters != null && snapRs.counters.inBytes > 0, 'the fake dataplane counted bytes to 10.0.1.11');
  has(new RegExp(`^lvsd_real_server_in_bytes_total\\{service="tcp:192.168.77.100:80",real_server="10.0.1.11:80"\\} ${snapRs.counters.inBytes}$`, 'm'));
  has(new RegExp(`^lvsd_real_server_out_packets_total\\{service="tcp:192.168.77.100:80",real_server="10.0.1.11:80"\\} ${snapRs.counters.outPackets}$`, 'm'));
  has(new RegExp(`^lvsd_real_server_connections_total\\{service="tcp:192.168.77.100:80",real_server="10.0.1.11:80"\\} ${snapRs.counters.conns}$`, 'm'));
  has(/^lvsd_real_server_check_latency_seconds\{service="tcp:192.168.77.100:80",real_server="10.0.1.13:80"\} 0.0015$/m);
  has(/^lvsd_service_rate\{service="tcp:192.168.77.100:80",rate="cps"\} \d+$/m);
  has(/^lvsd_dataplane_info\{kind="userspace"\} 1$/m);
  has(/^lvsd_config_reloads_total 1$/m);
  has(/^lvsd_config_reload_results_total\{result="ok"\} 1$/m);
  has(/^lvsd_config_last_reload_success 1$/m);
});

test('parseListen: host:port and [v6]:port; anything else names the setting', () => {
  assert.deepEqual(parseListen('127.0.0.1:9180'), { host: '127.0.0.1', port: 9180 });
  assert.deepEqual(parseListen('[::1]:80'), { host: '::1', port: 80 });
  assert.deepEqual(parseListen('localhost:1'), { host: 'localhost', port: 1 });
  for (const bad of ['9180', '::1:80', '1.2.3.4:70000', 'host:', '']) assert.throws(() => parseListen(bad), /^Error: api\.listen: /);
});

test('startApi: TCP needs a login; the unix socket (0600) is trusted as admin for the local CLI', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-listen-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { store } = await openStore(join(dir, 'state.json'));
  const director = new FakeDirector();
  const socket = join(dir, 'run', 'lvsd.sock');
  const api = await startApi({ listen: '127.0.0.1:0', socket }, { director, store, webuiDir: null });
  t.after(() => api.close());
  assert.match(api.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await stat(socket)).mode & 0o777, 0o600);
  const tcp = await fetch(`${api.url}/api/v1/status`);
  assert.equal(tcp.status, 401);
  const viaSocket = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ socketPath: socket, path: '/api/v1/status' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }); });
    });
    req.on('error', reject);
    req.end();
  });
  assert.equal(viaSocket.status, 200);
  assert.equal((JSON.parse(viaSocket.body) as { node: string }).node, 'director-1');
  // an admin action over the socket works without CSRF and is audited as "local"
  const put = await new Promise<number>((resolve, reject) => {
    const req = request({ socketPath: socket, method: 'PUT', path: `/api/v1/services/${encodeURIComponent(WEB)}/override`, headers: { 'content-type': 'application/json' } }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('error', reject);
    req.end(JSON.stringify({ drain: true }));
  });
  assert.equal(put, 200);
  assert.equal(store.auditLog()[0]?.who, 'local');
  // one event history for both listeners
  assert.equal(api.events.recent({ type: 'override' }).length, 1);
  await api.close();
  await assert.rejects(stat(socket), /ENOENT/, 'the socket file is removed on close');
});
