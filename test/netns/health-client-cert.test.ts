// Checker options against real servers in namespaces: an https check with a client certificate against
// Debian nginx that requires one (ssl_verify_client on, keepalived's SSL block use case), and UDP_CHECK's
// reply-length bounds against a UDP echo. The monitor runs in the client namespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Topology } from '../support/netns.js';
import { startNginx, waitForPort, type NginxHandle } from '../support/nginx.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { HealthTarget } from '../../daemon/health/monitor.js';
import { MonitorDriver, clientCertificate, fixturePath, selfSignedCert, tempDir } from '../fixtures/health/harness.js';

const PASSWORD = 'nginx-wants-a-cert';

function check(type: CheckOptions['type'], o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type, intervalMs: 250, timeoutMs: 1000, rise: 1, fall: 1, alpha: true, ...o };
}

test('https with a client certificate against nginx ssl_verify_client; udp reply bounds against an echo', async (t) => {
  requireRoot();
  requireCommands('ip', 'nginx', 'openssl');
  const topo = await Topology.create('hcc');
  const tmp = tempDir('cc');
  const held: { nginx?: NginxHandle; driver?: MonitorDriver } = {};
  t.after(async () => {
    held.driver?.stop();
    await held.nginx?.stop();
    topo.destroy();
    tmp.cleanup();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.78.0.1/24'] });
  const web = await topo.addHost({ name: 'web', addresses: ['10.78.0.11/24'] });
  const server = selfSignedCert(tmp.dir, 'web.lvsd.test');
  const trusted = clientCertificate(tmp.dir, 'trusted', PASSWORD);
  const stranger = clientCertificate(tmp.dir, 'stranger', PASSWORD);
  held.nginx = await startNginx(web, {
    tls: { port: 443, cert: server.cert, key: server.key },
    extraServerConfig: `ssl_verify_client on; ssl_client_certificate ${trusted.ca}; location = /check { default_type text/plain; return 200 "healthy $ssl_client_s_dn\\n"; }`,
  });
  await waitForPort(web, 443);
  const echo = web.spawn(process.execPath, [fixturePath('udp-echo.js'), '10.78.0.11', '7']);
  await new Promise<void>((resolve) => echo.stdout?.once('data', () => { resolve(); }));

  const http = { path: '/check', bodyRegex: '^healthy CN=trusted-client' };
  const at = { service: 'web', address: '10.78.0.11', weight: 1 };
  const targets: HealthTarget[] = [
    { ...at, id: 'cert', port: 443, check: check('https', { http: { ...http, clientCertificate: { certificate: trusted.cert, key: trusted.key, password: PASSWORD } } }) },
    { ...at, id: 'no-cert', port: 443, check: check('https', { http }) },
    { ...at, id: 'stranger', port: 443, check: check('https', { http: { ...http, clientCertificate: { certificate: stranger.cert, key: stranger.key, password: PASSWORD } } }) },
    { ...at, id: 'udp-fits', port: 7, check: check('udp', { udp: { payload: '6c767364', expect: { regex: '^lvsd' }, minReplyLength: 4, maxReplyLength: 4 } }) },
    { ...at, id: 'udp-too-long', port: 7, check: check('udp', { udp: { payload: '6c767364', expect: { regex: '^lvsd' }, maxReplyLength: 3 } }) },
    { ...at, id: 'udp-too-short', port: 7, check: check('udp', { udp: { payload: '6c767364', expect: { regex: '^lvsd' }, minReplyLength: 5 } }) },
  ];
  const driver = await MonitorDriver.start(client);
  held.driver = driver;
  const rec = await driver.reconcile([], targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  await driver.transition('cert', 'up', 10_000, 0);
  await driver.transition('udp-fits', 'up', 10_000, 0);
  // alpha: the failing ones start down and stay there; wait for each one's first verdict.
  const failing = ['no-cert', 'stranger', 'udp-too-long', 'udp-too-short'];
  let snap = await driver.snapshot();
  for (const deadline = Date.now() + 10_000; failing.some((id) => snap.targets.find((x) => x.id === id)?.last === undefined);) {
    if (Date.now() > deadline) assert.fail(`no verdict yet: ${JSON.stringify(snap.targets)}`);
    await new Promise((r) => setTimeout(r, 100));
    snap = await driver.snapshot();
  }
  const last = (id: string): string => {
    const s = snap.targets.find((x) => x.id === id);
    return `${s?.state ?? '?'} ${s?.last?.reason ?? '?'} ${s?.last?.detail ?? '?'}`;
  };
  assert.equal(last('cert'), 'up ok ok');
  // nginx answers a missing or untrusted client certificate with 400, as keepalived's SSL_GET would see it.
  assert.match(last('no-cert'), /^down status status 400$/);
  assert.match(last('stranger'), /^down status status 400$/);
  assert.match(last('udp-too-long'), /^down answer-mismatch reply of 4 bytes, longer than maxReplyLength 3$/);
  assert.match(last('udp-too-short'), /^down answer-mismatch reply of 4 bytes, shorter than minReplyLength 5$/);
});
