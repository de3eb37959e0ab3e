// Every checker against small in-process servers on loopback (no root, no namespaces): the verdict and
// reason for up, refused, wrong status, body mismatch, hang (timeout enforced through the signal),
// UDP reply/mismatch/ICMP refusal, DNS rcode/answer, exec exit codes and the dynamic weight form.
// The same checkers meet real nginx and dnsmasq in test/netns/health-*.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createHash } from 'node:crypto';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { CHECK_DEFAULTS, HealthOptionError, type CheckOptions } from '../../daemon/health/options.js';
import { encodeQuery, decodeResponse } from '../../daemon/health/checkers/dns-codec.js';
import type { CheckVerdict } from '../../daemon/health/types.js';
import { freePort, LoopbackServers, runProbe } from '../support/loopback-servers.js';

const servers = new LoopbackServers();
after(() => {
  servers.closeAll();
});

/** An HTTP server answering every request with the given status and body; records the request heads. */
async function http(status: number, body: string, opts: { chunked?: boolean; hang?: boolean } = {}): Promise<{ port: number; heads: string[] }> {
  const heads: string[] = [];
  const port = await servers.listen((s) => {
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      if (!buf.includes('\r\n\r\n') || opts.hang === true) return;
      heads.push(buf);
      const head = opts.chunked === true
        ? `HTTP/1.1 ${status} X\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`
        : `HTTP/1.1 ${status} X\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      s.end(head);
    });
  });
  return { port, heads };
}

function opts(o: Partial<CheckOptions> & Pick<CheckOptions, 'type'>): CheckOptions {
  return { ...CHECK_DEFAULTS, timeoutMs: 3000, ...o };
}

function probe(o: CheckOptions, port: number, address = '127.0.0.1'): Promise<CheckVerdict> {
  return runProbe(buildProbe('test-rs', address, port, o), o.timeoutMs);
}

test('tcp: up when it connects, refused when nothing listens', async () => {
  const port = await servers.listen((s) => s.end());
  assert.equal((await probe(opts({ type: 'tcp' }), port)).reason, 'ok');
  const v = await probe(opts({ type: 'tcp' }), await freePort());
  assert.deepEqual([v.ok, v.reason, v.detail], [false, 'refused', 'ECONNREFUSED']);
});

test('tcp: connectPort overrides the real server port and bindTo sets the source', async () => {
  let peer = '';
  const port = await servers.listen((s) => { peer = s.remoteAddress ?? ''; s.end(); });
  const v = await probe(opts({ type: 'tcp', connectPort: port, bindTo: '127.0.0.2' }), 1);
  assert.equal(v.reason, 'ok');
  assert.equal(peer, '127.0.0.2');
});

test('http: status, path, Host, headers and Connection: close are sent; 200 passes', async () => {
  const srv = await http(200, 'all good');
  const v = await probe(opts({ type: 'http', http: { path: '/health?x=1', host: 'www.example.com', headers: { 'X-Probe': 'lvsd' } } }), srv.port);
  assert.equal(v.reason, 'ok');
  const head = srv.heads[0] ?? '';
  assert.match(head, /^GET \/health\?x=1 HTTP\/1\.1\r\n/);
  assert.match(head, /\r\nHost: www\.example\.com\r\n/);
  assert.match(head, /\r\nX-Probe: lvsd\r\n/);
  assert.match(head, /\r\nConnection: close\r\n/);
});

test('http: 503 fails with "status 503"; accepted ranges are honoured', async () => {
  const srv = await http(503, 'busy');
  assert.deepEqual(await probe(opts({ type: 'http' }), srv.port), { ok: false, reason: 'status', detail: 'status 503' });
  assert.equal((await probe(opts({ type: 'http', http: { status: ['500-503'] } }), srv.port)).reason, 'ok');
});

test('http: body regex and md5 digest, chunked or not', async () => {
  for (const chunked of [false, true]) {
    const srv = await http(200, 'state=healthy\n', { chunked });
    assert.equal((await probe(opts({ type: 'http', http: { bodyRegex: 'state=healthy' } }), srv.port)).reason, 'ok');
    assert.equal((await probe(opts({ type: 'http', http: { bodyRegex: '^sick' } }), srv.port)).reason, 'regex-mismatch');
    const md5 = createHash('md5').update('state=healthy\n').digest('hex');
    assert.equal((await probe(opts({ type: 'http', http: { digest: md5 } }), srv.port)).reason, 'ok');
    assert.equal((await probe(opts({ type: 'http', http: { digest: '0'.repeat(32) } }), srv.port)).reason, 'digest-mismatch');
  }
});

test('http: a server that accepts and never answers times out at the deadline, socket released', async () => {
  const srv = await http(200, 'x', { hang: true });
  const t0 = performance.now();
  const v = await probe(opts({ type: 'http', timeoutMs: 300 }), srv.port);
  const took = performance.now() - t0;
  assert.equal(v.reason, 'timeout');
  assert.ok(took >= 290 && took < 2_000, `took ${took} ms`);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(servers.connections.size, 0, 'the checker closed its connection');
});

test('http: bad options are named by target and field', () => {
  assert.throws(() => buildProbe('web/10.0.0.1:80', '10.0.0.1', 80, opts({ type: 'http', http: { bodyRegex: '(' } })),
    (e: unknown) => e instanceof HealthOptionError && /^web\/10\.0\.0\.1:80: healthCheck\.http\.bodyRegex: /.test(e.message));
  assert.throws(() => buildProbe('rs', '10.0.0.1', 80, opts({ type: 'https', http: { status: ['2xx'] } })), /healthCheck\.http\.status: bad status/);
  assert.throws(() => buildProbe('rs', '10.0.0.1', 80, opts({ type: 'tcp', bindTo: '::1' })), /healthCheck\.bindTo: ::1 is not an IPv4/);
  assert.throws(() => buildProbe('rs', 'nginx1', 80, opts({ type: 'tcp' })), /healthCheck\.address: not an IP/);
  assert.throws(() => buildProbe('rs', '10.0.0.1', 53, opts({ type: 'dns', dns: { name: 'x', type: 'BOGUS' } })), /healthCheck\.dns\.type: unknown/);
});

async function udpServer(onMsg: (msg: Buffer, reply: (b: Buffer) => void) => void): Promise<number> {
  const s = createSocket('udp4');
  servers.adopt(s);
  s.on('message', (msg, rinfo) => {
    onMsg(msg, (b) => { s.send(b, rinfo.port, rinfo.address); });
  });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s.address().port;
}

test('udp: a connect that fails (broadcast without SO_BROADCAST: EACCES, nothing sent) is a failed check, not a crash', async () => {
  const v = await probe(opts({ type: 'udp', udp: { payload: '00', expect: { hex: '00' } } }), 9, '255.255.255.255');
  assert.equal(v.ok, false);
  assert.match(v.detail, /EACCES/);
});

test('udp: echo matches hex and regex; mismatch, ICMP refusal and silence are told apart', async () => {
  const port = await udpServer((m, reply) => { reply(m); });
  assert.equal((await probe(opts({ type: 'udp', udp: { payload: '70696e67', expect: { hex: '70696e67' } } }), port)).reason, 'ok');
  assert.equal((await probe(opts({ type: 'udp', udp: { payload: '70696e67', expect: { regex: '^pi' } } }), port)).reason, 'ok');
  assert.equal((await probe(opts({ type: 'udp', udp: { payload: '70696e67', expect: { hex: '706f6e67' } } }), port)).reason, 'answer-mismatch');
  assert.equal((await probe(opts({ type: 'udp', udp: { payload: '70696e67', expect: { regex: '^po' } } }), port)).reason, 'regex-mismatch');
  const closed = await freePort();
  assert.equal((await probe(opts({ type: 'udp', udp: { payload: '00', requireReply: false } }), closed)).reason, 'refused');
  const silent = await udpServer(() => undefined);
  assert.equal((await probe(opts({ type: 'udp', timeoutMs: 300, udp: { payload: '00', expect: { hex: '00' } } }), silent)).reason, 'timeout');
  assert.equal((await probe(opts({ type: 'udp', timeoutMs: 2000, udp: { payload: '00', quietMs: 200 } }), silent)).reason, 'ok', 'no reply required, no ICMP error');
});

test('dns: rcode and answer checked against a tiny in-process server', async () => {
  const port = await udpServer((m, reply) => {
    const q = decodeResponse(m); // a query decodes with the same codec
    const name = q.questions[0]?.name ?? '';
    const out = Buffer.from(encodeQuery(q.id, name, 1));
    if (name !== 'www.example.com') {
      out.writeUInt16BE(0x8183, 2); // NXDOMAIN
      reply(out);
      return;
    }
    out.writeUInt16BE(0x8180, 2);
    out.writeUInt16BE(1, 6);
    reply(Buffer.concat([out, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 9, 0, 4, 192, 0, 2, 7])]));
  });
  assert.equal((await probe(opts({ type: 'dns', dns: { name: 'www.example.com', expectAnswer: '192.0.2.7' } }), port)).reason, 'ok');
  const wrong = await probe(opts({ type: 'dns', dns: { name: 'www.example.com', expectAnswer: '192.0.2.8' } }), port);
  assert.deepEqual([wrong.reason, wrong.detail], ['answer-mismatch', 'no answer 192.0.2.8 (got A 192.0.2.7)']);
  assert.deepEqual(await probe(opts({ type: 'dns', dns: { name: 'nope.example.com' } }), port), { ok: false, reason: 'rcode', detail: 'rcode NXDOMAIN' });
  assert.equal((await probe(opts({ type: 'dns', dns: { name: 'nope.example.com', expectRcode: 'NXDOMAIN' } }), port)).reason, 'ok');
});

test('exec: exit codes, the dynamic weight form, env, and a hung command killed at the timeout', async () => {
  assert.equal((await probe(opts({ type: 'exec', exec: { command: 'test "$LVSD_RS_ADDRESS:$LVSD_RS_PORT" = 127.0.0.1:8080' } }), 8080)).reason, 'ok');
  assert.deepEqual(await probe(opts({ type: 'exec', exec: { command: 'exit 1' } }), 80), { ok: false, reason: 'exit-code', detail: 'exit 1' });
  assert.equal((await probe(opts({ type: 'exec', exec: { command: 'exit 7' } }), 80)).reason, 'exit-code');
  assert.deepEqual(await probe(opts({ type: 'exec', exec: { command: 'exit 7', dynamicWeight: true } }), 80), { ok: true, reason: 'ok', detail: 'exit 7: weight 5', weight: 5 });
  assert.equal((await probe(opts({ type: 'exec', exec: { command: 'exit 1', dynamicWeight: true } }), 80)).reason, 'exit-code');
  const marker = `/tmp/lvsd-health-exec-${process.pid}`;
  const v = await probe(opts({ type: 'exec', timeoutMs: 300, exec: { command: `sleep 5; touch ${marker}` } }), 80);
  assert.equal(v.reason, 'timeout');
  await new Promise((r) => setTimeout(r, 100));
  const { execFileSync } = await import('node:child_process');
  assert.equal(execFileSync('sh', ['-c', `pgrep -f "[s]leep 5; touch ${marker}" || true`], { encoding: 'utf8' }).trim(), '', 'the process group was killed');
});
