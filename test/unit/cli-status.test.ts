import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { statusCommand } from '../../daemon/cli/status.js';
import { renderSnapshot } from '../../daemon/cli/status-render.js';
import { statusLine } from '../../daemon/director/status-line.js';
import { FakeDirector } from '../support/fake-director.js';
import type { Io } from '../../daemon/cli/command.js';

const STATUS = new FakeDirector().snapshot();

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

test('renderSnapshot: one line per VRRP instance, virtual service and real server', () => {
  const text = renderSnapshot(STATUS);
  assert.match(text, /^node director-1 · lvsd /m);
  assert.match(text, /^dataplane \S+ \(/m);
  assert.match(text, /^ {2}VI_1 +\S+ +eth0 vrid 51 v3 {2}priority 150\/150 .*VIPs 192\.168\.77\.100\/24$/m);
  assert.match(text, /^ {2}web +tcp 192\.168\.77\.100:80 {2}wrr nat {2}quorum up/m);
  assert.match(text, /^ {4}10\.0\.1\.13:80 +\S+ +weight \S+\/5 {2}conns \d+\/\d+/m);
  assert.equal(text.split('\n').filter((l) => /^ {4}\d/.test(l)).length, STATUS.virtualServices.reduce((n, v) => n + v.realServers.length, 0));
});

test('status asks GET /api/v1/status on the socket and prints it', async () => {
  const seen: string[] = [];
  await withServer((path) => { seen.push(path); return [200, JSON.stringify(STATUS)]; }, async (socket) => {
    const c = capture();
    assert.equal(await statusCommand.run(['--socket', socket], c.io), 0);
    assert.deepEqual(seen, ['/api/v1/status']);
    assert.match(c.out.join('\n'), /^ {2}VI_1 /m);
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
    assert.match(c.out.join('\n'), /^node director-1 /m);
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
    assert.match(c.err.join('\n'), /GET \/api\/v1\/status: 500 \{"error":"boom"\}/);
  });
});

test('a VRRP engine that is not running shows in lvsd status and in systemd\'s status line', () => {
  const down = { ...STATUS, vrrpProblem: 'VRRP engine process exited (signal SIGKILL)' };
  assert.match(renderSnapshot(down), /^VRRP\n {2}NOT RUNNING: VRRP engine process exited \(signal SIGKILL\) \(the roles below are the last it reported\)$/m);
  assert.doesNotMatch(renderSnapshot(STATUS), /NOT RUNNING/);
  assert.match(statusLine(down), /^VRRP FAILED: VRRP engine process exited \(signal SIGKILL\) · /);
  assert.match(statusLine(STATUS), /^VI_1 /);
});
