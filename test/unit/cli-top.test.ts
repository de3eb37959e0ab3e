import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTop, type Terminal } from '../../daemon/cli/top.js';
import { ENTER_SCREEN, LEAVE_SCREEN, keyAction, redraw, topFrame } from '../../daemon/cli/top-screen.js';
import { UsageError, type Io } from '../../daemon/cli/command.js';
import { FakeDirector } from '../support/fake-director.js';
import { withStatusSocket } from '../support/status-socket.js';

const AT = new Date('2026-12-01T21:30:05Z');

function ticked(): FakeDirector {
  const d = new FakeDirector();
  d.tick(1);
  return d;
}

function capture(): { io: Io; err: string[] } {
  const err: string[] = [];
  return { io: { out: () => undefined, err: (t) => err.push(t) }, err };
}

/** A terminal that records what top writes; `onWrite` lets a test act (press a key, stop) once a frame is out. */
function fakeTerminal(isTTY: boolean, onWrite: (text: string, t: FakeTerminal) => void = () => undefined): FakeTerminal {
  const t: FakeTerminal = {
    isTTY,
    writes: [],
    restored: [],
    key: null,
    stop: null,
    size: () => ({ columns: 200, rows: 60 }),
    write(text) {
      t.writes.push(text);
      onWrite(text, t);
    },
    keys(fn) {
      t.key = fn;
      return () => t.restored.push('keys');
    },
    onResize: () => () => t.restored.push('resize'),
    onStop(fn) {
      t.stop = fn;
      return () => t.restored.push('stop');
    },
  };
  return t;
}
interface FakeTerminal extends Terminal {
  writes: string[];
  restored: string[];
  key: ((data: string) => void) | null;
  stop: (() => void) | null;
}

test('topFrame: a header naming the node, time and interval, then the status view with rate columns', () => {
  const lines = topFrame(ticked().snapshot(), { at: AT, intervalSec: 2 });
  assert.equal(lines[0], 'lvsd top · director-1 · 21:30:05 UTC · every 2 s');
  assert.ok(lines.includes('  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn       CPS    InBPS   OutBPS Health'), lines.join('\n'));
  const r11 = lines.find((l) => l.startsWith('  -> 10.0.1.11:80 '));
  // The fake's rates grow with the weight (10): 30..40 connections/s, 800 B in and 12,000 B out per connection.
  assert.match(r11 ?? '', /^ {2}-> 10\.0\.1\.11:80 +Masq {4}10 {5}40 {9}20 {9}( {6}[34]\d) +\d+(\.\d)?K +\d+K UP {2}http: HTTP 200/);
  assert.match(lines.join('\n'), /^TCP {2}192\.168\.77\.100:80 wrr {2}name web {2}quorum 25\/1 {2}cps \d+ in \d+(\.\d)?KB\/s out \d+(\.\d)?[KM]B\/s$/m);
  assert.ok(!lines.some((l) => l.includes('q quits')), 'no key hint without a terminal');
});

test('topFrame: on a terminal the frame is clipped to its width and height, and says how much is hidden', () => {
  const all = topFrame(ticked().snapshot(), { at: AT, intervalSec: 1 });
  const lines = topFrame(ticked().snapshot(), { at: AT, intervalSec: 1, size: { columns: 40, rows: 8 } });
  assert.equal(lines.length, 8);
  assert.ok(lines.every((l) => l.length <= 40));
  assert.match(lines[0] ?? '', /q quits|…$/);
  assert.equal(lines[7], `… ${all.length - 7} more lines (a taller terminal shows them)`.slice(0, 39) + '…');
});

test('topFrame: no snapshot shows why, and that it tries again', () => {
  assert.deepEqual(topFrame({ problem: 'lvsd is not running (nothing listens on /run/lvsd/lvsd.sock)' }, { at: AT, intervalSec: 5 }), [
    'lvsd top · 21:30:05 UTC · every 5 s',
    '',
    'lvsd is not running (nothing listens on /run/lvsd/lvsd.sock) — trying again every 5 s',
  ]);
});

test('redraw: cursor home, every line cleared to its end, the rest of the screen cleared', () => {
  assert.equal(redraw(['a', 'b']), '\x1b[Ha\x1b[K\r\nb\x1b[K\x1b[J');
});

test('keyAction: q, Q, Ctrl-C and Ctrl-D quit (raw mode sends Ctrl-C as a byte); space and r redraw; others nothing', () => {
  assert.deepEqual(['q', 'Q', '\x03', '\x04', 'xq', ' ', 'r', 'x', '\x1b[A'].map(keyAction), ['quit', 'quit', 'quit', 'quit', 'quit', 'refresh', 'refresh', null, null]);
});

