// GET /api/v1/cluster against real peers: a second API (its own fake director) listening on loopback and read
// with a peer token, a peer that accepts and never answers, a closed port, a wrong token, and a pinned
// certificate that is not the peer's. And what a peer token may do on the director that accepts it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { harness, WEB, type Harness } from '../support/api-harness.js';
import { FakeDirector, FAKE_CONFIG } from '../support/fake-director.js';
import { newPeerToken, peerTokenSha256 } from '../../daemon/api/cluster/peer-token.js';
import type { Static } from 'typebox';
import type { ClusterSchema } from '../../daemon/api/schemas.js';

type Cluster = Static<typeof ClusterSchema>;

const configOf = (node: string, cluster: string): string => `${FAKE_CONFIG.replace('name: director-1', `name: ${node}`)}cluster:\n${cluster}`;

/** Everything both APIs log, to look for the token in. */
function capture(): { lines: string[]; logger: ReturnType<typeof pino> } {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { lines.push(chunk.toString()); done(); } });
  return { lines, logger: pino({ level: 'trace' }, sink) };
}

/** A TCP server that accepts and says nothing: a hung peer. */
async function silentPeer(): Promise<{ url: string; close: () => Promise<void> }> {
  const held: Socket[] = [];
  const srv: Server = createServer((s) => { held.push(s); });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { for (const s of held) s.destroy(); srv.close(() => { r(); }); }) };
}

async function closedPort(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return `http://127.0.0.1:${port}`;
}

interface Pair {
  lb1: Harness;
  lb2: Harness;
  lb2Url: string;
  token: string;
  /** lb2's certificate (PEM) when it serves https. */
  cert: string;
  logs: string[];
  /** Makes lb1's cluster section this (a reload: the API must pick it up without a restart). */
  peers(section: string): Promise<void>;
}

async function pair(t: { after: (fn: () => Promise<void>) => void }, https = false, acceptActions = false): Promise<Pair> {
  const { lines, logger } = capture();
  const token = newPeerToken();
  let lb2Opts = {};
  let cert = '';
  if (https) {
    const dir0 = await mkdtemp(join(tmpdir(), 'lvsd-cluster-tls-'));
    t.after(() => rm(dir0, { recursive: true, force: true }));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-keyout', join(dir0, 'key.pem'), '-out', join(dir0, 'cert.pem')], { stdio: 'ignore' });
    cert = readFileSync(join(dir0, 'cert.pem'), 'utf8');
    lb2Opts = { https: { key: readFileSync(join(dir0, 'key.pem')), cert } };
  }
  const lb2 = await harness({
    director: new FakeDirector({ configText: configOf('lb2', `  peers:\n    - { name: lb1, url: "http://127.0.0.1:1", tokenFile: /nonexistent, acceptTokenSha256: ${peerTokenSha256(token)}, acceptActions: ${acceptActions} }\n`) }),
    logger: logger.child({ director: 'lb2' }),
    ...lb2Opts,
  });
  const lb2Url = await lb2.app.listen({ host: '127.0.0.1', port: 0 });
  const lb1 = await harness({ director: new FakeDirector({ configText: configOf('lb1', '  peers: []\n') }), logger: logger.child({ director: 'lb1' }) });
  const tokenFile = join(lb1.dir, 'peer-lb2.token');
  writeFileSync(tokenFile, `${token}\n`);
  t.after(async () => { await lb1.close(); await lb2.close(); });
  return {
    lb1, lb2, lb2Url, token, cert, logs: lines,
    async peers(section) {
      const r = await lb1.director.applyConfig(configOf('lb1', section.replaceAll('TOKENFILE', tokenFile)), 'test');
      assert.ok(r.ok, JSON.stringify(r.errors));
    },
  };
}

async function cluster(h: Harness): Promise<Cluster> {
  const res = await h.call(await h.as('viewer'), 'GET', '/api/v1/cluster');
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Cluster>();
}

