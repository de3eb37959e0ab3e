// The native probe engine (daemon/health/native/probe_engine.c) against small servers on loopback,
// each verdict compared with the JavaScript checker's on the same server: refused, bindTo (and a
// source address that is not local), bad status, a response head split over many reads, a huge head,
// a bad Content-Length, a close without an answer, a server that never answers (timeout enforced by
// the engine, socket released), specs removed and the engine closed with checks in flight, and a
// burst of checks delivered in batches. Real nginx meets both paths in test/netns/health-checkers.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Socket } from 'node:net';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { NativeProbeEngine, nativeSpecFor, probeAddon } from '../../daemon/health/native-probe.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { CheckVerdict } from '../../daemon/health/types.js';
import { freePort, LoopbackServers, runProbe } from '../support/loopback-servers.js';
import { polite, smtpServer as scripted } from '../support/smtp-script.js';

const lib = probeAddon();
if (lib === null) throw new Error('native probe engine not built (build/Release/lvsd_probe.node): run `npm ci` or `npm rebuild`');

const waiting = new Map<number, (v: CheckVerdict | null) => void>();
const engine = new NativeProbeEngine(lib, (token, _gen, v) => {
  const w = waiting.get(token);
  waiting.delete(token);
  w?.(v);
});
let nextToken = 1;

const servers = new LoopbackServers();
after(() => {
  engine.close();
  servers.closeAll();
});

const listen = (handler: (s: Socket) => void, host = '127.0.0.1'): Promise<number> => servers.listen(handler, host);

/** A server that answers each request (once its head arrived) with `reply`, written in `pieces` parts. */
function answering(reply: string, pieces = 1, gapMs = 0, host = '127.0.0.1'): Promise<number> {
  return listen((s) => {
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (!got.includes('\r\n\r\n')) return;
      got = '';
      const size = Math.ceil(reply.length / pieces);
      let i = 0;
      const next = (): void => {
        if (s.destroyed) return;
        const part = reply.slice(i * size, (i + 1) * size);
        i++;
        if (i >= pieces) s.end(part, 'latin1');
        else {
          s.write(part, 'latin1');
          setTimeout(next, gapMs);
        }
      };
      next();
    });
  }, host);
}

function opts(o: Partial<CheckOptions> & Pick<CheckOptions, 'type'>): CheckOptions {
  return { ...CHECK_DEFAULTS, timeoutMs: 3000, ...o };
}

/** One check through the engine; a timeout comes back as the monitor words it. */
function viaNative(o: CheckOptions, port: number, address = '127.0.0.1'): Promise<CheckVerdict> {
  const spec = nativeSpecFor('t', address, port, o);
  assert.ok(spec !== undefined, 'the engine takes this check');
  const id = engine.add(spec);
  const token = nextToken++;
  return new Promise((resolve) => {
    waiting.set(token, (v) => {
      engine.remove(id);
      resolve(v ?? { ok: false, reason: 'timeout', detail: `no answer within ${o.timeoutMs} ms` });
    });
    engine.start(id, token, 0);
  });
}

function viaJs(o: CheckOptions, port: number, address = '127.0.0.1'): Promise<CheckVerdict> {
  return runProbe(buildProbe('t', address, port, o), o.timeoutMs);
}

/** Both paths on the same server: the verdicts must be equal. */
async function same(o: CheckOptions, port: number): Promise<CheckVerdict> {
  const [n, j] = [await viaNative(o, port), await viaJs(o, port)];
  assert.deepEqual({ ok: n.ok, reason: n.reason, detail: n.detail }, { ok: j.ok, reason: j.reason, detail: j.detail });
  return n;
}

const HTTP = (o: CheckOptions['http'] = {}): CheckOptions => opts({ type: 'http', http: o });
const OK_HEAD = 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n';

