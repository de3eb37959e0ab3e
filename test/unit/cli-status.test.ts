import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderStatus, statusCommand, type StatusView } from '../../daemon/cli/status.js';
import type { Io } from '../../daemon/cli/command.js';

const STATUS: StatusView = {
  node: { name: 'director-1' },
  uptimeSec: 42,
  instances: [{ name: 'VI_1', state: 'MASTER', priority: 150, interface: 'eth0', virtualRouterId: 51 }],
  virtualServers: [
    { id: 'tcp:192.0.2.10:80', name: 'web', scheduler: 'wrr', realServers: [{ id: '10.0.1.11:80', health: 'up', weight: 1 }, { id: '10.0.1.12:80', health: 'down', weight: 0 }] },
  ],
};

function capture(): { io: Io; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out, err };
}

async function withServer(handler: (path: string) => [number, string], body: (socket: string, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-status-'));
  const socket = join(dir, 'lvsd.sock');
  const server: Server = createServer((req, res) => {
    const [code, text] = handler(req.url ?? '');
    res.writeHead(code, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(socket, r));
  try {
    await body(socket, dir);
  } finally {
    await new Promise<void>((r) => server.close(() => { r(); }));
    rmSync(dir, { recursive: true, force: true });
  }
}

test('renderStatus: instances, virtual and real servers, scalar fields', () => {
  const text = renderStatus(STATUS);
  assert.match(text, /^node: director-1$/m);
  assert.match(text, /^uptimeSec: 42$/m);
  assert.match(text, /^ {2}VI_1 {2}MASTER {2}priority 150 {2}on eth0 {2}vrid 51$/m);
  assert.match(text, /^ {2}web \(tcp:192\.0\.2\.10:80\) {2}wrr$/m);
  assert.match(text, /^ {4}10\.0\.1\.12:80 {2}down {2}weight 0$/m);
});

test('status asks GET /api/v1/status on the socket and prints it', async () => {
  const seen: string[] = [];
  await withServer((path) => { seen.push(path); return [200, JSON.stringify(STATUS)]; }, async (socket) => {
    const c = capture();
    assert.equal(await statusCommand.run(['--socket', socket], c.io), 0);
    assert.deepEqual(seen, ['/api/v1/status']);
    assert.match(c.out.join('\n'), /VI_1 {2}MASTER/);
    const j = capture();
    assert.equal(await statusCommand.run(['--socket', socket, '--json'], j.io), 0);
    assert.deepEqual(JSON.parse(j.out.join('')), STATUS);
  });
});

test('status finds the socket through --config (api.socket)', async () => {
  await withServer(() => [200, JSON.stringify(STATUS)], async (socket, dir) => {
    const cfg = join(dir, 'lvsd.yaml');
    writeFileSync(cfg, `api: { socket: ${socket} }\n`);
    const c = capture();
    assert.equal(await statusCommand.run(['--config', cfg], c.io), 0);
    assert.match(c.out.join('\n'), /node: director-1/);
  });
});

test('status: not running is a clear message and exit 3', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-status-'));
  try {
    const c = capture();
    const socket = join(dir, 'missing.sock');
    assert.equal(await statusCommand.run(['--socket', socket], c.io), 3);
    assert.deepEqual(c.err, [`lvsd is not running (nothing listens on ${socket})`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('status: an API error is reported with its code, exit 1', async () => {
  await withServer(() => [500, '{"error":"boom"}'], async (socket) => {
    const c = capture();
    assert.equal(await statusCommand.run(['--socket', socket], c.io), 1);
    assert.match(c.err.join('\n'), /answered 500 on \/api\/v1\/status: \{"error":"boom"\}/);
  });
});
