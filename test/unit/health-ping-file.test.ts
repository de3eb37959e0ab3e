// The pure parts of the ping and file checkers: the ICMP / ICMPv6 echo codec of the native engine
// (daemon/health/native/icmp_codec.c, called through the addon so the code under test is the code
// that runs), keepalived's track_file rules (checkers/file-value.ts), the file probe on a real file,
// and the monitor's side: a file's weight offset on the live weight, a ping check refused without the
// native engine. Real echoes, nft drops and file writes meet them in test/netns/health-ping.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileProbe } from '../../daemon/health/checkers/file.js';
import { fileVerdict, trackFileValue } from '../../daemon/health/checkers/file-value.js';
import type { Probe } from '../../daemon/health/checkers/index.js';
import { HealthMonitor, type HealthTarget, type WeightEvent } from '../../daemon/health/monitor.js';
import { probeAddon } from '../../daemon/health/native-probe.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import { OK_VERDICT, type CheckVerdict } from '../../daemon/health/types.js';

const lib = probeAddon();
if (lib === null) throw new Error('native probe engine not built (build/Release/lvsd_probe.node): run `npm ci` or `npm rebuild`');

/** RFC 1071, written out independently of the C one: a correct packet sums to 0. */
function checksum(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < b.length; i += 2) sum += (b[i] ?? 0) * 256 + (b[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** A reply built the way a peer's kernel builds one: type 0, the request's id, seq and payload. */
function reply4(request: Buffer): Buffer {
  const r = Buffer.from(request);
  r[0] = 0;
  r.writeUInt16BE(0, 2);
  r.writeUInt16BE(checksum(r), 2);
  return r;
}

function ipv4Header(payloadLength: number, src: string, dst: string, protocol = 1): Buffer {
  const h = Buffer.alloc(20);
  h[0] = 0x45;
  h.writeUInt16BE(20 + payloadLength, 2);
  h[8] = 64;
  h[9] = protocol;
  Buffer.from(src.split('.').map(Number)).copy(h, 12);
  Buffer.from(dst.split('.').map(Number)).copy(h, 16);
  h.writeUInt16BE(checksum(h), 10);
  return h;
}

test('icmp: an IPv4 echo request is type 8 with the id, the sequence and a valid checksum; IPv6 leaves the checksum to the kernel', () => {
  const e4 = lib.icmpEcho(4, 0x1234, 0xfffe);
  assert.equal(e4.length, 16);
  assert.deepEqual([e4[0], e4[1], e4.readUInt16BE(4), e4.readUInt16BE(6)], [8, 0, 0x1234, 0xfffe]);
  assert.equal(checksum(e4), 0, 'the checksum covers the whole message');
  const e6 = lib.icmpEcho(6, 7, 9);
  assert.deepEqual([e6[0], e6[1], e6.readUInt16BE(2), e6.readUInt16BE(4), e6.readUInt16BE(6)], [128, 0, 0, 7, 9]);
  // Odd lengths and carries: one checksum for each sequence number, and each verifies.
  for (const seq of [0, 1, 0x7fff, 0x8000, 0xffff]) assert.equal(checksum(lib.icmpEcho(4, 0xffff, seq)), 0);
});

test('icmp: replies are read with or without the IPv4 header; a bad checksum, a request or a foreign type is not a reply', () => {
  const req = lib.icmpEcho(4, 0x4242, 17);
  const rep = reply4(req);
  assert.deepEqual(lib.icmpRead(rep, 4, false), [1, 0x4242, 17, 0, -1], 'ping socket: the ICMP message alone');
  assert.deepEqual(lib.icmpRead(Buffer.concat([ipv4Header(rep.length, '10.0.0.2', '10.0.0.1'), rep]), 4, true), [1, 0x4242, 17, 0, -1], 'raw socket: IP header first');
  const bad = Buffer.from(rep);
  bad[9] = (bad[9] ?? 0) ^ 0xff;
  assert.equal(lib.icmpRead(bad, 4, false)[0], 0, 'a corrupted reply is ignored');
  assert.equal(lib.icmpRead(req, 4, false)[0], 0, 'our own request (seen on loopback) is no reply');
  assert.equal(lib.icmpRead(rep.subarray(0, 7), 4, false)[0], 0, 'too short');
  assert.equal(lib.icmpRead(Buffer.alloc(10), 4, true)[0], 0, 'not an IPv4 header');
  const r6 = lib.icmpEcho(6, 5, 6);
  r6[0] = 129;
  assert.deepEqual(lib.icmpRead(r6, 6, false), [1, 5, 6, 0, -1]);
  r6[0] = 135; // neighbour solicitation
  assert.equal(lib.icmpRead(r6, 6, false)[0], 0);
});

test('icmp: an unreachable or time-exceeded error that quotes our echo names its id, sequence, errno and original destination', () => {
  const req = lib.icmpEcho(4, 0x0101, 300);
  const quoted = Buffer.concat([ipv4Header(req.length, '10.0.0.1', '10.9.9.9'), req]);
  for (const [type, code, errno] of [[3, 1, 'EHOSTUNREACH'], [3, 0, 'ENETUNREACH'], [3, 13, 'EACCES'], [11, 0, 'EHOSTUNREACH']] as const) {
    const err = Buffer.concat([Buffer.from([type, code, 0, 0, 0, 0, 0, 0]), quoted]);
    err.writeUInt16BE(checksum(err), 2);
    const raw = Buffer.concat([ipv4Header(err.length, '10.0.0.254', '10.0.0.1'), err]);
    const [kind, id, seq, e, at] = lib.icmpRead(raw, 4, true);
    assert.deepEqual([kind, id, seq, e], [2, 0x0101, 300, constants.errno[errno]], `type ${type} code ${code}`);
    assert.equal(raw.subarray(at, at + 4).join('.'), '10.9.9.9', 'the quoted destination is the target');
  }
  // An error quoting something else (a UDP datagram) is not about a ping.
  const udp = Buffer.concat([Buffer.from([3, 3, 0, 0, 0, 0, 0, 0]), ipv4Header(8, '10.0.0.1', '10.9.9.9', 17), Buffer.alloc(8)]);
  udp.writeUInt16BE(checksum(udp), 2);
  assert.equal(lib.icmpRead(udp, 4, false)[0], 0);
  // ICMPv6 destination unreachable (code 3, address unreachable) quoting a 40-byte header and our echo.
  const req6 = lib.icmpEcho(6, 9, 10);
  const ip6 = Buffer.alloc(40);
  ip6[0] = 0x60;
  ip6[6] = 58;
  ip6[39] = 0x42; // destination ::42
  const err6 = Buffer.concat([Buffer.from([1, 3, 0, 0, 0, 0, 0, 0]), ip6, req6]);
  const [k6, id6, seq6, e6, at6] = lib.icmpRead(err6, 6, false);
  assert.deepEqual([k6, id6, seq6, e6], [2, 9, 10, constants.errno.EHOSTUNREACH]);
  assert.equal(err6[at6 + 15], 0x42);
});

test('track_file values are read as strtol(…, 0) reads them; out of range is ignored', () => {
  const rows: [string | undefined, number | undefined][] = [
    [undefined, 0], ['', 0], ['\n', 0], ['abc', 0], ['0', 0], ['5', 5], ['  -7\n', -7], ['+3', 3], ['12abc', 12], ['0x1f', 31], ['0X1F', 31],
    ['010', 8], ['09', 0], ['-0x10', -16], ['2147483647', 2147483647], ['2147483648', 2147483648], ['-2147483648', -2147483648],
    ['2147483649', undefined], ['-2147483649', undefined], ['99999999999999999999', undefined],
  ];
  for (const [content, want] of rows) assert.equal(trackFileValue(content), want, JSON.stringify(content));
  // keepalived reads 127 bytes: digits past them do not count.
  assert.equal(trackFileValue(`${' '.repeat(126)}42`), 4);
});

test('track_file verdicts: weight 0 is up on 0 only (reverse: down on 0); otherwise value × weight is added, -2^31 means down', () => {
  const rows: [number, number, boolean, boolean, number][] = [
    // value, weight, reverse → up, offset
    [0, 0, false, true, 0], [1, 0, false, false, 0], [-5, 0, false, false, 0],
    [0, 0, true, false, 0], [3, 0, true, true, 0],
    [0, 1, false, true, 0], [5, 1, false, true, 5], [-5, 1, false, true, -5], [5, -2, false, true, -10], [5, 2, true, true, -10], [-5, 2, true, true, 10],
    [-2147483648, 1, false, false, 0], [-1073741824, 2, false, false, 0], [-1073741823, 2, false, true, -2147483646],
    [2147483647, 10, false, true, 2147483647], [2147483648, -1, false, false, 0],
  ];
  for (const [v, w, rev, up, offset] of rows) assert.deepEqual(fileVerdict(v, w, rev), { up, offset }, `${v} × ${w}${rev ? ' reverse' : ''}`);
});

const dir = mkdtempSync(join(tmpdir(), 'lvsd-file-check-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('file probe: follows the file at every check; missing = 0; out-of-range content keeps the last value; a relative path is refused', async () => {
  const path = join(dir, 'load');
  const run = (p: Probe): Promise<CheckVerdict> => p(new AbortController().signal);
  const zero = fileProbe({ path, weight: 0 });
  assert.deepEqual(await run(zero), { ok: true, reason: 'ok', detail: `${path} holds 0` }, 'no file yet: 0, up');
  writeFileSync(path, '1\n');
  assert.deepEqual(await run(zero), { ok: false, reason: 'file', detail: `${path} holds 1` });
  const weighted = fileProbe({ path, weight: 3 });
  writeFileSync(path, '-4');
  assert.deepEqual(await run(weighted), { ok: true, reason: 'ok', detail: `${path} holds -4`, weightOffset: -12 });
  writeFileSync(path, '9999999999');
  assert.deepEqual(await run(weighted), { ok: true, reason: 'ok', detail: `${path} holds -4 (the new content is out of range: kept)`, weightOffset: -12 });
  writeFileSync(path, '-2147483648');
  assert.equal((await run(fileProbe({ path }))).reason, 'file', 'the fault value');
  rmSync(path);
  assert.deepEqual(await run(weighted), { ok: true, reason: 'ok', detail: `${path} holds 0`, weightOffset: 0 }, 'a removed file counts as 0');
  assert.throws(() => fileProbe({ path: 'relative/file' }), /path: not absolute/);
});

function check(o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type: 'file', intervalMs: 1000, timeoutMs: 500, file: { path: '/x' }, ...o };
}

test('monitor: a file check\'s offset is added to the configured weight, bounded to 0..65535, and the server stays up', async () => {
  let verdict: CheckVerdict = OK_VERDICT;
  const mon = new HealthMonitor({ probeFactory: () => () => Promise.resolve(verdict), random: () => 0 });
  const weights: WeightEvent[] = [];
  mon.on('weight', (e) => weights.push(e));
  const t: HealthTarget = { id: 'rs1', service: 'web', address: '10.0.1.1', port: 80, weight: 100, check: check({ intervalMs: 20 }) };
  try {
    mon.upsert(t);
    const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 80));
    verdict = { ...OK_VERDICT, detail: 'holds -4', weightOffset: -40 };
    await settle();
    assert.equal(mon.view('rs1')?.dynamicWeight, 60);
    verdict = { ...OK_VERDICT, detail: 'holds -50', weightOffset: -500 };
    await settle();
    assert.deepEqual(mon.view('rs1'), { up: true, dynamicWeight: 0 }, 'bounded at 0: up, carrying no traffic');
    verdict = { ...OK_VERDICT, detail: 'holds big', weightOffset: 2147483647 };
    await settle();
    assert.equal(mon.view('rs1')?.dynamicWeight, 65535);
    assert.deepEqual(weights.map((w) => w.weight), [60, 0, 65535]);
  } finally {
    mon.close();
  }
});

