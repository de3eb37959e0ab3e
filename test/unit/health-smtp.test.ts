// The SMTP checker (keepalived SMTP_CHECK): the reply reader on its own (single and multi-line
// replies, garbage), then the probe against small SMTP-speaking servers on loopback: a good dialog,
// a multi-line banner, a 554 banner, a refused HELO, silence, a close mid-dialog, a bad HELO name.
// Against a real Debian SMTP server: test/netns/health-smtp.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { readReply, SmtpProtocolError } from '../../daemon/health/checkers/smtp-reply.js';
import { CHECK_DEFAULTS, HealthOptionError, type CheckOptions } from '../../daemon/health/options.js';
import type { CheckVerdict } from '../../daemon/health/types.js';
import { freePort, LoopbackServers, runProbe } from '../support/loopback-servers.js';
import { polite, smtpServer as scripted } from '../support/smtp-script.js';

const servers = new LoopbackServers();
after(() => {
  servers.closeAll();
});

test('smtp replies: one line, several lines, incomplete, garbage', () => {
  assert.deepEqual(readReply(Buffer.from('220 mail.example ESMTP\r\n')), { code: 220, text: 'mail.example ESMTP', consumed: 24 });
  assert.deepEqual(readReply(Buffer.from('220-mail.example\r\n220-second\r\n220 last\r\nrest')), { code: 220, text: 'mail.example / second / last', consumed: 40 });
  assert.equal(readReply(Buffer.from('220-mail.example\r\n220 la')), null);
  assert.equal(readReply(Buffer.from('220 no newline yet')), null);
  assert.deepEqual(readReply(Buffer.from('554\r\n')), { code: 554, text: '', consumed: 5 });
  assert.throws(() => readReply(Buffer.from('HTTP/1.1 200 OK\r\n')), SmtpProtocolError);
  assert.throws(() => readReply(Buffer.from('220-a\r\n250 b\r\n')), /codes 220 and 250/);
});

function smtp(port: number, o: Partial<CheckOptions> = {}): Promise<CheckVerdict> {
  const c: CheckOptions = { ...CHECK_DEFAULTS, type: 'smtp', timeoutMs: 1500, smtp: { helo: 'lvsd.test' }, ...o };
  return runProbe(buildProbe('mail/127.0.0.1', '127.0.0.1', port, c), c.timeoutMs);
}

test('smtp check: banner 220, HELO 250, QUIT; the dialog is exactly HELO then QUIT', async () => {
  const heard: string[] = [];
  const v = await smtp(await scripted(servers, '220 mail.lvsd.test ESMTP\r\n', polite, heard));
  assert.deepEqual([v.ok, v.reason, v.detail], [true, 'ok', '220 mail.lvsd.test ESMTP']);
  assert.deepEqual(heard, ['HELO lvsd.test', 'QUIT']);
  // A multi-line banner and a multi-line HELO answer, each in pieces.
  const port = await servers.listen((s) => {
    s.write('220-mail.lvsd.test\r\n2');
    setTimeout(() => s.write('20 ready\r\n'), 20);
    s.on('data', (d: Buffer) => {
      if (d.toString().startsWith('HELO')) s.write('250-mail.lvsd.test\r\n250-PIPELINING\r\n250 8BITMIME\r\n');
      else s.end('221 bye\r\n');
    });
  });
  const multi = await smtp(port);
  assert.deepEqual([multi.ok, multi.detail], [true, '220 mail.lvsd.test / ready']);
});

test('smtp check: a 554 banner is down (the port is open: a tcp check would pass)', async () => {
  const heard: string[] = [];
  const port = await scripted(servers, '554 5.7.1 no service for you\r\n', polite, heard);
  const v = await smtp(port);
  assert.deepEqual([v.ok, v.reason, v.detail], [false, 'status', 'banner 554 5.7.1 no service for you']);
  assert.deepEqual(heard, [], 'nothing is said to a server that refused service');
  const tcp = await runProbe(buildProbe('mail/127.0.0.1', '127.0.0.1', port, { ...CHECK_DEFAULTS, type: 'tcp', timeoutMs: 1500 }), 1500);
  assert.equal(tcp.ok, true);
});

test('smtp check: HELO refused, silence, a close mid-dialog, garbage, nothing listening', async () => {
  const refused = await smtp(await scripted(servers, '220 ok\r\n', (l) => (l.startsWith('HELO') ? '501 bad HELO\r\n' : '221 bye\r\n')));
  assert.deepEqual([refused.ok, refused.reason, refused.detail], [false, 'status', 'HELO answered 501 bad HELO']);
  const silent = await smtp(await scripted(servers, null, polite), { timeoutMs: 300 });
  assert.deepEqual([silent.ok, silent.reason], [false, 'timeout']);
  const hangup = await smtp(await scripted(servers, '220 ok\r\n', () => null));
  assert.deepEqual([hangup.ok, hangup.reason], [false, 'reset']);
  const http = await smtp(await servers.listen((s) => s.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
  assert.deepEqual([http.ok, http.reason], [false, 'protocol']);
  const nobody = await smtp(await freePort());
  assert.deepEqual([nobody.ok, nobody.reason], [false, 'refused']);
  // The server side sees each close a moment later.
  for (let i = 0; i < 100 && servers.connections.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(servers.connections.size, 0, 'every connection closed');
});

test('smtp check: a HELO name with blanks is an option error naming the field', () => {
  assert.throws(
    () => buildProbe('mail/127.0.0.1', '127.0.0.1', 25, { ...CHECK_DEFAULTS, type: 'smtp', timeoutMs: 1000, smtp: { helo: 'two words' } }),
    (e: unknown) => e instanceof HealthOptionError && e.field === 'smtp.helo',
  );
});
