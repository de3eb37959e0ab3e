// Every checker against real servers in namespaces: Debian nginx (HTTP and HTTPS with a self-signed
// certificate made here), dnsmasq for DNS (over UDP, over TCP, and a truncated UDP answer asked again
// over TCP) and a UDP echo. The monitor runs in the client namespace
// (test/fixtures/health/driver.ts). Each failure mode is produced for real — nginx answering 503, the
// wrong body or nothing at all (limit_rate 1), nft dropping packets, nginx/dnsmasq/echo stopped, a
// certificate that does not verify — and each detection is timed against interval × fall + timeout.
// The scenario runs twice: with the native probe engine (TCP and plain-HTTP checks in C) and with
// LVSD_HEALTH_NATIVE=0 (every check in the JS checkers): both must give the same verdicts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Topology } from '../support/netns.js';
import { startNginx, waitForPort, type NginxHandle } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { HealthTarget } from '../../daemon/health/monitor.js';
import { MonitorDriver, dropTcp, fixturePath, selfSignedCert, switchMode, tempDir, writeMode } from '../fixtures/health/harness.js';

const INTERVAL = 250;
const TIMEOUT = 300;
const FALL = 2;
const RISE = 2;
/** The bound, plus slack for a shared 2-core machine. */
const BOUND = INTERVAL * FALL + TIMEOUT;
const SLACK = 1_500;
/** A TXT record too big for a 512-byte UDP answer. */
const BIG_TXT = ['a', 'b', 'c'].map((c) => c.repeat(200));

function check(type: CheckOptions['type'], o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type, intervalMs: INTERVAL, timeoutMs: TIMEOUT, rise: RISE, fall: FALL, alpha: true, ...o };
}

for (const native of [true, false]) {
  test(`checkers against real nginx, dnsmasq and a UDP echo: up, and every way down (${native ? 'native probe engine' : 'JS checkers only'})`, async (t) => {
    await scenario(t, native);
  });
}