test('monitor: without the native engine a ping check is refused when applied, naming the target and why', () => {
  const mon = new HealthMonitor({ nativeProbes: false });
  try {
    assert.throws(
      () => mon.upsert({ id: 'web/10.0.1.1:80', service: 'web', address: '10.0.1.1', port: 80, weight: 1, check: { ...CHECK_DEFAULTS, type: 'ping' } }),
      /web\/10\.0\.1\.1:80: healthCheck\.type: ping checks need the native probe engine .*no raw ICMP sockets/,
    );
    assert.throws(
      () => mon.upsert({ id: 'rs2', service: 'web', address: '10.0.1.2', port: 80, weight: 1, check: { ...CHECK_DEFAULTS, type: 'tcp' }, moreChecks: [{ ...CHECK_DEFAULTS, type: 'ping' }] }),
      /rs2: moreChecks\[0\]\.type: ping checks need the native probe engine/,
    );
    assert.equal(mon.stats().targets, 0, 'nothing half-added');
    const r = mon.reconcile([], [{ id: 'rs3', service: 'web', address: '10.0.1.3', port: 80, weight: 1, check: { ...CHECK_DEFAULTS, type: 'ping' } }]);
    assert.match(r.errors[0]?.message ?? '', /ping checks need the native probe engine/, 'a reload reports it');
  } finally {
    mon.close();
  }
});

test('monitor: a file check follows a write at once (its directory is watched), not one interval later', async () => {
  const path = join(dir, 'maint');
  writeFileSync(path, '0');
  const mon = new HealthMonitor({ nativeProbes: false, random: () => 0 });
  const moves: string[] = [];
  const next = (): Promise<void> => new Promise((resolve, reject) => {
    const t = setTimeout(() => { reject(new Error(`no transition within 5 s (interval 60 s): ${moves.join(', ')}`)); }, 5_000);
    mon.once('transition', (e) => {
      clearTimeout(t);
      moves.push(`${e.to} ${e.reason}`);
      resolve();
    });
  });
  try {
    mon.upsert({ id: 'rs1', service: 'web', address: '10.0.1.1', port: 80, weight: 1, check: check({ intervalMs: 60_000, rise: 1, fall: 1, file: { path, weight: 0 } }) });
    await new Promise((r) => setTimeout(r, 100));
    const down = next();
    writeFileSync(path, '1');
    await down;
    const up = next();
    rmSync(path);
    await up;
    assert.deepEqual(moves, ['down file', 'up ok'], 'the removal counts as 0');
  } finally {
    mon.close();
  }
});
