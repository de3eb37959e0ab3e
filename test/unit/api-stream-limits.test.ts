// Event streams are bounded per session and in all (routes/stream.ts: STREAM_LIMITS): one session opening
// streams without end used to hold a socket, a subscription and up to 1 MiB of backlog for each. Past the
// bound: 429 (this session) or 503 (the server) with a message saying why, and a stream that ends — the
// client went away — frees its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest, type IncomingMessage } from 'node:http';
import { harness } from '../support/api-harness.js';

interface Opened { status: number; body: string; req: ClientRequest; res: IncomingMessage }

/** Opens the stream; resolves at the headers (200) or with the whole error body. */
function open(url: string, cookie: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { cookie, accept: 'text/event-stream' } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200) {
        resolve({ status, body: '', req, res });
        return;
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => { resolve({ status, body, req, res }); });
    });
    req.on('error', (e) => { if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e); });
    req.end();
  });
}

/** Opens until one is refused (at most `tries`), to wait out a close the server has not seen yet. */
async function openOnceFree(url: string, cookie: string, tries = 50): Promise<Opened> {
  for (let i = 0; ; i++) {
    const o = await open(url, cookie);
    if (o.status === 200 || i >= tries) return o;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('streams: 429 past the session\'s bound, 503 past the server\'s, and a client that goes frees its place', async (t) => {
  const h = await harness({ streamLimits: { perSession: 2, total: 3 } });
  const opened: Opened[] = [];
  t.after(async () => {
    for (const o of opened) o.req.destroy();
    await h.close();
  });
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/api/v1/events/stream`;
  const alice = (await h.login('viewer')).cookie;
  const bob = (await h.login('operator')).cookie;

  for (let i = 0; i < 2; i++) {
    const o = await open(url, alice);
    opened.push(o);
    assert.equal(o.status, 200);
  }
  const third = await open(url, alice);
  assert.equal(third.status, 429);
  assert.match((JSON.parse(third.body) as { message: string }).message, /^this session has 2 event streams open, the most one session may have; close one/);

  // another session still gets one, up to the server's bound
  const b1 = await open(url, bob);
  opened.push(b1);
  assert.equal(b1.status, 200);
  const b2 = await open(url, bob);
  assert.equal(b2.status, 503);
  assert.match((JSON.parse(b2.body) as { message: string }).message, /^lvsd serves 3 event streams, the most it serves at once/);

  // alice closes a tab: her place (and the server's) is free again
  opened[0]?.req.destroy();
  const again = await openOnceFree(url, alice);
  opened.push(again);
  assert.equal(again.status, 200);
  assert.equal((await open(url, alice)).status, 429);
  // bob's 503 was a refusal, not a stream: nothing of his was counted
  opened[2]?.req.destroy();
  const b3 = await openOnceFree(url, bob);
  opened.push(b3);
  assert.equal(b3.status, 200);
});

test('a stream ended by logout frees its place too', async (t) => {
  const h = await harness({ streamLimits: { perSession: 1, total: 10 } });
  t.after(() => h.close());
  const address = await h.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `${address}/api/v1/events/stream`;
  const first = await h.login('viewer');
  const s = await open(url, first.cookie);
  assert.equal(s.status, 200);
  const ended = new Promise<void>((r) => { s.res.once('close', r); s.res.resume(); });
  assert.equal((await h.call(first, 'DELETE', '/api/v1/session')).statusCode, 204);
  await ended;
  // a new session of the same user opens its own, and the server counts no ghost
  const second = await h.login('viewer');
  const s2 = await open(url, second.cookie);
  assert.equal(s2.status, 200);
  s2.req.destroy();
});