test('eligibility: tcp and http (status only, or with a body regex / digest) run natively; TLS, scoped link-local, an agent beside the check and others do not', () => {
  assert.equal(nativeSpecFor('t', '127.0.0.1', 80, opts({ type: 'tcp' }))?.kind, 0);
  assert.equal(nativeSpecFor('t', '::1', 80, HTTP({ path: '/x', status: [200, '300-399'] }))?.kind, 1);
  assert.equal(nativeSpecFor('t', '127.0.0.1', 443, opts({ type: 'https' })), undefined);
  assert.equal(nativeSpecFor('t', '127.0.0.1', 80, HTTP({ bodyRegex: 'ok' }))?.kind, 2);
  assert.equal(nativeSpecFor('t', '127.0.0.1', 80, HTTP({ digest: '0'.repeat(32) }))?.kind, 2);
  assert.equal(nativeSpecFor('t', 'fe80::1', 80, opts({ type: 'tcp', bindInterface: 'eth0' })), undefined);
  assert.equal(nativeSpecFor('t', '127.0.0.1', 53, opts({ type: 'dns', dns: { name: 'x' } })), undefined);
  assert.equal(nativeSpecFor('t', '127.0.0.1', 80, opts({ type: 'tcp', agent: { port: 9999 } })), undefined, 'an agent beside the check needs the JS probe');
});

test('tcp: up when it connects, refused when nothing listens (as the JS checker)', async () => {
  const port = await listen((s) => s.end());
  assert.equal((await same(opts({ type: 'tcp' }), port)).reason, 'ok');
  const v = await same(opts({ type: 'tcp' }), await freePort());
  assert.deepEqual([v.reason, v.detail], ['refused', 'ECONNREFUSED']);
});

test('tcp and http over IPv6 loopback', async () => {
  const port = await answering(OK_HEAD, 1, 0, '::1');
  const v = await viaNative(HTTP(), port, '::1');
  assert.equal(v.reason, 'ok');
  assert.equal((await viaNative(opts({ type: 'tcp' }), port, '::1')).reason, 'ok');
});

test('bindTo sets the source address; a source that is not local fails as in JS', async () => {
  let peer = '';
  const port = await listen((s) => {
    peer = s.remoteAddress ?? '';
    s.once('data', () => s.end(OK_HEAD));
  });
  assert.equal((await viaNative({ ...HTTP(), bindTo: '127.0.0.2' }, port)).reason, 'ok');
  assert.equal(peer, '127.0.0.2');
  assert.equal((await viaNative(opts({ type: 'tcp', bindTo: '127.0.0.3' }), port)).reason, 'ok');
  const n = await viaNative(opts({ type: 'tcp', bindTo: '192.0.2.123' }), port);
  const j = await viaJs(opts({ type: 'tcp', bindTo: '192.0.2.123' }), port);
  assert.deepEqual([n.ok, n.reason], [j.ok, j.reason]);
  assert.match(n.detail, /^EADDRNOTAVAIL/);
});