test('cluster: the peer is read with its token and shown beside this director, with the differences flagged', async (t) => {
  const p = await pair(t);
  await p.peers(`  name: pair\n  peers:\n    - { name: lb2, url: "${p.lb2Url}/", tokenFile: TOKENFILE }\n`);
  p.lb1.director.setHealth(WEB, '10.0.1.11:80', true);
  p.lb2.director.setHealth(WEB, '10.0.1.11:80', false, 'connect ECONNREFUSED');
  const c = await cluster(p.lb1);
  assert.equal(c.name, 'pair');
  assert.equal(c.self, 'lb1');
  assert.deepEqual(c.directors.map((d) => [d.name, d.reachable, d.error]), [['lb1', true, null], ['lb2', true, null]]);
  assert.deepEqual(c.directors.map((d) => d.member === null ? null : d.member.snapshot.node), ['lb1', 'lb2']);
  assert.deepEqual(c.directors.map((d) => d.member?.vrrpAuth), [{ VI_1: 'none', VI_2: 'none' }, { VI_1: 'none', VI_2: 'none' }]);
  const flagged = c.differences.map((d) => `${d.kind} ${d.subject}`).sort();
  // both fakes are MASTER of VI_1 at the same priorities, and their configs differ (node name, cluster)
  assert.deepEqual(flagged, ['config-hash config', `health realServer:${WEB}/10.0.1.11:80`, 'priority-tie instance:VI_1', 'priority-tie instance:VI_2', 'two-masters vrid:4:51']);
  // the token went over the wire, never into a log line of either director
  assert.ok(p.logs.length > 0);
  assert.ok(!p.logs.some((l) => l.includes(p.token)), 'a log line holds the peer token');
});

test('cluster: a hung peer, a closed port, a wrong token and a missing token file show as unreachable with why', async (t) => {
  const p = await pair(t);
  const hung = await silentPeer();
  t.after(hung.close);
  const closed = await closedPort();
  const wrong = join(p.lb1.dir, 'wrong.token');
  writeFileSync(wrong, newPeerToken());
  // a FIFO nobody writes to: its open() used to keep one of libuv's four threads for ever at every poll
  const fifo = join(p.lb1.dir, 'fifo.token');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  await p.peers(`  timeout: 300ms\n  peers:\n    - { name: hung, url: "${hung.url}", tokenFile: TOKENFILE }\n    - { name: closed, url: "${closed}", tokenFile: TOKENFILE }\n`
    + `    - { name: wrong, url: "${p.lb2Url}", tokenFile: ${wrong} }\n    - { name: nofile, url: "${p.lb2Url}", tokenFile: ${join(p.lb1.dir, 'absent')} }\n`
    + `    - { name: fifo, url: "${p.lb2Url}", tokenFile: ${fifo} }\n`);
  const c = await cluster(p.lb1);
  const by = new Map(c.directors.map((d) => [d.name, d]));
  assert.equal(by.get('lb1')?.reachable, true);
  assert.match(by.get('hung')?.error ?? '', /no answer within 300 ms/);
  assert.match(by.get('closed')?.error ?? '', /ECONNREFUSED/);
  assert.match(by.get('wrong')?.error ?? '', /HTTP 401: unknown peer token/);
  assert.match(by.get('nofile')?.error ?? '', /cannot read tokenFile .*absent: ENOENT/);
  assert.equal(by.get('fifo')?.error, `cannot read tokenFile ${fifo}: a pipe with no writer: nothing to read`);
  for (const n of ['hung', 'closed', 'wrong', 'nofile', 'fifo']) {
    assert.equal(by.get(n)?.reachable, false);
    assert.equal(by.get(n)?.member, null);
  }
  assert.deepEqual(c.differences, [], 'nothing to compare with only this director readable');
});

