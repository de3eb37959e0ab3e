// keepalived's SSL block → the clientCertificate of every SSL_GET (not HTTP_GET), and the config rules
// around it: https only, ca only with tlsVerify.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { healthPlan } from '../../daemon/director/plan.js';
import { importText } from './keepalived-memfs.js';

const CHECKS = `virtual_server 10.0.0.100 443 {
 real_server 10.0.1.1 443 {
  SSL_GET {
   url {
    path /health
   }
  }
 }
 real_server 10.0.1.2 443 {
  HTTP_GET {
   url {
    path /health
   }
  }
 }
}
`;

const why = (r: ReturnType<typeof importText>): string[] => r.diagnostics.map((d) => `${d.line} ${d.why}`);

test('import: the SSL block gives every SSL_GET its client certificate; HTTP_GET none; the ca is a note', () => {
  const r = importText(`SSL {\n password s3cret\n ca /etc/keepalived/ca.pem\n certificate /etc/keepalived/client.pem\n key /etc/keepalived/client.key\n}\n${CHECKS}`);
  assert.deepEqual(why(r), []);
  const [ssl, plain] = r.config.virtualServers?.[0]?.realServers ?? [];
  assert.deepEqual(ssl?.healthCheck?.http?.clientCertificate, { certificate: '/etc/keepalived/client.pem', key: '/etc/keepalived/client.key', password: 's3cret' });
  assert.equal(plain?.healthCheck?.http?.clientCertificate, undefined);
  assert.match(r.yaml, /SSL ca at .*:3: keepalived loads it but verifies no real server with it/);
  assert.match(r.yaml, /certificate: \/etc\/keepalived\/client\.pem # from \/etc\/keepalived\/keepalived\.conf:4/);
  const loaded = loadConfigText(r.yaml);
  if (!loaded.ok) assert.fail(loaded.errors.map(formatError).join('\n'));
  const target = healthPlan(loaded.config).targets.find((t) => t.address === '10.0.1.1');
  assert.deepEqual(target?.check.http?.clientCertificate, { certificate: '/etc/keepalived/client.pem', key: '/etc/keepalived/client.key', password: 's3cret' });
});

test('import: a later SSL block replaces an earlier one; a certificate without a key is not carried over', () => {
  const two = importText(`SSL {\n certificate /a.pem\n key /a.key\n}\nSSL {\n certificate /b.pem\n key /b.key\n}\n${CHECKS}`);
  assert.match(why(two).join('\n'), /^1 a later SSL block replaces this one/m);
  assert.equal(two.config.virtualServers?.[0]?.realServers[0]?.healthCheck?.http?.clientCertificate?.certificate, '/b.pem');
  const half = importText(`SSL {\n certificate /a.pem\n}\n${CHECKS}`);
  assert.match(why(half).join('\n'), /certificate without a key: lvsd needs both/);
  assert.equal(half.config.virtualServers?.[0]?.realServers[0]?.healthCheck?.http?.clientCertificate, undefined);
  const unknown = importText(`SSL {\n certificate /a.pem\n key /a.key\n cipher HIGH\n}\n${CHECKS}`);
  assert.match(why(unknown).join('\n'), /^4 not supported in SSL/m, 'an unknown keyword in the SSL block is reported at its line');
});

const CFG = (http: string, type = 'https') => `virtualServers:
  - address: 192.0.2.10
    port: 443
    healthCheck: { type: ${type}, http: ${http} }
    realServers: [{ address: 10.0.1.11 }]
`;

test('config: clientCertificate and ca are for https; ca needs tlsVerify; the password is not shown in errors', () => {
  assert.ok(loadConfigText(CFG('{ clientCertificate: { certificate: /c.pem, key: /c.key, password: pw } }')).ok);
  assert.ok(loadConfigText(CFG('{ tlsVerify: true, ca: /ca.pem }')).ok);
  const plain = loadConfigText(CFG('{ clientCertificate: { certificate: /c.pem, key: /c.key } }', 'http'));
  assert.ok(!plain.ok);
  assert.match(plain.errors.map(formatError).join('\n'), /http\.clientCertificate.*for https checks, not http/);
  const ca = loadConfigText(CFG('{ ca: /ca.pem }'));
  assert.ok(!ca.ok);
  assert.match(ca.errors.map(formatError).join('\n'), /http\.ca.*only with tlsVerify: true/);
  const bad = loadConfigText(CFG('{ clientCertificate: { certificate: /c.pem, key: /c.key, password: 12345678 } }'));
  assert.ok(!bad.ok);
  assert.equal(bad.errors.map(formatError).join('\n').includes('12345678'), false, 'a secret shown in an error');
});
