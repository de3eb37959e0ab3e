// The graphs' history across a restart (issue #18): the ring written to disk and read back — every sample,
// series and mark as it was; samples older than the ring's span dropped; a damaged file named with its byte
// and the graphs starting empty, the daemon serving on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHistory, encodeHistory } from '../../daemon/api/history-codec.js';
import { HistoryRing } from '../../daemon/api/history-ring.js';
import { History } from '../../daemon/api/history.js';
import { FakeDirector } from '../support/fake-director.js';

test('codec: a ring round-trips, NaN holes and marks included; damage is named with its byte', () => {
  const ring = new HistoryRing(4, 10);
  ring.push(1000, new Map([['a', 1.5], ['b', 2]]));
  ring.push(2000, new Map([['a', 3]]));
  ring.mark({ at: 1500, kind: 'vrrp', text: 'VI_1: BACKUP → MASTER' });
  const d = decodeHistory(encodeHistory(ring.dump()), 'h.bin');
  const again = new HistoryRing(4, 10);
  again.load(d);
  assert.deepEqual(again.read(), ring.read());
  const bytes = encodeHistory(ring.dump());
  assert.throws(() => decodeHistory(Buffer.from('garbage!garbage!garbage'), 'h.bin'), /^Error: h\.bin: byte 0: not an lvsd history file; the graphs start empty$/);
  assert.throws(() => decodeHistory(bytes.subarray(0, bytes.length - 1), 'h.bin'), /h\.bin: byte \d+: \d+ bytes of values, \d+ expected for 2 series × 2 samples/);
  const hdr = Buffer.from(bytes);
  hdr.write('{', 16, 'latin1');
  hdr.write('X', 17, 'latin1');
  assert.throws(() => decodeHistory(hdr, 'h.bin'), /h\.bin: byte 16: header: /);
});

test('dump: oldest first at any fill and wrap of the ring, the same samples read() gives', () => {
  fc.assert(
    fc.property(fc.integer({ min: 2, max: 9 }), fc.array(fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }), { maxLength: 40 }), (capacity, pushes) => {
      const ring = new HistoryRing(capacity, 10);
      pushes.forEach((v, i) => { ring.push(1000 * (i + 1), v === undefined ? new Map() : new Map([['a', v]])); });
      const d = ring.dump();
      const r = ring.read();
      assert.deepEqual(d.t, r.t);
      const a = d.series.find(([k]) => k === 'a')?.[1];
      const want = r.series.get('a');
      assert.deepEqual(a === undefined ? undefined : [...a].map((x) => (Number.isNaN(x) ? null : x)), want);
    }),
    { numRuns: 500, seed: 18 },
  );
});

test('History with a file: what a stopped director drew is there after its restart; stale samples dropped; a bad file is reported, not fatal', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-history-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const file = join(dir, 'history.bin');
  const director = new FakeDirector();
  let now = 1_000_000;
  const first = new History(director, { periodMs: 10_000, capacity: 6, file }, () => now);
  director.tick(1);
  first.start();
  for (let i = 0; i < 4; i++) { director.tick(10); now += 10_000; first.sample(); }
  director.transition('VI_2', 'MASTER', 'master down timer expired');
  const before = first.view({});
  first.stop(); // writes the file
  assert.ok(readFileSync(file).length > 0);

  // A restart 10 s later: the five samples and the mark are back, then the new process samples on.
  now += 10_000;
  const second = new History(director, { periodMs: 10_000, capacity: 6, file }, () => now);
  second.start();
  const after = second.view({});
  second.stop();
  assert.deepEqual(after.t.slice(0, before.t.length), before.t);
  assert.equal(after.t.length, before.t.length + 1, 'the restarted one took its first sample');
  assert.deepEqual(after.marks, before.marks);
  const cps = (v: typeof before) => v.series.find((s) => s.metric === 'cps' && s.scope === 'virtualServer')?.values.slice(0, before.t.length);
  assert.deepEqual(cps(after), cps(before));

  // Down longer than the ring's span (6 × 10 s): nothing old is drawn.
  now += 120_000;
  const third = new History(director, { periodMs: 10_000, capacity: 6, file }, () => now);
  third.start();
  assert.equal(third.view({}).t.length, 1);
  third.stop();

  // A damaged file: reported with where, and the graphs start empty.
  writeFileSync(file, 'LVSDHIST\x09\x00\x00\x00');
  const errors: string[] = [];
  const fourth = new History(director, { periodMs: 10_000, capacity: 6, file, onError: (e) => errors.push(e.message) }, () => now);
  fourth.start();
  assert.equal(fourth.view({}).t.length, 1);
  assert.deepEqual(errors, [`${file}: byte 0: not an lvsd history file; the graphs start empty`]);
  fourth.stop();
});

test('History: a file no ring of its size wrote (/dev/zero, too big, a FIFO with no writer) is refused at once; the graphs start empty', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-history-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const director = new FakeDirector();
  const big = join(dir, 'big.bin');
  // capacity 6 × 10 series × 4 bytes + the 64 MiB header allowance, and one byte more
  writeFileSync(big, Buffer.alloc(6 * 10 * 4 + 64 * 1024 * 1024 + 1));
  const fifo = join(dir, 'fifo.bin');
  execFileSync('mkfifo', [fifo]);
  // a link, so that stop()'s save replaces the link and never /dev/zero itself
  const zero = join(dir, 'zero.bin');
  symlinkSync('/dev/zero', zero);
  const cases: [string, RegExp][] = [
    [zero, /zero\.bin: more than \d+ bytes \(a device or pipe\); not a history file lvsd wrote$/],
    [big, /big\.bin: more than 67109104 bytes; not a history file lvsd wrote$/],
    [fifo, /a pipe with no writer/],
  ];
  for (const [file, want] of cases) {
    const errors: string[] = [];
    const h = new History(director, { periodMs: 10_000, capacity: 6, maxSeries: 10, file, onError: (e) => errors.push(e.message) }, () => 1_000_000);
    const t0 = Date.now();
    h.start();
    const took = Date.now() - t0;
    assert.equal(errors.length, 1, `${file}: ${errors.join('; ')}`);
    assert.match(errors[0] ?? '', want);
    assert.equal(h.view({}).t.length, 1, 'the graphs start empty and sample on');
    h.stop();
    t.diagnostic(`${file}: refused in ${took} ms`);
  }
});