test('cluster: an https peer is read when its pinned fingerprint matches, refused (token unsent) when not', async (t) => {
  const p = await pair(t, true);
  const lb2Url = p.lb2Url.replace('http://127.0.0.1', 'https://localhost');
  const fp = new X509Certificate(p.cert).fingerprint256;
  const other = fp.replace(/^../, fp.startsWith('00') ? '11' : '00');
  await p.peers(`  peers:\n    - { name: lb2, url: "${lb2Url}", tokenFile: TOKENFILE, fingerprint: "${fp}" }\n    - { name: imposter, url: "${lb2Url}", tokenFile: TOKENFILE, fingerprint: "${other}" }\n`
    + `    - { name: unpinned, url: "${lb2Url}", tokenFile: TOKENFILE }\n`);
  const c = await cluster(p.lb1);
  const by = new Map(c.directors.map((d) => [d.name, d]));
  assert.equal(by.get('lb2')?.reachable, true, by.get('lb2')?.error ?? '');
  assert.match(by.get('imposter')?.error ?? '', /fingerprint .* is not the pinned/);
  assert.match(by.get('unpinned')?.error ?? '', /self[- ]signed/i);
  // lb2 saw one request for its member view: the refused connections never carried one (nor the token)
  const asked = p.logs.filter((l) => l.includes('"director":"lb2"') && l.includes('incoming request') && l.includes('/api/v1/cluster/member'));
  assert.equal(asked.length, 1, asked.join(''));
});

test('cluster: a peer token reads as viewer peer:NAME, and may not write, fan out, or read admin routes', async (t) => {
  const p = await pair(t);
  const bearer = { authorization: `Bearer ${p.token}` };
  const member = await p.lb2.call(null, 'GET', '/api/v1/cluster/member', undefined, bearer);
  assert.equal(member.statusCode, 200, member.body);
  assert.equal((await p.lb2.call(null, 'GET', '/api/v1/status', undefined, bearer)).statusCode, 200);
  const who = await p.lb2.call(null, 'GET', '/api/v1/session', undefined, bearer);
  assert.equal(who.json<{ user: string; role: string }>().user, 'peer:lb1');
  assert.equal(who.json<{ role: string }>().role, 'viewer');
  assert.equal((await p.lb2.call(null, 'GET', '/api/v1/cluster', undefined, bearer)).statusCode, 403);
  assert.equal((await p.lb2.call(null, 'GET', '/api/v1/users', undefined, bearer)).statusCode, 403);
  const drain = await p.lb2.call(null, 'PUT', `/api/v1/overrides/${encodeURIComponent(WEB)}`, { drain: true }, bearer);
  assert.equal(drain.statusCode, 403, drain.body);
  assert.equal((await p.lb2.call(null, 'GET', '/api/v1/status', undefined, { authorization: `Bearer ${newPeerToken()}` })).statusCode, 401);
  // the accepted hash goes with the running config: a reload that drops it locks the peer out at once
  const r = await p.lb2.director.applyConfig(configOf('lb2', '  peers: []\n'), 'test');
  assert.ok(r.ok);
  assert.equal((await p.lb2.call(null, 'GET', '/api/v1/cluster/member', undefined, bearer)).statusCode, 401);
});

test('cluster: without a cluster section the page shows this director alone', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const c = await cluster(h);
  assert.deepEqual(c.directors.map((d) => d.name), ['director-1']);
  assert.deepEqual(c.differences, []);
});

