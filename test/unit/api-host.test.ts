// The Host allow-list against DNS rebinding (issue 17, item 7), over a real loopback listener: the
// browser of a rebinding attack sends the attacker's name as Host, with a matching Origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { harness } from '../support/api-harness.js';
import { hostAllowed, hostOf } from '../../daemon/api/plugins/host-check.js';

function get(base: string, path: string, host: string, extra: { method?: string; body?: string; origin?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host };
    if (extra.origin !== undefined) headers.origin = extra.origin;
    if (extra.body !== undefined) headers['content-type'] = 'application/json';
    const req = request(`${base}${path}`, { method: extra.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }); });
    });
    req.on('error', reject);
    req.end(extra.body);
  });
}

test('a loopback panel refuses a foreign Host before anything runs; its own names pass', async (t) => {
  const h = await harness();
  t.after(() => h.close());
  const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const port = new URL(base).port;
  for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.:${port}x`, 'user@localhost']) {
    const r = await get(base, '/api/v1/bootstrap', host);
    assert.equal(r.status, 403, host);
    assert.match((JSON.parse(r.body) as { message: string }).message, /is not a name of this panel \(a DNS rebinding guard\)/);
  }
  // the rebinding attack itself: same-origin from the browser's point of view, so the Origin check passes
  const attack = await get(base, '/api/v1/session', `evil.example:${port}`, { method: 'POST', origin: `http://evil.example:${port}`, body: JSON.stringify({ name: 'admin', password: 'admin password' }) });
  assert.equal(attack.status, 403);
  assert.doesNotMatch(attack.body, /csrfToken/);
  for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`, '127.0.0.1']) {
    assert.equal((await get(base, '/api/v1/bootstrap', host)).status, 200, host);
  }
  const login = await get(base, '/api/v1/session', `127.0.0.1:${port}`, { method: 'POST', origin: `http://127.0.0.1:${port}`, body: JSON.stringify({ name: 'admin', password: 'admin password' }) });
  assert.equal(login.status, 200);
});

test('allowedHosts adds names; the address a request arrived on is always one', async (t) => {
  const h = await harness({ allowedHosts: ['lvs1.example.net'] });
  t.after(() => h.close());
  const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const port = new URL(base).port;
  assert.equal((await get(base, '/api/v1/bootstrap', `lvs1.example.net:${port}`)).status, 200);
  assert.equal((await get(base, '/api/v1/bootstrap', `LVS1.example.net.:${port}`)).status, 200, 'case and a trailing dot do not matter');
  assert.equal((await get(base, '/api/v1/bootstrap', `lvs2.example.net:${port}`)).status, 403);
});

test('hostAllowed: loopback is guarded, beyond loopback only with a list', () => {
  assert.equal(hostOf('[::1]:9180'), '::1');
  assert.equal(hostOf('Example.COM.'), 'example.com');
  assert.equal(hostOf('a b'), null);
  const rows: [string | undefined, string | undefined, string[], boolean][] = [
    ['evil.example', '127.0.0.1', [], false],
    ['evil.example', '::ffff:127.0.0.1', [], false],
    ['evil.example', '::1', [], false],
    ['evil.example', undefined, [], false],
    ['[::1]:80', '::1', [], true],
    ['127.0.0.2:9180', '127.0.0.2', [], true],
    ['127.0.0.3:9180', '127.0.0.2', [], false],
    [undefined, '127.0.0.1', [], true],
    ['lvs1.example.net', '192.0.2.10', [], true],
    ['evil.example', '192.0.2.10', ['lvs1.example.net'], false],
    ['192.0.2.10:9180', '192.0.2.10', ['lvs1.example.net'], true],
    ['lvs1.example.net:9180', '192.0.2.10', ['lvs1.example.net'], true],
  ];
  for (const [header, local, list, want] of rows) assert.equal(hostAllowed(header, local, list), want, `${String(header)} on ${String(local)} with [${list.join(', ')}]`);
});
