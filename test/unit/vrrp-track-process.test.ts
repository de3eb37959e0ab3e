// track_process, the pure parts: the process connector's bytes, which processes a tracker counts, and its
// quorum with keepalived 2.2.7's delays (measured: a matching exec counts at once, an exit after
// terminate_delay; docs/vrrp.md), and how a reverse tracker moves an instance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProcEvents, encodeListen } from '../../daemon/net/proc-connector.js';
import { matches, ProcessTable, type TrackProcessOptions } from '../../daemon/vrrp/process-track.js';
import { applyTracking } from '../../daemon/vrrp/tracking.js';

/** One connector message as the kernel sends it: nlmsghdr | cn_msg | proc_event {what, cpu, ts, data}. */
function procMsg(what: number, data: Buffer, idx = 1): Buffer {
  const ev = Buffer.concat([Buffer.alloc(16), data]);
  ev.writeUInt32LE(what, 0);
  const cn = Buffer.alloc(20);
  cn.writeUInt32LE(idx, 0);
  cn.writeUInt32LE(1, 4);
  cn.writeUInt16LE(ev.length, 16);
  const body = Buffer.concat([cn, ev]);
  const nl = Buffer.alloc(16);
  nl.writeUInt32LE(16 + body.length, 0);
  nl.writeUInt16LE(3, 4);
  const msg = Buffer.concat([nl, body]);
  return Buffer.concat([msg, Buffer.alloc(((msg.length + 3) & ~3) - msg.length)]);
}
const u32s = (...v: number[]): Buffer => {
  const b = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => b.writeUInt32LE(x >>> 0, i * 4));
  return b;
};

test('connector: the listen request is nlmsghdr + cn_msg {CN_IDX_PROC, CN_VAL_PROC, len 4} + PROC_CN_MCAST_LISTEN (ignore: 2)', () => {
  const b = encodeListen(true, 1234);
  assert.equal(b.length, 40);
  assert.equal(b.readUInt32LE(0), 40);
  assert.equal(b.readUInt16LE(4), 3);
  assert.equal(b.readUInt32LE(12), 1234);
  assert.deepEqual([b.readUInt32LE(16), b.readUInt32LE(20), b.readUInt16LE(32)], [1, 1, 4]);
  assert.equal(b.readUInt32LE(36), 1);
  assert.equal(encodeListen(false, 1).readUInt32LE(36), 2);
});

test('connector: fork, exec, comm, exit and the ack decode; several in one datagram; others and other connectors skipped', () => {
  const comm = Buffer.alloc(16);
  comm.write('nginx');
  const buf = Buffer.concat([
    procMsg(0x1, u32s(10, 10, 11, 11)),
    procMsg(0x2, u32s(11, 11)),
    procMsg(0x200, Buffer.concat([u32s(11, 11), comm])),
    procMsg(0x80000000, u32s(11, 11, 0, 17, 10, 10)),
    procMsg(0x0, u32s(0)),
    procMsg(0x4, u32s(11, 11, 0, 0)), // uid change: not used
    procMsg(0x2, u32s(12, 12), 7), // another connector's message
  ]);
  assert.deepEqual(decodeProcEvents(buf), [
    { type: 'fork', parentTgid: 10, childPid: 11, childTgid: 11 },
    { type: 'exec', pid: 11, tgid: 11 },
    { type: 'comm', pid: 11, tgid: 11, comm: 'nginx' },
    { type: 'exit', pid: 11, tgid: 11 },
    { type: 'ack', errno: 0 },
  ]);
  assert.throws(() => decodeProcEvents(procMsg(0x2, u32s(1))), /expected 8/);
  const cut = procMsg(0x2, u32s(1, 1));
  assert.throws(() => decodeProcEvents(cut.subarray(0, cut.length - 8)), /length/);
});

test('matching: by name (the first 15 bytes, as comm keeps), else argv[0] and the parameters by paramMatch', () => {
  const p = (comm: string, ...argv: string[]) => ({ comm, argv: argv.length > 0 ? argv : null });
  assert.ok(matches({ process: 'nginx' }, p('nginx')));
  assert.ok(!matches({ process: 'ssh' }, p('sshd')), 'exact, not a pattern (keepalived: like pgrep "^ssh$")');
  assert.ok(matches({ process: 'a-very-long-process-name' }, p('a-very-long-pro')));
  const hap = { process: '/usr/sbin/haproxy', parameters: ['-f', '/etc/h.cfg'] };
  const argv = ['/usr/sbin/haproxy', '-f', '/etc/h.cfg', '-D'];
  assert.ok(!matches(hap, p('haproxy', ...argv)), 'exact by default: no extra parameter');
  assert.ok(matches(hap, p('haproxy', ...argv.slice(0, 3))));
  assert.ok(matches({ ...hap, paramMatch: 'partial' }, p('haproxy', ...argv)));
  assert.ok(!matches({ ...hap, paramMatch: 'partial', parameters: ['-f', '/etc/h'] }, p('haproxy', ...argv)), 'partial: whole parameters');
  assert.ok(matches({ ...hap, paramMatch: 'initial', parameters: ['-f', '/etc/h'] }, p('haproxy', ...argv)), 'initial: the last may be longer');
  assert.ok(!matches({ process: '/usr/sbin/haproxy', paramMatch: 'exact' }, p('haproxy', ...argv)), 'param_match without parameters: none allowed');
  assert.ok(matches({ process: '/usr/sbin/haproxy', paramMatch: 'exact' }, p('haproxy', '/usr/sbin/haproxy')));
  assert.ok(matches({ process: '/usr/sbin/haproxy', fullCommand: true }, p('haproxy', ...argv)), 'full_command: argv[0], any parameters');
  assert.ok(!matches({ process: 'haproxy', fullCommand: true }, p('haproxy', ...argv)));
  assert.ok(!matches(hap, p('haproxy')), 'no command line read (zombie, kernel thread): no match');
});