test('http: accepted and rejected statuses, custom ranges', async () => {
  assert.equal((await same(HTTP(), await answering(OK_HEAD))).reason, 'ok');
  const busy = await answering('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
  assert.equal((await same(HTTP(), busy)).detail, 'status 503');
  assert.equal((await same(HTTP({ status: ['500-503'] }), busy)).reason, 'ok');
  assert.equal((await same(HTTP(), await answering('HTTP/1.0 204 No Content\r\n\r\n'))).reason, 'ok');
});

test('http: a response head split over many reads', async () => {
  const head = 'HTTP/1.1 200 OK\r\nServer: split\r\nX-Padding: ' + 'p'.repeat(200) + '\r\nContent-Length: 3\r\n\r\nok\n';
  assert.equal((await same(HTTP(), await answering(head, 40, 2))).reason, 'ok');
  const bad = 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n';
  assert.equal((await same(HTTP(), await answering(bad, bad.length, 1))).detail, 'status 404');
});

test('http: a large head passes, a head without end beyond 64 KiB is a protocol error', async () => {
  const big = `HTTP/1.1 200 OK\r\nX-Big: ${'b'.repeat(40_000)}\r\nContent-Length: 0\r\n\r\n`;
  assert.equal((await same(HTTP(), await answering(big))).reason, 'ok');
  // 70,000 bytes of head and no blank line, the connection left open.
  const endless = await listen((s) => s.once('data', () => s.write(`HTTP/1.1 200 OK\r\nX-Big: ${'b'.repeat(70_000)}`)));
  const v = await same(HTTP(), endless);
  assert.deepEqual([v.reason, v.detail], ['protocol', 'response head larger than 64 KiB']);
});

test('http: odd answers give the JS reader\'s verdicts', async () => {
  const badLength = await same(HTTP(), await answering('HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n'));
  assert.deepEqual([badLength.reason, badLength.detail], ['protocol', 'bad Content-Length "12abc"']);
  const notHttp = await same(HTTP(), await answering('SSH-2.0-OpenSSH_9.2\r\n\r\n'));
  assert.equal(notHttp.reason, 'protocol');
  const closed = await same(HTTP(), await listen((s) => s.once('data', () => s.end())));
  assert.deepEqual([closed.reason, closed.detail], ['reset', 'connection closed without a response']);
  const cut = await same(HTTP(), await answering('HTTP/1.1 200 OK\r\nContent-Le'));
  assert.deepEqual([cut.reason, cut.detail], ['reset', 'connection closed inside the response head']);
});

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

const md5 = (s: string | Buffer): string => createHash('md5').update(s).digest('hex');
const BODY = 'status: healthy\n';
const withLength = (body: string, extra = ''): string => `HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body, 'latin1')}\r\n${extra}\r\n${body}`;
const chunked = (parts: string[], extra = ''): string =>
  `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n${extra}\r\n${parts.map((p) => `${Buffer.byteLength(p, 'latin1').toString(16)}\r\n${p}\r\n`).join('')}0\r\n\r\n`;

test('http body checks: regex and digest, matched and not, give the JS checker\'s verdicts', async () => {
  const port = await answering(withLength(BODY), 3, 5);
  assert.equal((await same(HTTP({ bodyRegex: 'healthy' }), port)).reason, 'ok');
  assert.equal((await same(HTTP({ bodyRegex: '^down' }), port)).reason, 'regex-mismatch');
  assert.equal((await same(HTTP({ digest: md5(BODY) }), port)).reason, 'ok');
  assert.equal((await same(HTTP({ digest: md5('other') }), port)).reason, 'digest-mismatch');
  assert.equal((await same(HTTP({ digest: md5(BODY), status: [500] }), port)).reason, 'status');
});

test('http body checks: every way a body ends — length, chunked over many reads, the close; 204; odd and oversized bodies', async () => {
  const big = 'x'.repeat(200_000);
  const cases: [string, string, number, string][] = [
    ['length, in 40 pieces', withLength(big + BODY), 40, 'ok'],
    ['chunked, in 25 pieces', chunked(['status: ', 'healthy', '\n', big]), 25, 'ok'],
    ['chunked with an extension and a trailer', chunked(['status: healthy\n']).replace('10\r\n', '10;ext=1\r\n').replace(/0\r\n\r\n$/, '0\r\nX-T: 1\r\n\r\n'), 1, 'ok'],
    ['no length: ends at the close', `HTTP/1.0 200 OK\r\n\r\n${BODY}`, 3, 'ok'],
    ['Content-Length after chunked is ignored', chunked([BODY], 'Content-Length: abc\r\n'), 1, 'ok'],
    ['a bad Content-Length', `HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n${BODY}`, 1, 'protocol'],
    ['a chunk size that is not hex', `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`, 1, 'protocol'],
    ['closed inside the body', `HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n${BODY}`, 2, 'protocol'],
    ['a Content-Length over 1 MiB', `HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n${BODY}`, 1, 'protocol'],
    ['a body over 1 MiB without a length', `HTTP/1.0 200 OK\r\n\r\n${'y'.repeat(1_200_000)}`, 4, 'protocol'],
    ['204: no body', 'HTTP/1.1 204 No Content\r\n\r\n', 1, 'regex-mismatch'],
    ['chunked as the last of two codings, odd spacing', chunked([BODY]).replace('Transfer-Encoding: chunked', 'transfer-encoding:\tgzip ,  CHUNKED '), 1, 'ok'],
    ['a header line folded by a bare LF (one line to the reader)', withLength(BODY, 'X-A: 1\nContent-Length: 999\r\n'), 1, 'ok'],
    ['a chunk size with spaces around it', chunked([BODY]).replace('10\r\n', ' 10 \r\n'), 1, 'ok'],
  ];
  for (const [what, reply, pieces, reason] of cases) {
    const port = await answering(reply, pieces, 2);
    const v = await same({ ...HTTP({ bodyRegex: 'healthy', status: ['200-299'] }), timeoutMs: 3000 }, port);
    assert.equal(v.reason, reason, `${what}: ${v.detail}`);
  }
});

test('http body checks: a server that keeps the connection open after a whole body is not waited for', async () => {
  const port = await listen((s) => {
    s.once('data', () => s.write(withLength(BODY)));
  });
  const t0 = performance.now();
  const v = await same({ ...HTTP({ digest: md5(BODY) }), timeoutMs: 2000 }, port);
  assert.equal(v.reason, 'ok');
  assert.ok(performance.now() - t0 < 1500, 'settled at the end of the body, not at the timeout');
});

test('http: a server that accepts and never answers times out in the engine, socket released', async () => {
  const port = await listen(() => undefined);
  const before = openFds();
  const t0 = performance.now();
  const v = await viaNative({ ...HTTP(), timeoutMs: 300 }, port);
  const took = performance.now() - t0;
  assert.deepEqual([v.reason, v.detail], ['timeout', 'no answer within 300 ms']);
  assert.ok(took >= 295, `settled after ${took} ms, before its timeout`);
  assert.ok(openFds() <= before, 'the engine closed the socket');
});

test('a burst of 300 checks, all up', async () => {
  const port = await answering(OK_HEAD);
  const results = await Promise.all(Array.from({ length: 300 }, () => viaNative(HTTP(), port)));
  assert.equal(results.filter((v) => v.reason === 'ok').length, 300);
});

test('removing a spec or closing an engine with checks in flight is safe and silent', async () => {
  const port = await listen(() => undefined);
  const spec = nativeSpecFor('t', '127.0.0.1', port, { ...HTTP(), timeoutMs: 200 });
  assert.ok(spec !== undefined);
  let late = 0;
  const other = new NativeProbeEngine(lib, () => {
    late++;
  });
  const id = other.add(spec);
  for (let i = 0; i < 20; i++) other.start(id, i, 0);
  await new Promise((r) => setTimeout(r, 20));
  other.remove(id);
  // The removed spec's checks still finish (timeout) and report; the engine then closes mid-flight.
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(late, 20);
  const id2 = other.add(spec);
  for (let i = 0; i < 20; i++) other.start(id2, i, 0);
  await new Promise((r) => setTimeout(r, 20));
  other.close();
  other.close();
  other.start(id2, 99, 0);
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(late, 20, 'no result after close');
});

test('checks run safely while Node forks children (nft, hooks): a closed socket never reports to a freed probe', async () => {
  // A forked child shares every descriptor until it execs; close() alone then left the socket in the
  // epoll set, which reported events for freed probes (seen: lvsd crashed in the 100-reloads test).
  const stress = fileURLToPath(new URL('../support/probe-fork-stress.js', import.meta.url));
  const { code, signal, out } = await new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, [stress, '1500'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', (c, s) => { resolve({ code: c, signal: s, out }); });
  });
  assert.equal(signal, null, `the engine's process died of ${String(signal)}`);
  assert.equal(code, 0);
  const r = JSON.parse(out) as { checks: number; spawns: number; failed: number };
  assert.ok(r.checks > 1000 && r.spawns > 50, `too little happened to tell: ${out}`);
  assert.equal(r.failed, 0, out);
});

