import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { statusCommand } from '../../daemon/cli/status.js';
import { compact, renderSnapshot, renderTable } from '../../daemon/cli/status-render.js';
import { statusLine } from '../../daemon/director/status-line.js';
import { FakeDirector } from '../support/fake-director.js';
import { withStatusSocket } from '../support/status-socket.js';
import type { Io } from '../../daemon/cli/command.js';
import type { DirectorSnapshot, RealServerSnapshot, VirtualServerSnapshot } from '../../daemon/director/snapshot.js';
import type { ForwardMethod, Protocol, Scheduler } from '../../daemon/dataplane/types.js';

const STATUS = new FakeDirector().snapshot();
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

function capture(): { io: Io; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out, err };
}

test('renderSnapshot: the header, one line per VRRP instance, then ipvsadm\'s table with one line per virtual and real server', () => {
  const text = renderSnapshot(STATUS);
  assert.match(text, /^node director-1 · lvsd /m);
  assert.match(text, /^dataplane \S+ \(/m);
  assert.match(text, /^ {2}VI_1 +\S+ +eth0 vrid 51 v3 {2}priority 150\/150 .*VIPs 192\.168\.77\.100\/24$/m);
  assert.match(text, /^Prot LocalAddress:Port Scheduler Flags\n {2}-> RemoteAddress:Port {11}Forward Weight ActiveConn InActConn  Health$/m);
  assert.match(text, /^TCP {2}192\.168\.77\.100:80 wrr {2}name web {2}quorum 25\/1$/m);
  assert.match(text, /^UDP {2}192\.168\.78\.100:53 rr {2}name dns {2}quorum 2\/1$/m);
  // The fake holds 10.0.1.13 at weight 5 with 4×/2× the weight in connections, its HTTP check up.
  assert.match(text, /^ {2}-> 10\.0\.1\.13:80 {17}Masq {4}5 {6}20 {9}10 {9}UP {2}http: HTTP 200 \(2 ms\)$/m);
  assert.match(text, /^ {2}-> 10\.0\.2\.21:53 {17}Route {3}1 {6}4 {10}2 {10}UP {2}dns: NOERROR 1 answer \(2 ms\)$/m);
  assert.equal(text.split('\n').filter((l) => l.startsWith('  -> 10.')).length, STATUS.virtualServices.reduce((n, v) => n + v.realServers.length, 0));
});

test('renderSnapshot: a real server down, out of the table, drained or reweighted says so in its Health column', () => {
  const d = new FakeDirector();
  d.setHealth('tcp:192.168.77.100:80', '10.0.1.11:80', false, 'connect ECONNREFUSED');
  const s = d.snapshot();
  const web = s.virtualServices[0];
  assert.ok(web);
  const [r11, r12, r13] = web.realServers;
  assert.ok(r11 && r12 && r13);
  r12.override = { drain: true };
  r12.weight.effective = 0;
  r13.override = { weight: 2 };
  r13.weight.effective = 2;
  web.quorum = { required: 30, liveWeight: 15, up: false, sorryServerActive: true };
  const text = renderSnapshot(s);
  assert.match(text, /^TCP {2}192\.168\.77\.100:80 wrr {2}name web {2}quorum LOST 15\/30 {2}sorry-server$/m);
  web.checksSuspended = true;
  assert.match(renderSnapshot(s), /^TCP {2}192\.168\.77\.100:80 wrr {2}name web {2}quorum LOST 15\/30 {2}sorry-server {2}checks suspended \(ha_suspend\)$/m);
  assert.match(text, /^ {2}-> 10\.0\.1\.11:80 +Masq {4}- {6}0 +0 +DOWN {2}http: connect ECONNREFUSED \(2 ms\) {2}out of the table \(weight 10\)$/m);
  assert.match(text, /^ {2}-> 10\.0\.1\.12:80 +Masq {4}0 {6}.* UP {2}http: HTTP 200 \(2 ms\) {2}configured weight 10 {2}\[override: drained\]$/m);
  assert.match(text, /^ {2}-> 10\.0\.1\.13:80 +Masq {4}2 {6}.* UP .* {2}configured weight 5 {2}\[override: weight=2\]$/m);
});

/** The fixture's services (what ipvsadm was asked to program), as lvsd's snapshot would carry them. */
function ipvsadmLikeSnapshot(): DirectorSnapshot {
  const base = new FakeDirector().snapshot();
  const rs = (address: string, port: number, method: ForwardMethod, weight: number): RealServerSnapshot => ({
    id: `${address}:${port}`, address, port, method, weight: { configured: weight, effective: weight },
    health: { status: 'up', checker: 'tcp', since: null, lastCheck: null }, override: null, connections: { active: 0, inactive: 0 }, counters: null,
  });
  const vs = (protocol: Protocol, address: string | null, port: number | null, scheduler: Scheduler, realServers: RealServerSnapshot[], fwmark: number | null = null): VirtualServerSnapshot => ({
    id: `${protocol}:${String(address)}:${String(port)}`, name: 'x', protocol, address, port, fwmark, method: 'nat', scheduler,
    quorum: { required: 1, liveWeight: 1, up: true, sorryServerActive: false }, checksSuspended: false, override: null, counters: null, realServers,
  });
  return {
    ...base,
    virtualServices: [
      vs('tcp', '192.168.77.100', 80, 'wrr', [rs('10.0.1.11', 80, 'nat', 10), rs('10.0.1.12', 80, 'nat', 0)]),
      vs('tcp', '192.168.77.100', 443, 'sh', [rs('10.0.1.11', 443, 'tun', 1)]),
      vs('tcp', '192.168.77.100', 444, 'wlc', []),
      vs('udp', '192.168.78.100', 53, 'rr', [rs('10.0.2.21', 53, 'dr', 1)]),
      vs('udp', '192.168.78.100', 5353, 'rr', []),
      vs('sctp', '192.168.77.100', 9, 'rr', []),
      vs('tcp', '2001:db8::1', 80, 'mh', [rs('2001:db8::11', 80, 'nat', 65535)]),
      vs('tcp', null, null, 'wlc', [rs('10.0.1.11', 0, 'dr', 1)], 4),
    ],
  };
}

test('the virtual server table has ipvsadm -L -n\'s layout, column for column (measured: test/fixtures/ipvsadm/L-n.txt)', () => {
  const ipvsadm = readFileSync(join(FIXTURES, 'ipvsadm', 'L-n.txt'), 'utf8').split('\n').filter((l) => l !== '').slice(1); // past "IP Virtual Server version …"
  const ours = renderTable(ipvsadmLikeSnapshot());
  assert.equal(ours.length, ipvsadm.length);
  assert.equal(ours[0], ipvsadm[0]);
  ipvsadm.slice(1).forEach((line, i) => {
    const mine = ours[i + 1] ?? '';
    if (line.startsWith('  -> ')) {
      // ipvsadm's real server columns, trailing padding included, then lvsd's Health column after them.
      assert.ok(mine.startsWith(line), `line ${i + 2}:\n  ipvsadm: ${JSON.stringify(line)}\n  lvsd:    ${JSON.stringify(mine)}`);
      assert.ok(mine.length > line.length);
    } else {
      // Service lines: protocol, address:port and scheduler as ipvsadm prints them; lvsd's flags follow.
      const head = /^\S+ +\S+ \S+/.exec(line)?.[0] ?? line;
      assert.ok(mine.startsWith(`${head} `), `line ${i + 2}:\n  ipvsadm: ${JSON.stringify(line)}\n  lvsd:    ${JSON.stringify(mine)}`);
    }
  });
});

test('compact: large counters shortened as ipvsadm does without --exact', () => {
  assert.deepEqual([0, 999, 1000, 1500, 12_345, 999_999, 2_500_000, 7e9].map(compact), ['0', '999', '1K', '1.5K', '12K', '1000K', '2.5M', '7G']);
});

test('status asks GET /api/v1/status on the socket and prints it', async () => {
  const seen: string[] = [];
  await withStatusSocket((path) => { seen.push(path); return [200, JSON.stringify(STATUS)]; }, async (socket) => {
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
  await withStatusSocket(() => [200, JSON.stringify(STATUS)], async (socket, dir) => {
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
  await withStatusSocket(() => [500, '{"error":"boom"}'], async (socket) => {
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