test('quorum: nothing is said before the start-up scan ends; then the state found, and each change', () => {
  const t = new ProcessTable({ A: { process: 'a' }, B: { process: 'b', quorum: 2, quorumMax: 3 } });
  assert.deepEqual(t.seen(1, { comm: 'a', argv: null }, 'scan', 0), []);
  assert.deepEqual(t.seen(2, { comm: 'b', argv: null }, 'scan', 0), []);
  assert.deepEqual(t.scanned(0), [{ name: 'A', ok: true, count: 1 }, { name: 'B', ok: false, count: 1 }]);
  assert.deepEqual(t.seen(3, { comm: 'b', argv: null }, 'exec', 1), [{ name: 'B', ok: true, count: 2 }]);
  assert.deepEqual(t.seen(4, { comm: 'b', argv: null }, 'exec', 2), [], 'still within quorum..quorumMax');
  assert.deepEqual(t.seen(5, { comm: 'b', argv: null }, 'exec', 3), [{ name: 'B', ok: false, count: 4 }], 'over quorum_max');
  assert.deepEqual(t.seen(1, { comm: 'renamed', argv: null }, 'exec', 4), [{ name: 'A', ok: false, count: 0 }], 'a comm change leaves the tracker');
  assert.deepEqual(t.gone(99, 5), [], 'an unknown pid');
});

test('delays: an exit counts after terminateDelay (a restart within it is no change); a fork gain after forkDelay; an exec at once', () => {
  const o: TrackProcessOptions = { process: 'a', terminateDelayMs: 1000, forkDelayMs: 500 };
  const t = new ProcessTable({ A: o });
  t.seen(1, { comm: 'a', argv: null }, 'scan', 0);
  t.scanned(0);
  assert.deepEqual(t.gone(1, 100), []);
  assert.equal(t.deadline(), 1100);
  assert.deepEqual(t.due(1099), []);
  assert.deepEqual(t.seen(2, { comm: 'a', argv: null }, 'exec', 600), [], 'restarted within the delay: no bounce');
  assert.equal(t.deadline(), null);
  assert.deepEqual(t.gone(2, 2000), []);
  assert.deepEqual(t.due(3000), [{ name: 'A', ok: false, count: 0 }]);
  assert.deepEqual(t.seen(3, { comm: 'a', argv: null }, 'fork', 4000), []);
  assert.deepEqual(t.due(4499), []);
  assert.deepEqual(t.due(4500), [{ name: 'A', ok: true, count: 1 }]);
  assert.deepEqual(t.gone(3, 5000), []);
  assert.deepEqual(t.seen(4, { comm: 'a', argv: null }, 'exec', 5100), [], 'back before the terminate delay ran out');
  assert.deepEqual(t.gone(4, 6000), []);
  assert.deepEqual(t.due(7000), [{ name: 'A', ok: false, count: 0 }]);
  assert.deepEqual(t.seen(5, { comm: 'a', argv: null }, 'exec', 8000), [{ name: 'A', ok: true, count: 1 }], 'exec: at once (measured)');
});

test('tracking: a process tracker moves the priority by its weight, weight 0 = FAULT, reverse inverts (keepalived weight W reverse)', () => {
  const proc = (ok: boolean, weight: number, reverse = false) => ({ kind: 'process' as const, name: 'P', weight, ok, reverse });
  assert.equal(applyTracking(100, [proc(true, 10)]).priority, 110);
  assert.equal(applyTracking(100, [proc(false, 10)]).priority, 100);
  assert.equal(applyTracking(100, [proc(false, -20)]).priority, 80);
  assert.deepEqual(applyTracking(100, [proc(false, 0)]), { priority: 100, fault: true, reasons: ['process P quorum lost'] });
  assert.equal(applyTracking(100, [proc(true, 0, true)]).fault, true, 'weight 0 reverse: FAULT while the quorum is held');
  assert.equal(applyTracking(100, [proc(false, 0, true)]).fault, false);
  assert.equal(applyTracking(100, [proc(true, -20, true)]).priority, 80);
});
