// Reading a config file, never more than MAX_CONFIG_BYTES + 1 bytes: a huge file, /dev/zero or an endless
// pipe costs no memory to refuse. lvsd's own config (load.ts) and a keepalived.conf with the files it
// includes (keepalived/source.ts) are read through here, so both have the one limit.
//
// The file is opened non-blocking: open(2) of a FIFO nobody writes to waits for a writer for ever, and took
// `lvsd check-config`, the importer and a reload's libuv thread with it. A pipe is still read (`<(…)`, a
// writer that comes later): an empty read with no writer is an error, and so is a pipe silent for `idleMs`.
import { openSync, readSync, fstatSync, closeSync, constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_CONFIG_BYTES } from './errors.js';

/** The text, or how far reading got: `endless` when the size was not known in advance (a device, a pipe). */
export type Capped = { ok: true; text: string } | { ok: false; bytes: number; endless: boolean };

export interface CapOptions {
  max?: number;
  /** How long a pipe or device may give nothing before reading gives up (ms). */
  idleMs?: number;
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const POLL_MS = 10;
const IDLE_MS = 10_000;

/** What the reading loop asks of its driver: a read (answered with bytes read, or 'again' for EAGAIN) or a pause. */
type Step = { read: { buf: Buffer; offset: number; length: number } } | { wait: number };

function* reading(st: Stats, max: number, idleMs: number): Generator<Step, Capped, number | 'again'> {
  if (st.isFile() && st.size > max) return { ok: false, bytes: st.size, endless: false };
  const buf = Buffer.alloc(max + 1);
  let n = 0;
  let idle = 0;
  for (;;) {
    const got = yield { read: { buf, offset: n, length: buf.length - n } };
    if (got === 'again') {
      if (idle >= idleMs) throw new Error(`nothing to read for ${idleMs / 1000} s (a pipe or device whose writer is silent)`);
      idle += POLL_MS;
      yield { wait: POLL_MS };
      continue;
    }
    if (got === 0) break;
    idle = 0;
    n += got;
    if (n > max) return { ok: false, bytes: n, endless: !st.isFile() };
  }
  // a FIFO opened non-blocking reads as empty while nobody has it open for writing
  if (n === 0 && st.isFIFO()) throw new Error('a pipe with no writer: nothing to read');
  return { ok: true, text: buf.subarray(0, n).toString('utf8') };
}

const again = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'EAGAIN';

/** Reads a file up to `max` bytes; I/O errors (ENOENT, EISDIR, …) are thrown. */
export async function readCapped(path: string, opts: CapOptions = {}): Promise<Capped> {
  const fh = await open(path, FLAGS);
  try {
    const steps = reading(await fh.stat(), opts.max ?? MAX_CONFIG_BYTES, opts.idleMs ?? IDLE_MS);
    let answer: number | 'again' = 0;
    for (let s = steps.next(answer); ; s = steps.next(answer)) {
      if (s.done === true) return s.value;
      if ('wait' in s.value) {
        await sleep(s.value.wait);
        continue;
      }
      const { buf, offset, length } = s.value.read;
      // no position: a pipe or a character device cannot seek
      answer = await fh.read(buf, offset, length, null).then((r) => r.bytesRead, (e: unknown) => { if (again(e)) return 'again' as const; throw e; });
    }
  } finally {
    await fh.close();
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** readCapped for the synchronous importer (`lvsd import-keepalived`). */
export function readCappedSync(path: string, opts: CapOptions = {}): Capped {
  const fd = openSync(path, FLAGS);
  try {
    const steps = reading(fstatSync(fd), opts.max ?? MAX_CONFIG_BYTES, opts.idleMs ?? IDLE_MS);
    let answer: number | 'again' = 0;
    for (let s = steps.next(answer); ; s = steps.next(answer)) {
      if (s.done === true) return s.value;
      if ('wait' in s.value) {
        Atomics.wait(pause, 0, 0, s.value.wait);
        continue;
      }
      const { buf, offset, length } = s.value.read;
      try {
        answer = readSync(fd, buf, offset, length, null);
      } catch (e) {
        if (!again(e)) throw e;
        answer = 'again';
      }
    }
  } finally {
    closeSync(fd);
  }
}