async function scenario(t: TestContext, native: boolean): Promise<void> {
  requireRoot();
  requireCommands('ip', 'nginx', 'nft', 'dnsmasq', 'openssl', 'curl');
  const topo = await Topology.create('hchk');
  const tmp = tempDir('chk');
  const drivers: MonitorDriver[] = [];
  const nginxes: NginxHandle[] = [];
  t.after(async () => {
    for (const x of drivers) x.stop();
    for (const n of nginxes) await n.stop();
    topo.destroy();
    tmp.cleanup();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.77.0.1/24', 'fd77::1/64'] });
  const web = await topo.addHost({ name: 'web', addresses: ['10.77.0.11/24', 'fd77::11/64'] });
  const svc = await topo.addHost({ name: 'svc', addresses: ['10.77.0.12/24'] });
  // Five UDP checks at 4/s each to one host: the kernel's per-peer ICMP rate limit (1/s) would turn
  // some port-unreachables into silence, i.e. timeouts instead of "refused", once dnsmasq is stopped.
  await svc.exec('sysctl', ['-qw', 'net.ipv4.icmp_ratelimit=0']);

  const { cert } = selfSignedCert(tmp.dir, 'web.lvsd.test');
  const modeFile = join(tmp.dir, 'mode.conf');
  writeMode(modeFile, 'ok');
  const nginx = await startNginx(web, {
    extraServerConfig: `include ${modeFile};`,
    tls: { port: 443, cert, key: cert.replace(/\.crt$/, '.key') },
  });
  nginxes.push(nginx);
  await waitForPort(web, 443);
  const dnsmasq = svc.spawn('dnsmasq', [
    '--keep-in-foreground', '--no-resolv', '--no-hosts', '--no-daemon', '--conf-file=/dev/null', '--user=root',
    '--bind-interfaces', '--listen-address=10.77.0.12', '--port=53', '--local=/lvsd.test/',
    '--address=/www.lvsd.test/10.77.0.80', `--pid-file=${join(tmp.dir, 'dnsmasq.pid')}`,
    // Three 200-byte strings: more than a plain (non-EDNS) UDP answer may hold, so it comes back truncated.
    `--txt-record=big.lvsd.test,${BIG_TXT.join(',')}`,
    // Its own process group: dnsmasq forks a child per TCP query, which holds the UDP socket too.
  ], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const echo = svc.spawn(process.execPath, [fixturePath('udp-echo.js'), '10.77.0.12', '7']);
  await new Promise<void>((resolve) => echo.stdout?.once('data', () => { resolve(); }));

  const http = { path: '/check', bodyRegex: '^healthy' };
  const targets: HealthTarget[] = [
    { id: 'tcp', service: 'web', address: '10.77.0.11', port: 80, weight: 1, check: check('tcp') },
    { id: 'http', service: 'web', address: '10.77.0.11', port: 80, weight: 1, check: check('http', { http }) },
    { id: 'https', service: 'web', address: '10.77.0.11', port: 443, weight: 1, check: check('https', { http }) },
    {
      id: 'https-verified', service: 'web', address: '10.77.0.11', port: 443, weight: 1,
      check: check('https', { http: { ...http, tlsVerify: true, ca: cert, host: 'web.lvsd.test' } }),
    },
    {
      id: 'https-wrong-name', service: 'bad', address: '10.77.0.11', port: 443, weight: 1,
      check: check('https', { http: { ...http, tlsVerify: true, ca: cert, sni: 'other.lvsd.test' } }),
    },
    { id: 'https-untrusted', service: 'bad', address: '10.77.0.11', port: 443, weight: 1, check: check('https', { http: { ...http, tlsVerify: true } }) },
    {
      id: 'dns', service: 'dns', address: '10.77.0.12', port: 53, weight: 1,
      check: check('dns', { dns: { name: 'www.lvsd.test', type: 'A', expectAnswer: '10.77.0.80' } }),
    },
    { id: 'dns-nx', service: 'bad', address: '10.77.0.12', port: 53, weight: 1, check: check('dns', { dns: { name: 'nope.lvsd.test' } }) },
    {
      id: 'dns-tcp', service: 'dns', address: '10.77.0.12', port: 53, weight: 1,
      check: check('dns', { dns: { name: 'www.lvsd.test', type: 'A', expectAnswer: '10.77.0.80', protocol: 'tcp' } }),
    },
    { id: 'dns-tcp-nx', service: 'bad', address: '10.77.0.12', port: 53, weight: 1, check: check('dns', { dns: { name: 'nope.lvsd.test', protocol: 'tcp' } }) },
    {
      id: 'dns-truncated', service: 'dns', address: '10.77.0.12', port: 53, weight: 1,
      check: check('dns', { dns: { name: 'big.lvsd.test', type: 'TXT', expectAnswer: BIG_TXT.join('') } }),
    },
    {
      id: 'dns-truncated-kept', service: 'bad', address: '10.77.0.12', port: 53, weight: 1,
      check: check('dns', { dns: { name: 'big.lvsd.test', type: 'TXT', expectAnswer: BIG_TXT.join(''), tcpOnTruncation: false } }),
    },
    { id: 'udp', service: 'udp', address: '10.77.0.12', port: 7, weight: 1, check: check('udp', { udp: { payload: '6c767364', expect: { hex: '6c767364' } } }) },
    {
      id: 'http-digest', service: 'web', address: '10.77.0.11', port: 80, weight: 1,
      check: check('http', { http: { path: '/check', digest: createHash('md5').update('healthy\n').digest('hex') } }),
    },
    { id: 'http6', service: 'web', address: 'fd77::11', port: 80, weight: 1, check: check('http', { http }) },
    // Status-only HTTP beside the body checks above: the engine's fast path (no body read, no bytes to JS).
    { id: 'http-status', service: 'web', address: '10.77.0.11', port: 80, weight: 1, check: check('http', { http: { path: '/check' } }) },
    { id: 'http6-status', service: 'web', address: 'fd77::11', port: 80, weight: 1, check: check('http', { http: { path: '/check', status: ['200-204'] } }) },
    { id: 'tcp-bindto', service: 'web', address: '10.77.0.99', port: 1, weight: 1, check: check('tcp', { connectIp: '10.77.0.11', connectPort: 80, bindTo: '10.77.0.1' }) },
  ];
  const d = await MonitorDriver.start(client, native ? {} : { LVSD_HEALTH_NATIVE: '0' });
  drivers.push(d);
  const rec = await d.reconcile([], targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  // tcp, tcp-bindto, http, http6, http-digest (bodies: read by the engine, judged in JS), http-status,
  // http6-status: the checks the engine takes when it is built (TLS, DNS, UDP stay in JS).
  assert.equal(rec.nativeTargets, native ? 7 : 0, 'checks on the native engine');

  // alpha: every good target proves itself up within warmup + rise checks.
  for (const id of ['tcp', 'http', 'https', 'https-verified', 'http-digest', 'http6', 'dns', 'dns-tcp', 'dns-truncated', 'udp', 'tcp-bindto', 'http-status', 'http6-status']) {
    await d.transition(id, 'up', INTERVAL * (RISE + 1) + TIMEOUT + SLACK, 0);
  }
  const snap = await d.snapshot();
  const last = (id: string): string => {
    const t = snap.targets.find((x) => x.id === id);
    return `${t?.state ?? '?'} ${t?.last?.reason ?? '?'} ${t?.last?.detail ?? '?'}`;
  };
  assert.equal(last('https-wrong-name'), 'down tls ERR_TLS_CERT_ALTNAME_INVALID');
  assert.equal(last('https-untrusted'), 'down tls DEPTH_ZERO_SELF_SIGNED_CERT');
  assert.equal(last('dns-nx'), 'down rcode rcode NXDOMAIN');
  assert.equal(last('dns-tcp-nx'), 'down rcode rcode NXDOMAIN (tcp)');
  // Judged as it came, dnsmasq's truncated answer does not hold the record the TCP answer has.
  assert.match(last('dns-truncated-kept'), /^down (answer-mismatch|protocol) /);

  /** Breaks the server, waits for each target to go down with the reason, brings it back. */
  async function outage(
    what: string,
    ids: string[],
    reason: string,
    detail: RegExp,
    breakIt: () => Promise<void>,
    fixIt: () => Promise<void>,
  ): Promise<void> {
    const from = d.events.length;
    const brokeAt = Date.now();
    await breakIt();
    for (const id of ids) {
      const e = await d.transition(id, 'down', BOUND + SLACK + 2_000, from);
      assert.equal(e.reason, reason, `${what}: ${id} went down for ${e.reason} (${e.detail})`);
      assert.match(e.detail, detail, `${what}: ${id}`);
      const took = e.t - brokeAt;
      t.diagnostic(`${what}: ${id} down after ${took} ms (bound ${BOUND} ms + ${SLACK} ms slack)`);
      assert.ok(took <= BOUND + SLACK, `${what}: ${id} detected after ${took} ms, bound ${BOUND} + ${SLACK}`);
    }
    await fixIt();
    // A check that began before the fix can still answer the old way and take a slower target (http6,
    // out of phase with the rest) down after the fix: let those answers come in first.
    await new Promise((r) => setTimeout(r, INTERVAL + TIMEOUT));
    // Every target this outage took down (not only those asserted on) is back up before the next one.
    const downed = new Set(d.events.slice(from).flatMap((e) => (e.ev === 'transition' && e.to === 'down' ? [e.id] : [])));
    for (const id of downed) {
      const lastDown = d.events.findLastIndex((e) => e.ev === 'transition' && e.id === id && e.to === 'down');
      await d.transition(id, 'up', INTERVAL * RISE + TIMEOUT + SLACK, lastDown + 1);
    }
  }

  await outage('status 503', ['http', 'https', 'http-digest', 'http-status', 'http6-status'], 'status', /^status 503$/,
    () => switchMode(web, nginx.process, modeFile, 'status503'), () => switchMode(web, nginx.process, modeFile, 'ok'));
  // The md5 target must see the changed body too before nginx is fixed, or the window can close on it.
  await outage('body mismatch', ['http', 'https-verified', 'http6'], 'regex-mismatch', /does not match/,
    async () => {
      const from = d.events.length;
      await switchMode(web, nginx.process, modeFile, 'body');
      await d.transition('http-digest', 'down', BOUND + SLACK + 2_000, from);
    },
    () => switchMode(web, nginx.process, modeFile, 'ok'));
  const digestDowns = d.transitionsOf('http-digest').filter((e) => e.to === 'down').map((e) => e.reason);
  assert.deepEqual(digestDowns, ['status', 'digest-mismatch'], 'the md5 check saw the 503 and the body change');
  assert.equal(d.transitionsOf('http-status').length, 3, 'status-only http stayed up through the body change');
  await outage('slow responses', ['http', 'https', 'http-status'], 'timeout', /^no answer within 300 ms$/,
    () => switchMode(web, nginx.process, modeFile, 'slow'), () => switchMode(web, nginx.process, modeFile, 'ok'));
  assert.equal(d.transitionsOf('tcp').length, 1, 'tcp stayed up through HTTP-level failures');
  await outage('nft drop', ['tcp', 'http', 'tcp-bindto', 'http-status'], 'timeout', /^no answer within 300 ms$/,
    () => dropTcp(web, 80, true), () => dropTcp(web, 80, false));

  // Stopped servers answer with RST / ICMP port unreachable: "refused".
  const from = d.events.length;
  const stoppedAt = Date.now();
  await nginx.stop();
  if (dnsmasq.pid !== undefined) process.kill(-dnsmasq.pid, 'SIGKILL');
  echo.kill('SIGKILL');
  for (const id of ['tcp', 'http', 'https', 'dns', 'dns-tcp', 'udp', 'http-status', 'http6-status']) {
    const e = await d.transition(id, 'down', BOUND + SLACK + 2_000, from);
    assert.equal(e.reason, 'refused', `${id}: ${e.reason} ${e.detail}`);
    t.diagnostic(`stopped: ${id} down after ${e.t - stoppedAt} ms (bound ${BOUND} ms + ${SLACK} ms slack)`);
    assert.ok(e.t - stoppedAt <= BOUND + SLACK, `${id}: ${e.t - stoppedAt} ms`);
    assert.ok(e.inPreviousStateMs > 0);
  }
}