test('bindPort: the check leaves from that port, on the engine and in JS, one check after another; the spec carries bindPort and fwmark', async () => {
  const seen: number[] = [];
  // An HTTP check: the engine resets a TCP check's connection at once, before the server could read its peer.
  const port = await listen((s) => {
    seen.push(s.remotePort ?? 0);
    s.once('data', () => s.end(OK_HEAD, 'latin1'));
  });
  const source = await freePort();
  const o = HTTP();
  o.bindPort = source;
  for (let i = 0; i < 2; i++) {
    assert.equal((await viaNative(o, port)).reason, 'ok');
    assert.equal((await viaJs(o, port)).reason, 'ok');
  }
  assert.deepEqual(seen, [source, source, source, source]);
  const spec = nativeSpecFor('t', '127.0.0.1', 80, opts({ type: 'http', bindPort: 40000, fwmark: 7, bindTo: '127.0.0.2' }));
  assert.deepEqual([spec?.bindPort, spec?.mark, spec?.bindTo], [40000, 7, '127.0.0.2']);
  assert.deepEqual([nativeSpecFor('t', '127.0.0.1', 80, opts({ type: 'tcp' }))?.bindPort, nativeSpecFor('t', '127.0.0.1', 80, opts({ type: 'tcp' }))?.mark], [0, 0]);
});

// ——— SMTP (keepalived SMTP_CHECK) on the engine: the C dialog sends HELO and QUIT, JavaScript judges the transcript ———

const SMTP = (helo = 'lvsd.test'): CheckOptions => opts({ type: 'smtp', timeoutMs: 1500, smtp: { helo } });