test('cluster forward: an operator drains a real server and fails over on the peer; each side audits it', async (t) => {
  const p = await pair(t, false, true);
  await p.peers(`  peers:\n    - { name: lb2, url: "${p.lb2Url}", tokenFile: TOKENFILE }\n`);
  const op = await p.lb1.as('operator');
  const drain = await p.lb1.call(op, 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'drain', service: WEB, realServer: '10.0.1.11:80' });
  assert.equal(drain.statusCode, 200, drain.body);
  assert.equal(p.lb2.director.dataplane().get(`${WEB}/10.0.1.11:80`), 0, 'drained on lb2');
  assert.equal(p.lb1.director.dataplane().get(`${WEB}/10.0.1.11:80`), 10, 'not on lb1: this was lb2 only');
  const [peerEntry] = p.lb2.store.auditLog();
  assert.deepEqual([peerEntry?.who, peerEntry?.action, peerEntry?.target], ['operator@lb1', 'override.set', `${WEB}/10.0.1.11:80`]);
  const [mine] = p.lb1.store.auditLog();
  assert.deepEqual([mine?.who, mine?.action, mine?.target], ['operator', 'cluster.forward.drain', `lb2: ${WEB}/10.0.1.11:80 drain`]);

  const enable = await p.lb1.call(op, 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'enable', service: WEB, realServer: '10.0.1.11:80' });
  assert.equal(enable.statusCode, 200, enable.body);
  assert.equal(p.lb2.director.dataplane().get(`${WEB}/10.0.1.11:80`), 10);

  const fo = await p.lb1.call(op, 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'failover', instance: 'VI_1', how: 'lower-priority' });
  assert.equal(fo.statusCode, 200, fo.body);
  assert.equal(p.lb2.director.snapshot().vrrp.find((i) => i.name === 'VI_1')?.forced, 'lower-priority');
  assert.equal(p.lb2.store.auditLog()[0]?.who, 'operator@lb1');

  // the peer's refusal comes back as 502 naming it; a viewer here may not forward at all
  const missing = await p.lb1.call(op, 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'drain', service: WEB, realServer: '10.9.9.9:80' });
  assert.equal(missing.statusCode, 502);
  assert.match(missing.json<{ message: string }>().message, /^lb2: HTTP 404: .*10\.9\.9\.9:80/);
  const viewer = await p.lb1.call(await p.lb1.as('viewer'), 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'enable', service: WEB, realServer: '10.0.1.11:80' });
  assert.equal(viewer.statusCode, 403);
  const nobody = await p.lb1.call(op, 'POST', '/api/v1/cluster/forward', { director: 'lb9', action: 'enable', service: WEB, realServer: '10.0.1.11:80' });
  assert.equal(nobody.statusCode, 404);
});

test('cluster forward: a peer without acceptActions only reads; a forwarded action must name its user and a marked route', async (t) => {
  const ro = await pair(t);
  await ro.peers(`  peers:\n    - { name: lb2, url: "${ro.lb2Url}", tokenFile: TOKENFILE }\n`);
  const res = await ro.lb1.call(await ro.lb1.as('operator'), 'POST', '/api/v1/cluster/forward', { director: 'lb2', action: 'drain', service: WEB, realServer: '10.0.1.11:80' });
  assert.equal(res.statusCode, 502);
  assert.match(res.json<{ message: string }>().message, /HTTP 403: peer lb1 may only read here .*acceptActions/);
  assert.equal(ro.lb2.director.dataplane().get(`${WEB}/10.0.1.11:80`), 10, 'nothing changed on lb2');
  assert.equal(ro.lb1.store.auditLog()[0]?.action, 'cluster.forward.drain', 'the failed forward is audited here too');

  const rw = await pair(t, false, true);
  const bearer = { authorization: `Bearer ${rw.token}` };
  const rsPath = `/api/v1/services/${encodeURIComponent(WEB)}/real-servers/${encodeURIComponent('10.0.1.11:80')}/override`;
  assert.equal((await rw.lb2.call(null, 'PUT', rsPath, { drain: true }, bearer)).statusCode, 403, 'no x-lvsd-user');
  assert.equal((await rw.lb2.call(null, 'PUT', rsPath, { drain: true }, { ...bearer, 'x-lvsd-user': 'bad user!' })).statusCode, 403);
  assert.equal((await rw.lb2.call(null, 'PUT', `/api/v1/services/${encodeURIComponent(WEB)}/override`, { drain: true }, { ...bearer, 'x-lvsd-user': 'alice' })).statusCode, 403, 'a whole service is not a forwardable action');
  assert.equal((await rw.lb2.call(null, 'POST', '/api/v1/config/rollback', {}, { ...bearer, 'x-lvsd-user': 'alice' })).statusCode, 403);
  assert.equal((await rw.lb2.call(null, 'PUT', rsPath, { drain: true }, { ...bearer, 'x-lvsd-user': 'alice' })).statusCode, 200);
  assert.equal(rw.lb2.store.auditLog()[0]?.who, 'alice@lb1');
});
