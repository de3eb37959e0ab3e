// The stream checkers against small in-process servers on loopback: the agent (alone and beside a TCP
// check: weight percentage, drain, down/maint, garbage naming the agent, a silent agent) and DNS over
// TCP (length prefix, split writes) and the retry over TCP of a truncated UDP answer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { frameTcp, unframeTcp } from '../../daemon/health/checkers/dns.js';
import { decodeResponse, encodeQuery } from '../../daemon/health/checkers/dns-codec.js';
import { CHECK_DEFAULTS, HealthOptionError, type CheckOptions } from '../../daemon/health/options.js';
import type { CheckVerdict } from '../../daemon/health/types.js';
import { freePort, LoopbackServers, runProbe } from '../support/loopback-servers.js';

const servers = new LoopbackServers();
after(() => {
  servers.closeAll();
});

/** An agent answering whatever `say` holds now, and recording what it was sent. */
async function agent(): Promise<{ port: number; say: { line: string | null }; heard: string[] }> {
  const say: { line: string | null } = { line: '100%\n' };
  const heard: string[] = [];
  const port = await servers.listen((s) => {
    s.on('data', (d: Buffer) => heard.push(d.toString('latin1')));
    if (say.line !== null) s.end(say.line);
  });
  return { port, say, heard };
}

function opts(o: Partial<CheckOptions> & Pick<CheckOptions, 'type'>): CheckOptions {
  return { ...CHECK_DEFAULTS, timeoutMs: 1500, ...o };
}

function runner(o: CheckOptions, port: number): () => Promise<CheckVerdict> {
  const p = buildProbe('web/127.0.0.1', '127.0.0.1', port, o);
  return () => runProbe(p, o.timeoutMs);
}

test('agent alone: percentage, drain, maint, down with its reason, garbage naming the agent, silence fails', async () => {
  const a = await agent();
  const check = runner(opts({ type: 'agent' }), a.port);
  const peer = `127.0.0.1:${a.port}`;
  assert.deepEqual(await check(), { ok: true, reason: 'ok', detail: 'agent: 100%', weightPercent: 100 });
  a.say.line = '75%\r\n';
  assert.deepEqual(await check(), { ok: true, reason: 'ok', detail: 'agent: 75%', weightPercent: 75 });
  a.say.line = 'drain';
  assert.deepEqual(await check(), { ok: true, reason: 'ok', detail: 'agent: drain', weightPercent: 0 }, 'drain: up at weight 0, answered without a newline');
  a.say.line = 'ready\n';
  assert.deepEqual(await check(), { ok: true, reason: 'ok', detail: 'agent: 75%', weightPercent: 75 });
  a.say.line = 'maint #kernel upgrade\n';
  assert.deepEqual(await check(), { ok: false, reason: 'agent', detail: 'agent: maint (kernel upgrade)' });
  a.say.line = 'ready up\n';
  assert.equal((await check()).ok, true);
  a.say.line = 'down #db unreachable\n';
  assert.deepEqual(await check(), { ok: false, reason: 'agent', detail: 'agent: down (db unreachable)' });
  a.say.line = 'SSH-2.0-OpenSSH_9.2\r\n';
  assert.deepEqual(await check(), { ok: false, reason: 'protocol', detail: `agent ${peer}: unknown word "SSH-2.0-OpenSSH_9.2" in "SSH-2.0-OpenSSH_9.2" (expected N%, up, down, stopped, fail, ready, drain, maint, maxconn:N, #reason)` });
  a.say.line = '';
  assert.deepEqual(await check(), { ok: false, reason: 'protocol', detail: `agent ${peer}: closed the connection without a line` });
  a.say.line = null; // accepts and says nothing
  const silent = await check();
  assert.deepEqual([silent.ok, silent.reason], [false, 'timeout']);
  const refused = await runner(opts({ type: 'agent', agent: { port: await freePort() } }), a.port)();
  assert.equal(refused.reason, 'refused', 'agent.port overrides the real server port');
});

test('agent: the send line reaches the agent', async () => {
  const port = await servers.listen((s) => {
    s.on('data', (d: Buffer) => {
      s.end(d.toString('latin1') === 'status web\n' ? '42%\n' : 'down #bad request\n');
    });
  });
  assert.deepEqual(await runner(opts({ type: 'agent', agent: { send: 'status web' } }), port)(), { ok: true, reason: 'ok', detail: 'agent: 42%', weightPercent: 42 });
});