test('smtp on the engine: the same verdicts and details as the JS checker, dialog for dialog', async () => {
  assert.equal(nativeSpecFor('t', '127.0.0.1', 25, SMTP())?.kind, 4);
  const heard: string[] = [];
  const good = await same(SMTP(), await scripted(servers, '220 mail.lvsd.test ESMTP\r\n', polite, heard));
  assert.deepEqual([good.reason, good.detail], ['ok', '220 mail.lvsd.test ESMTP']);
  assert.deepEqual(heard, ['HELO lvsd.test', 'QUIT', 'HELO lvsd.test', 'QUIT'], 'each path said exactly HELO then QUIT');
  // A multi-line banner in pieces; a multi-line HELO answer.
  const pieces = await listen((s) => {
    s.write('220-mail.lvsd.test\r\n2');
    setTimeout(() => s.write('20 ready\r\n'), 20);
    s.on('data', (d: Buffer) => {
      if (d.toString().startsWith('HELO')) s.write('250-mail.lvsd.test\r\n250-PIPELINING\r\n250 8BITMIME\r\n');
      else s.end('221 bye\r\n');
    });
  });
  assert.equal((await same(SMTP(), pieces)).detail, '220 mail.lvsd.test / ready');
  // A server that says everything at once, before it hears a word: each reply is taken in its turn.
  const eager = await listen((s) => {
    s.write('220 eager\r\n250 ok\r\n221 bye\r\n');
    s.on('data', () => undefined);
  });
  assert.equal((await same(SMTP(), eager)).reason, 'ok');
  const cases: [string, Promise<number>, string][] = [
    ['554 banner', scripted(servers, '554 5.7.1 no service\r\n', polite), 'status'],
    ['HELO refused', scripted(servers, '220 ok\r\n', (l) => (l.startsWith('HELO') ? '501 bad HELO\r\n' : '221 bye\r\n')), 'status'],
    ['hang-up after the banner', scripted(servers, '220 ok\r\n', () => null), 'reset'],
    ['closed before the banner', listen((s) => s.end()), 'reset'],
    ['HTTP instead of SMTP', listen((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n')), 'protocol'],
    ['a \\r inside a line', scripted(servers, '220 a\rb\r\n', polite), 'protocol'],
    ['codes that change mid-reply', scripted(servers, '220-a\r\n250 b\r\n', polite), 'protocol'],
    ['a reply past 4 KiB', scripted(servers, `220-${'x'.repeat(5000)}`, polite), 'protocol'],
    ['QUIT answered with anything', scripted(servers, '220 ok\r\n', (l) => (l === 'QUIT' ? '500 no\r\n' : '250 hi\r\n')), 'ok'],
  ];
  for (const [what, port, reason] of cases) assert.equal((await same(SMTP(), await port)).reason, reason, what);
  assert.equal((await same(SMTP(), await freePort())).reason, 'refused');
  const silent = await same({ ...SMTP(), timeoutMs: 300 }, await scripted(servers, null, polite));
  assert.equal(silent.reason, 'timeout');
});

test('smtpScan (C) finds the same replies as readReply, on random near-SMTP bytes', async () => {
  const { readReply, SmtpProtocolError } = await import('../../daemon/health/checkers/smtp-reply.js');
  let seed = 0x9e3779b9;
  const rnd = (n: number): number => {
    seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const pieces = ['220', '250', '554', '199', '2a0', ' ', '-', 'text', '\r', '\n', '\r\n', 'x', '\t', '220-', '220 ', '250-'];
  const kinds = new Set<string>();
  for (let k = 0; k < 20_000; k++) {
    let s = '';
    for (let i = 0, n = 1 + rnd(10); i < n; i++) s += pieces[rnd(pieces.length)] ?? '';
    const buf = Buffer.from(s, 'latin1');
    let want: [number, number, number];
    try {
      const r = readReply(buf);
      want = r === null ? [0, 0, 0] : [1, r.code, r.consumed];
    } catch (e) {
      if (!(e instanceof SmtpProtocolError)) throw e;
      want = [-1, 0, 0];
    }
    assert.deepEqual(lib.smtpScan(buf), want, JSON.stringify(s));
    kinds.add(String(want[0]));
  }
  assert.deepEqual([...kinds].sort(), ['-1', '0', '1'], 'every outcome exercised');
});
