// A cluster peer that answers badly, from a real HTTP server on loopback: each answer ends as a failed read
// with the reason, within the cluster timeout, and nothing throws.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchPeer } from '../../daemon/api/cluster/peer-client.js';

const dir = mkdtempSync(join(tmpdir(), 'lvsd-peer-'));
const tokenFile = join(dir, 'token');
writeFileSync(tokenFile, 'secret\n');
const closers: (() => void)[] = [];
after(() => {
  for (const c of closers) c();
  rmSync(dir, { recursive: true });
});

async function peer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => { server.closeAllConnections(); }, () => { server.close(); });
  const a = server.address();
  return `http://127.0.0.1:${typeof a === 'object' && a !== null ? a.port : 0}`;
}

async function read(handler: (req: IncomingMessage, res: ServerResponse) => void, timeoutMs = 3000): Promise<string> {
  const url = await peer(handler);
  const a = await fetchPeer({ name: 'lb2', url, tokenFile, acceptActions: false }, timeoutMs);
  assert.ok(!a.ok);
  return a.error;
}

test('cluster peer: malformed JSON, the wrong shape, a redirect, a huge error body, deep nesting, a trickle', async () => {
  const json = (body: string, status = 200) => (_: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  };
  assert.equal(await read(json('{"snapshot": ')), 'HTTP 200: the answer is not JSON');
  assert.equal(await read(json('{"snapshot": {"vrrp": "x", "services": 5}, "vrrpAuth": {}}')), 'the answer is not an lvsd cluster member view (another lvsd version?)');
  assert.equal(await read(json(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)), 'the answer is not an lvsd cluster member view (another lvsd version?)');
  assert.equal(await read((_, res) => { res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end(); }), 'HTTP 302: the answer is not JSON');
  assert.equal(await read((_, res) => {
    res.writeHead(500);
    const block = Buffer.alloc(1 << 20, 0x20);
    let n = 0;
    const more = (): void => { while (n++ < 40 && res.write(block)); if (n < 40) res.once('drain', more); else res.end(); };
    more();
  }, 20_000), 'answer larger than 33554432 bytes');
  assert.equal(await read((_, res) => {
    res.writeHead(200);
    const t = setInterval(() => { res.write(' '); }, 20);
    res.on('close', () => { clearInterval(t); });
  }, 300), 'no answer within 300 ms');
});
