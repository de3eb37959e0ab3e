import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, instanceLogger, realServerLogger, virtualServerLogger, REDACTED } from '../../daemon/log.js';

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('JSON lines with level label, time and message', () => {
  const c = capture();
  const log = createLogger({ destination: c.stream, base: { node: 'd1' } });
  log.info({ dataplane: 'ipvs' }, 'dataplane chosen');
  const [line] = c.lines();
  assert.ok(line);
  assert.equal(line.level, 'info');
  assert.equal(line.msg, 'dataplane chosen');
  assert.equal(line.node, 'd1');
  assert.equal(line.dataplane, 'ipvs');
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
});

test('child loggers carry the object names', () => {
  const c = capture();
  const log = createLogger({ destination: c.stream });
  instanceLogger(log, 'VI_1').info('MASTER');
  virtualServerLogger(log, 'web').warn('quorum lost');
  realServerLogger(log, 'web', '10.0.1.11:80').info('up');
  const [a, b, r] = c.lines();
  assert.equal(a?.instance, 'VI_1');
  assert.equal(b?.virtualServer, 'web');
  assert.equal(b.level, 'warn');
  assert.deepEqual([r?.virtualServer, r?.realServer], ['web', '10.0.1.11:80']);
});

test('secrets are redacted wherever they are logged', () => {
  const c = capture();
  const log = createLogger({ destination: c.stream });
  log.info({ password: 'secret12', user: { token: 'tok-abc' }, req: { headers: { authorization: 'Bearer xyz', cookie: 'sid=1' } } }, 'login');
  log.info({ config: { vrrp: { instances: [{ name: 'VI_1', authentication: { type: 'PASS', password: 'secret12' } }] } } }, 'loaded');
  instanceLogger(log, 'VI_1').info({ authentication: { type: 'PASS', password: 'secret12' } }, 'auth');
  const text = JSON.stringify(c.lines());
  assert.ok(!text.includes('secret12'), text);
  assert.ok(!text.includes('tok-abc'));
  assert.ok(!text.includes('Bearer xyz'));
  assert.ok(!text.includes('sid=1'));
  assert.ok(text.includes(REDACTED));
  assert.ok(text.includes('"name":"VI_1"'));
});

test('level filters', () => {
  const c = capture();
  const log = createLogger({ destination: c.stream, level: 'warn' });
  log.info('hidden');
  log.error('shown');
  assert.deepEqual(c.lines().map((l) => l.msg), ['shown']);
});