test('top without a terminal prints one plain frame per interval, asking the socket each time', async () => {
  const seen: string[] = [];
  const d = ticked();
  await withStatusSocket((path) => { seen.push(path); return [200, JSON.stringify(d.snapshot())]; }, async (socket) => {
    const term = fakeTerminal(false);
    assert.equal(await runTop(['--socket', socket, '--interval', '0.01', '--count', '3'], capture().io, term), 0);
    assert.equal(term.writes.length, 3);
    assert.deepEqual(seen, ['/api/v1/status', '/api/v1/status', '/api/v1/status']);
    for (const w of term.writes) {
      assert.ok(!w.includes('\x1b'), 'no ANSI escapes in a pipe');
      assert.match(w, /^lvsd top · director-1 · \d\d:\d\d:\d\d UTC · every 0\.01 s\n[^]*\n {2}-> 10\.0\.2\.22:53 [^\n]+\n\n$/);
    }
    assert.equal(term.key, null, 'stdin is left alone');
    assert.deepEqual(term.restored, ['stop']);
  });
});

test('top on a terminal draws on the alternate screen, and q quits at once (not at the next interval) restoring the terminal', { timeout: 30_000 }, async () => {
  await withStatusSocket(() => [200, JSON.stringify(ticked().snapshot())], async (socket) => {
    const term = fakeTerminal(true, (text, t) => {
      if (text.startsWith('\x1b[H')) setImmediate(() => t.key?.('q'));
    });
    // An hour's interval: only the key can end this test in time.
    assert.equal(await runTop(['--socket', socket, '--interval', '3600'], capture().io, term), 0);
    assert.equal(term.writes[0], ENTER_SCREEN);
    assert.equal(term.writes.filter((w) => w.startsWith('\x1b[H')).length, 1);
    assert.match(term.writes[1] ?? '', /^\x1b\[Hlvsd top · director-1 · .* · q quits\x1b\[K\r\n/);
    assert.equal(term.writes.at(-1), LEAVE_SCREEN);
    assert.deepEqual(term.restored, ['resize', 'keys', 'stop']);
  });
});

test('top: space redraws now; SIGINT/SIGTERM end it cleanly', { timeout: 30_000 }, async () => {
  await withStatusSocket(() => [200, JSON.stringify(ticked().snapshot())], async (socket) => {
    let frames = 0;
    const term = fakeTerminal(true, (text, t) => {
      if (!text.startsWith('\x1b[H')) return;
      frames += 1;
      setImmediate(() => (frames < 3 ? t.key?.(' ') : t.stop?.()));
    });
    assert.equal(await runTop(['--socket', socket, '--interval', '3600'], capture().io, term), 0);
    assert.equal(frames, 3);
    assert.equal(term.writes.at(-1), LEAVE_SCREEN);
  });
});

test('top: a daemon that stops answering shows in the next frame, and top keeps asking', async () => {
  let calls = 0;
  await withStatusSocket(() => (++calls === 1 ? [200, JSON.stringify(ticked().snapshot())] : [503, '{"error":"shutting down"}']), async (socket) => {
    const term = fakeTerminal(false);
    assert.equal(await runTop(['--socket', socket, '--interval', '0.01', '--count', '3'], capture().io, term), 0);
    assert.equal(calls, 3);
    assert.match(term.writes[0] ?? '', /^lvsd top · director-1 /);
    for (const w of term.writes.slice(1)) assert.match(w, /^lvsd top · \S+ UTC · every 0\.01 s\n\ncannot use lvsd on \S+lvsd\.sock: GET \/api\/v1\/status: 503 \{"error":"shutting down"\} — trying again every 0\.01 s\n\n$/);
  });
});

test('top: nothing listening at start is exit 3 with the reason, like lvsd status', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-top-'));
  try {
    const c = capture();
    const term = fakeTerminal(true);
    const socket = join(dir, 'missing.sock');
    assert.equal(await runTop(['--socket', socket], c.io, term), 3);
    assert.deepEqual(c.err, [`lvsd is not running (nothing listens on ${socket})`]);
    assert.deepEqual(term.writes, [], 'the screen is left alone');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('top: --interval and --count must be positive numbers (the interval at most 24 days), named in the error', async () => {
  const term = fakeTerminal(false);
  for (const [argv, msg] of [
    [['--interval', '0'], /^--interval "0": must be a positive number of seconds of at most 2073600$/],
    [['--interval', 'soon'], /^--interval "soon": must be a positive number of seconds of at most 2073600$/],
    // past 2^31-1 ms a Node timer fires after 1 ms: top would ask the daemon a thousand times a second
    [['--interval', '3000000'], /^--interval "3000000": must be a positive number of seconds of at most 2073600$/],
    [['--count', '1.5'], /^--count "1\.5": must be a positive whole number$/],
  ] as const) {
    await assert.rejects(runTop(['--socket', '/nonexistent', ...argv], capture().io, term), (e: unknown) => e instanceof UsageError && msg.test(e.message));
  }
});
