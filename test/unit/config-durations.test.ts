// Every duration ends up in a timer, and Node fires a timer longer than 2^31-1 ms after 1 ms (a warning, no
// error): `drainTimeout: 30d` deleted a draining real server at once, a check `interval: 1000000000` ran every
// millisecond. A duration over 24 days is refused where it is written; 24 days is accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { MAX_DURATION_MS, parseDuration } from '../../daemon/config/formats.js';

const config = (drain: string): string => `node:\n  name: lb1\nipvs:\n  drainTimeout: ${drain}\n`;

test('a duration longer than 24 days, as text or as seconds, is refused at FILE:LINE:COL', () => {
  for (const v of ['30d', '25d', '99999999999999999999s', '2073600001ms', '3000000', '1e400']) {
    const r = loadConfigText(config(v), 'lvsd.yaml');
    assert.ok(!r.ok, v);
    assert.deepEqual(r.errors.map(formatError).map((e) => e.replace(/, got .*$/, '')), ['lvsd.yaml:4:17: ipvs.drainTimeout: must be a duration like "250ms", "1s", "1.5s", "2m" or a number of seconds, at most 24d'], v);
  }
});

test('24 days, however written, is accepted and below what a Node timer can wait', () => {
  for (const v of ['24d', '576h', '2073600', '2073600000ms']) {
    const r = loadConfigText(config(v), 'lvsd.yaml');
    assert.ok(r.ok, `${v}: ${r.ok ? '' : r.errors.map(formatError).join('\n')}`);
    assert.equal(r.config.ipvs.drainTimeoutMs, MAX_DURATION_MS);
  }
  assert.ok(MAX_DURATION_MS <= 2 ** 31 - 1);
  assert.equal(parseDuration('24d'), MAX_DURATION_MS);
});

test('IPVS timeouts (kept by the kernel, no Node timer) go to keepalived\'s 31 days, and no further', () => {
  const ipvs = (v: string): string => `node:\n  name: lb1\nipvs:\n  timeouts:\n    tcp: ${v}\n`;
  const ok = loadConfigText(ipvs('31d'), 'lvsd.yaml');
  assert.ok(ok.ok, ok.ok ? '' : ok.errors.map(formatError).join('\n'));
  assert.equal(ok.config.ipvs.timeouts.tcpMs, 31 * 86_400_000);
  const bad = loadConfigText(ipvs('2678401'), 'lvsd.yaml');
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors.map(formatError).map((e) => e.replace(/, got .*$/, '')), ['lvsd.yaml:5:10: ipvs.timeouts.tcp: must be a duration like "250ms", "1s", "1.5s", "2m" or a number of seconds, at most 31d']);
  const persistent = (v: string): string => `node:\n  name: lb1\nvirtualServers:\n  - name: web\n    address: 192.0.2.1\n    port: 80\n    persistence:\n      timeout: ${v}\n    realServers:\n      - address: 10.0.0.1\n`;
  assert.ok(loadConfigText(persistent('31d'), 'lvsd.yaml').ok);
  assert.ok(!loadConfigText(persistent('32d'), 'lvsd.yaml').ok);
});