test('agent beside a tcp check: the tcp check decides up/down, the agent adds its weight and its down', async () => {
  const service = await servers.listen((s) => s.end());
  const a = await agent();
  const check = runner(opts({ type: 'tcp', agent: { port: a.port } }), service);
  a.say.line = '30%\n';
  assert.deepEqual(await check(), { ok: true, reason: 'ok', detail: 'agent: 30%', weightPercent: 30 });
  a.say.line = 'maint\n';
  assert.deepEqual(await check(), { ok: false, reason: 'agent', detail: 'agent: maint' });
  a.say.line = 'ready\n';
  assert.equal((await check()).weightPercent, 30);
  a.say.line = null;
  const silent = await check();
  assert.equal(silent.ok, true, 'a silent agent keeps its last word');
  assert.equal(silent.weightPercent, 30);
  assert.match(silent.detail, /^agent: 30%; agent 127\.0\.0\.1:\d+ silent \(agent 127\.0\.0\.1:\d+: no answer in 1500 ms\): last answer kept$/);
  const dead = runner(opts({ type: 'tcp', agent: { port: a.port } }), await freePort());
  assert.equal((await dead()).reason, 'refused', 'the service itself refusing is down whatever the agent says');
  assert.throws(() => buildProbe('web/rs1', '127.0.0.1', 80, opts({ type: 'tcp', agent: {} })), (e: unknown) => e instanceof HealthOptionError && e.message === 'web/rs1: healthCheck.agent.port: required beside another check (the agent listens on its own port)');
});

/** A DNS answer for the query `q`: rcode, flags and A records (as 4-byte strings). */
function answer(q: Buffer, opts: { tc?: boolean; a?: number[][] } = {}): Buffer {
  const r = decodeResponse(q);
  const head = Buffer.from(encodeQuery(r.id, r.questions[0]?.name ?? '.', r.questions[0]?.type ?? 1));
  head.writeUInt16BE(0x8180 | (opts.tc === true ? 0x0200 : 0), 2);
  const recs = (opts.a ?? []).map((ip) => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 9, 0, 4, ...ip]));
  head.writeUInt16BE(recs.length, 6);
  return Buffer.concat([head, ...recs]);
}

test('dns over tcp: the 2-byte length prefix, an answer split across writes, rcode and answer', async () => {
  assert.deepEqual([...frameTcp(Buffer.from([1, 2, 3]))], [0, 3, 1, 2, 3]);
  assert.equal(unframeTcp(Buffer.from([0, 3, 1, 2])), null, 'incomplete');
  assert.deepEqual([...(unframeTcp(Buffer.from([0, 2, 9, 8, 7])) ?? [])], [9, 8]);
  const port = await servers.listen((s) => {
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const q = unframeTcp(buf);
      if (q === null) return;
      const framed = frameTcp(answer(q, { a: [[192, 0, 2, 53]] }));
      s.write(framed.subarray(0, 1)); // the length split from itself and from the message
      setTimeout(() => s.end(framed.subarray(1)), 20);
    });
  });
  const dns = (o: Partial<NonNullable<CheckOptions['dns']>>): Promise<CheckVerdict> => runner(opts({ type: 'dns', dns: { name: 'www.example.com', protocol: 'tcp', ...o } }), port)();
  assert.deepEqual(await dns({ expectAnswer: '192.0.2.53' }), { ok: true, reason: 'ok', detail: 'ok' });
  assert.deepEqual(await dns({ expectAnswer: '192.0.2.54' }), { ok: false, reason: 'answer-mismatch', detail: 'no answer 192.0.2.54 (got A 192.0.2.53) (tcp)' });
  const closed = await servers.listen((s) => s.end(Buffer.from([0, 40, 1])));
  assert.deepEqual(await runner(opts({ type: 'dns', dns: { name: 'x.example', protocol: 'tcp' } }), closed)(), { ok: false, reason: 'reset', detail: 'connection closed before a whole DNS message (tcp)' });
});

test('dns over udp: a truncated answer is asked again over tcp (unless told not to)', async () => {
  const udp = createSocket('udp4');
  servers.adopt(udp);
  let udpQueries = 0;
  udp.on('message', (m, from) => {
    udpQueries++;
    udp.send(answer(m, { tc: true }), from.port, from.address);
  });
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  const port = (udp.address()).port;
  // The same port over TCP: the full answer.
  await servers.listen((s) => {
    s.on('data', (d: Buffer) => {
      const q = unframeTcp(d);
      if (q !== null) s.end(frameTcp(answer(q, { a: [[192, 0, 2, 1], [192, 0, 2, 2]] })));
    });
  }, '127.0.0.1', port);
  const ok = await runner(opts({ type: 'dns', dns: { name: 'big.example', expectAnswer: '192.0.2.2' } }), port)();
  assert.deepEqual(ok, { ok: true, reason: 'ok', detail: 'ok' });
  assert.equal(udpQueries, 1);
  const noRetry = await runner(opts({ type: 'dns', dns: { name: 'big.example', expectAnswer: '192.0.2.2', tcpOnTruncation: false } }), port)();
  assert.deepEqual(noRetry, { ok: false, reason: 'answer-mismatch', detail: 'no answer 192.0.2.2 (got none)' });
  const mismatch = await runner(opts({ type: 'dns', dns: { name: 'big.example', expectAnswer: '192.0.2.9' } }), port)();
  assert.equal(mismatch.detail, 'no answer 192.0.2.9 (got A 192.0.2.1, A 192.0.2.2) (tcp after a truncated udp answer)');
});
