// Real servers that misbehave on purpose, on loopback: what a hostile or broken peer can make a health
// check do. Each check must end with a verdict naming what went wrong, within its timeout, with bounded
// memory and without blocking the event loop.
import { test, after } from 'node:test';
import { createSocket } from 'node:dgram';
import assert from 'node:assert/strict';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { HttpResponseReader } from '../../daemon/health/checkers/http-response.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import { LoopbackServers, runProbe } from '../support/loopback-servers.js';

const servers = new LoopbackServers();
after(() => {
  servers.closeAll();
});

function opts(o: Partial<CheckOptions> & Pick<CheckOptions, 'type'>): CheckOptions {
  return { ...CHECK_DEFAULTS, timeoutMs: 1500, ...o };
}

test('agent: a line followed at once by more bytes than a line may hold is read, not refused as too long', async () => {
  const port = await servers.listen((s) => {
    s.write(`50%\n${'x'.repeat(4096)}`);
  });
  const o = opts({ type: 'agent' });
  const v = await runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
  assert.deepEqual(v, { ok: true, reason: 'ok', detail: 'agent: 50%', weightPercent: 50 });
});

test('agent: an endless line fails the check naming the agent', async () => {
  const port = await servers.listen((s) => {
    s.write('x'.repeat(4096));
  });
  const o = opts({ type: 'agent' });
  const v = await runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
  assert.deepEqual(v, { ok: false, reason: 'protocol', detail: `agent 127.0.0.1:${port}: answer longer than 514 bytes` });
});

/** An http check on `port` (a body regex, so the body is read). */
function http(port: number, timeoutMs = 1500): Promise<{ ok: boolean; reason: string; detail?: string }> {
  const o = opts({ type: 'http', timeoutMs, http: { bodyRegex: 'ok' } });
  return runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
}

const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';

test('http: a chunk size no body can have fails with the reason once the body passes the limit', async () => {
  const port = await servers.listen((s) => {
    s.once('data', () => { s.write(`${CHUNKED_HEAD}ffffffffffffffffffffffff\r\n${'o'.repeat(1_100_000)}`); }); // then holds the connection
  });
  assert.deepEqual(await http(port, 60_000), { ok: false, reason: 'protocol', detail: 'body larger than 1048576 bytes' });
});

test('http: a body of tiny chunks read in small pieces is decoded once, not again at every read', () => {
  // Counts the reader's scans for a line end: the work, not the time (the old reader re-decoded the whole
  // body at every read: 1 MiB of one-byte chunks in 4 KiB reads blocked the event loop for 15 s).
  const r = new HttpResponseReader(true);
  r.push(Buffer.from(CHUNKED_HEAD));
  const chunks = 10_000;
  const body = Buffer.from('1\r\nx\r\n'.repeat(chunks) + '0\r\n\r\n');
  const indexOf = Reflect.get(Buffer.prototype, 'indexOf') as (...a: unknown[]) => number;
  let scans = 0;
  Reflect.set(Buffer.prototype, 'indexOf', function counted(this: Buffer, ...a: unknown[]): number {
    scans++;
    return Reflect.apply(indexOf, this, a);
  });
  try {
    for (let i = 0; i < body.length; i += 64) r.push(body.subarray(i, i + 64));
  } finally {
    Reflect.set(Buffer.prototype, 'indexOf', indexOf);
  }
  assert.equal(r.state, 'complete');
  assert.equal(r.body.toString(), 'x'.repeat(chunks));
  assert.ok(scans < 3 * chunks, `${scans} scans for ${chunks} chunks`);
});

test('http: an endless header line, endless headers, a huge Content-Length fail with the reason', async () => {
  const answers = [
    `HTTP/1.1 200 OK\r\nX-A: ${'a'.repeat(70_000)}`,
    `HTTP/1.1 200 OK\r\n${'X-A: a\r\n'.repeat(10_000)}`,
    'HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nok',
  ];
  const want = ['response head larger than 64 KiB', 'response head larger than 64 KiB', 'body larger than 1048576 bytes'];
  for (const [i, answer] of answers.entries()) {
    const port = await servers.listen((s) => {
      s.once('data', () => s.write(answer)); // and never ends
    });
    assert.deepEqual(await http(port, 60_000), { ok: false, reason: 'protocol', detail: want[i] }, answer.slice(0, 40));
  }
});

test('http: a body that never ends or trickles a byte at a time still ends at the timeout; a reset mid-body is a failure', async () => {
  const trickle = await servers.listen((s) => {
    s.once('data', () => {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
      const t = setInterval(() => { s.write('o'); }, 50);
      s.on('close', () => { clearInterval(t); });
    });
  });
  assert.deepEqual(await http(trickle, 400), { ok: false, reason: 'timeout', detail: 'no complete answer in 400 ms' });
  const reset = await servers.listen((s) => {
    s.once('data', () => {
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nok', () => s.resetAndDestroy());
    });
  });
  const v = await http(reset);
  // the RST may overtake the bytes (ECONNRESET) or follow them (closed inside the body): a failure either way
  assert.ok(v.reason === 'reset' || (v.reason === 'protocol' && v.detail === 'connection closed after 2 body bytes (Content-Length 1000)'), JSON.stringify(v));
  assert.equal(v.ok, false);
});

test('smtp: an endless banner line and a multi-line banner without end fail with the reason', async () => {
  for (const unit of ['2'.repeat(1000), '220-more\r\n']) {
    const port = await servers.listen((s) => {
      s.write(unit.repeat(Math.ceil(8192 / unit.length))); // and never ends
    });
    const o = opts({ type: 'smtp', smtp: { helo: 'lvsd' } });
    const v = await runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
    assert.deepEqual(v, { ok: false, reason: 'protocol', detail: 'reply longer than 4096 bytes' }, unit.slice(0, 10));
  }
});

test('dns: a compression loop, a cut record, a wrong id, a flood of wrong answers', async () => {
  const udp = createSocket('udp4');
  servers.adopt(udp);
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  let answer: (q: Buffer) => Buffer[] = () => [];
  udp.on('message', (q, from) => {
    for (const a of answer(q)) udp.send(a, from.port, from.address);
  });
  const header = (q: Buffer, an: number): Buffer => {
    const h = Buffer.from(q.subarray(0, 12));
    h.writeUInt16BE(0x8180, 2);
    h.writeUInt16BE(0, 4);
    h.writeUInt16BE(an, 6);
    return h;
  };
  const o = opts({ type: 'dns', timeoutMs: 400, dns: { name: 'example.com' } });
  const check = (): Promise<{ ok: boolean; reason: string; detail?: string }> => runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', (udp.address()).port, o), o.timeoutMs);
  answer = (q) => [Buffer.concat([header(q, 1), Buffer.from([0xc0, 12])])]; // the answer's name points at itself
  assert.deepEqual(await check(), { ok: false, reason: 'protocol', detail: 'DNS message at byte 12: name compression loop' });
  answer = (q) => [Buffer.concat([header(q, 1), Buffer.from([0, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0])])];
  assert.deepEqual(await check(), { ok: false, reason: 'protocol', detail: 'DNS message at byte 23: truncated record data (need 4 bytes, 2 left)' });
  answer = (q) => Array.from({ length: 200 }, () => { const h = header(q, 0); h.writeUInt16BE(q.readUInt16BE(0) ^ 1, 0); return h; });
  assert.deepEqual(await check(), { ok: false, reason: 'timeout', detail: 'no DNS reply in 400 ms' });
});
