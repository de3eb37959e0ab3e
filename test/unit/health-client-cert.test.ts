// SSL_GET's client certificate (keepalived's SSL block): an https check presents it to a real server that
// requires one (a real TLS server on loopback, certificates made by openssl), the key's password never shows
// in an error, and a certificate renewed on disk is presented at the next check without a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { CHECK_DEFAULTS, HealthOptionError, type CheckOptions } from '../../daemon/health/options.js';
import { runProbe } from '../support/loopback-servers.js';
import { RESTAT_MS, tlsClientContext } from '../../daemon/health/checkers/tls-context.js';
import { clientCertificate as clientCert, selfSignedCert } from '../fixtures/health/harness.js';

const PASSWORD = 'correct-horse-battery';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms + 50));

test('https check: presents keepalived\'s SSL client certificate; without it the server refuses; a renewed one is picked up', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-clientcert-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const server = selfSignedCert(dir, 'rs.example');
  const trusted = clientCert(dir, 'trusted', PASSWORD);
  const other = clientCert(dir, 'other', PASSWORD);
  const peers: string[] = [];
  const tls = createServer({ key: readFileSync(server.key), cert: readFileSync(server.cert), ca: readFileSync(trusted.ca), requestCert: true, rejectUnauthorized: true }, (s: TLSSocket) => {
    peers.push(String(s.getPeerCertificate().subject.CN));
    s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
  });
  tls.on('tlsClientError', () => undefined); // the refused handshakes
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  t.after(() => tls.close());
  const port = (tls.address() as { port: number }).port;
  // The check's own copies: renewing them on disk is what an operator does.
  const cert = join(dir, 'check.crt');
  const key = join(dir, 'check.key');
  copyFileSync(trusted.cert, cert);
  copyFileSync(trusted.key, key);
  const opts = (http: CheckOptions['http']): CheckOptions => ({ ...CHECK_DEFAULTS, type: 'https', timeoutMs: 3000, http });
  const check = (o: CheckOptions) => runProbe(buildProbe('rs', '127.0.0.1', port, o), o.timeoutMs);

  const without = await check(opts({}));
  assert.notEqual(without.reason, 'ok', 'a server requiring a client certificate refuses a check without one');
  const withCert = opts({ clientCertificate: { certificate: cert, key, password: PASSWORD } });
  const probe = buildProbe('rs', '127.0.0.1', port, withCert);
  assert.equal((await runProbe(probe, 3000)).reason, 'ok');
  assert.deepEqual(peers, ['trusted-client']);

  // Renewed on disk with a certificate this server does not trust: the same probe presents it next time.
  copyFileSync(other.cert, cert);
  copyFileSync(other.key, key);
  const later = new Date(Date.now() + 5000);
  utimesSync(cert, later, later);
  utimesSync(key, later, later);
  await sleep(RESTAT_MS); // the files are looked at once a second at most
  assert.notEqual((await runProbe(probe, 3000)).reason, 'ok', 'the renewed (untrusted) certificate was not presented');
  copyFileSync(trusted.cert, cert);
  copyFileSync(trusted.key, key);
  const later2 = new Date(Date.now() + 10_000);
  utimesSync(cert, later2, later2);
  utimesSync(key, later2, later2);
  await sleep(RESTAT_MS);
  assert.equal((await runProbe(probe, 3000)).reason, 'ok');
  assert.deepEqual(peers, ['trusted-client', 'trusted-client']);

  // A key file gone at check time: a failed check that names the field, not a crash.
  rmSync(key);
  await sleep(RESTAT_MS);
  const gone = await runProbe(probe, 3000);
  assert.equal(gone.reason, 'tls');
  assert.match(gone.detail, /clientCertificate\.key: cannot read .*ENOENT/);
});

test('https check: a wrong key password or a missing file is a bad option naming the field, without the password', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-clientcert-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const c = clientCert(dir, 'x', PASSWORD);
  const build = (cc: NonNullable<NonNullable<CheckOptions['http']>['clientCertificate']>) => () =>
    buildProbe('tcp:192.0.2.1:443/10.0.1.1:443', '10.0.1.1', 443, { ...CHECK_DEFAULTS, type: 'https', http: { clientCertificate: cc } });
  const wrong = 'not-the-password-42';
  assert.throws(build({ certificate: c.cert, key: c.key, password: wrong }), (e: unknown) => {
    assert.ok(e instanceof HealthOptionError);
    assert.equal(e.field, 'http.clientCertificate');
    assert.equal(e.message.includes(wrong), false, 'the password is in the error');
    return true;
  });
  assert.throws(build({ certificate: join(dir, 'nope.crt'), key: c.key, password: PASSWORD }), /healthCheck\.http\.clientCertificate\.certificate: cannot read .*nope\.crt: ENOENT/);
  // a FIFO nobody writes to: readFileSync blocked the event loop (every check, the API) for ever
  const fifo = join(dir, 'fifo.key');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  assert.throws(build({ certificate: c.cert, key: fifo, password: PASSWORD }), /healthCheck\.http\.clientCertificate\.key: cannot read .*fifo\.key: a pipe with no writer: nothing to read/);
  assert.doesNotThrow(build({ certificate: c.cert, key: c.key, password: PASSWORD }));
});

test('tls context: the files are looked at once a second at most; a new config check looks at once', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-clientcert-'));
  t.after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const a = clientCert(dir, 'a', PASSWORD);
  const b = clientCert(dir, 'b', PASSWORD);
  const cert = join(dir, 'c.crt');
  const key = join(dir, 'c.key');
  copyFileSync(a.cert, cert);
  copyFileSync(a.key, key);
  const files = { clientCertificate: { certificate: cert, key, password: PASSWORD } };
  const first = tlsClientContext(files, { now: 0 });
  copyFileSync(b.cert, cert);
  copyFileSync(b.key, key);
  const later = new Date(Date.now() + 5000);
  utimesSync(cert, later, later);
  utimesSync(key, later, later);
  assert.equal(tlsClientContext(files, { now: RESTAT_MS - 1 }), first, 'looked at the files again within the second');
  const renewed = tlsClientContext(files, { now: RESTAT_MS });
  assert.notEqual(renewed, first, 'a renewed certificate not noticed after a second');
  rmSync(key);
  assert.equal(tlsClientContext(files, { now: RESTAT_MS + 1 }), renewed);
  assert.throws(() => tlsClientContext(files, { now: RESTAT_MS + 2, fresh: true }), /clientCertificate\.key: cannot read .*ENOENT/);
});
