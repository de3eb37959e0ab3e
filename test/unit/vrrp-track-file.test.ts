// A VRRP track_file is read the way keepalived reads it (the reader FILE_CHECK uses too): strtol base 0,
// a missing file is 0, a number out of range is ignored and the last value stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTracker } from '../../daemon/vrrp/track.js';
import { trackFileHead } from '../../daemon/health/checkers/file-head.js';

test('track_file values: hex, octal, garbage, a missing file, and an out-of-range number kept out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-trackfile-'));
  const path = join(dir, 'prio');
  const seen: number[] = [];
  const tracker = new FileTracker(path, (_p, v) => seen.push(v), 10);
  const next = async (content: string | null, want: number[]): Promise<void> => {
    if (content === null) rmSync(path, { force: true });
    else {
      // Written aside and renamed in: the tracker polls from the thread pool and could otherwise read a
      // half-written file ("9" of "99999999999"), which is not what this test is about.
      writeFileSync(`${path}.new`, content);
      renameSync(`${path}.new`, path);
    }
    const end = Date.now() + 2000;
    while (JSON.stringify(seen) !== JSON.stringify(want) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(seen, want, `after ${JSON.stringify(content)}`);
  };
  try {
    writeFileSync(path, ' 0x10\n');
    tracker.start();
    await next(' 0x10\n', [16]);
    await next('010', [16, 8]);
    await next('-3 apples', [16, 8, -3]);
    await next('abc', [16, 8, -3, 0]);
    await next('7', [16, 8, -3, 0, 7]);
    await next('99999999999', [16, 8, -3, 0, 7]); // ignored: the last value stays
    await new Promise((r) => setTimeout(r, 60));
    assert.deepEqual(seen, [16, 8, -3, 0, 7]);
    await next(null, [16, 8, -3, 0, 7, 0]);
  } finally {
    tracker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a track_file that is a FIFO with no writer, /dev/zero or a huge file is read as keepalived reads it: 127 bytes, never waiting', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-trackfile-'));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const seen: number[] = [];
  const tracker = new FileTracker(fifo, (_p, v) => seen.push(v), 10);
  try {
    tracker.start();
    const end = Date.now() + 2000;
    while (seen.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    // a blocking open would still be waiting for a writer (and hold a libuv thread with it)
    assert.deepEqual(seen, [0]);
    assert.equal(await trackFileHead('/dev/zero'), '\0'.repeat(127));
    const big = join(dir, 'big');
    writeFileSync(big, `42${' '.repeat(8 * 1024 * 1024)}`);
    assert.equal(await trackFileHead(big), `42${' '.repeat(125)}`);
  } finally {
    tracker.stop();
    // should a read still wait on the FIFO, a writer lets it go, so the test ends either way
    closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
    rmSync(dir, { recursive: true, force: true });
  }
});
