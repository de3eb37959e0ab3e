// Reading a file lvsd is given (its config, a keepalived.conf and what it includes, the state file), never
// more than `max` + 1 bytes: a huge file, /dev/zero or an endless pipe costs no memory to refuse. lvsd's own
// config (config/load.ts) and a keepalived.conf (config/keepalived/source.ts) pass MAX_CONFIG_BYTES, so both
// have the one limit. A leaf of daemon/, so the state store, on the lowest floor, reads through it too.
//
// The file is opened non-blocking: open(2) of a FIFO nobody writes to waits for a writer for ever, and took
// `lvsd check-config`, the importer and a reload's libuv thread with it. A pipe is still read (`<(…)`, a
// writer that comes later): an empty read with no writer is an error, and so is a pipe silent for `idleMs`.
import { openSync, readSync, fstatSync, closeSync, constants, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** The text, or how far reading got: `endless` when the size was not known in advance (a device, a pipe). */
export type Capped = { ok: true; text: string } | TooLong;
/** The same for a binary file (lvsd's graph history). */
export type CappedBytes = { ok: true; data: Buffer } | TooLong;
type TooLong = { ok: false; bytes: number; endless: boolean };

export interface CapOptions {
  /** Bytes at most (config/errors.ts MAX_CONFIG_BYTES for a config). */
  max: number;
  /** How long a pipe or device may give nothing before reading gives up (ms). */
  idleMs?: number;
}

/** A PEM key, certificate chain or CA bundle is a few KiB, a token less: past this a file is not one. */
export const MAX_PEM_BYTES = 1024 * 1024;

/** The text of a PEM (or token) file read with max MAX_PEM_BYTES, or an Error saying it is too big for one. */
export function pemText(r: Capped): string {
  if (!r.ok) throw new Error(`more than ${MAX_PEM_BYTES} bytes; not a PEM file`);
  return r.text;
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
const POLL_MS = 10;
const IDLE_MS = 10_000;

/** What the reading loop asks of its driver: a read (answered with bytes read, or 'again' for EAGAIN) or a pause. */
type Step = { read: { buf: Buffer; offset: number; length: number } } | { wait: number };

function* reading(st: Stats, max: number, idleMs: number): Generator<Step, CappedBytes, number | 'again'> {
  if (st.isFile() && st.size > max) return { ok: false, bytes: st.size, endless: false };
  // the size it says it has (a pipe or device: a little), grown as it proves longer, never past max + 1
  let buf = Buffer.alloc(Math.min(max + 1, (st.isFile() ? st.size : 0) + 64 * 1024));
  let n = 0;
  let idle = 0;
  for (;;) {
    if (n === buf.length) buf = Buffer.concat([buf, Buffer.alloc(Math.min(buf.length, max + 1 - buf.length))]);
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
  return { ok: true, data: buf.subarray(0, n) };
}

function asText(r: CappedBytes): Capped {
  return r.ok ? { ok: true, text: r.data.toString('utf8') } : r;
}

const again = (e: unknown): boolean => (e as NodeJS.ErrnoException).code === 'EAGAIN';

/** Reads a file up to `max` bytes; I/O errors (ENOENT, EISDIR, …) are thrown. */
export async function readCapped(path: string, opts: CapOptions): Promise<Capped> {
  return asText(await readCappedBytes(path, opts));
}

/** readCapped of a binary file. */
export async function readCappedBytes(path: string, opts: CapOptions): Promise<CappedBytes> {
  const fh = await open(path, FLAGS);
  try {
    const steps = reading(await fh.stat(), opts.max, opts.idleMs ?? IDLE_MS);
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
export function readCappedSync(path: string, opts: CapOptions): Capped {
  return asText(readCappedBytesSync(path, opts));
}

/** readCappedSync of a binary file. */
export function readCappedBytesSync(path: string, opts: CapOptions): CappedBytes {
  const fd = openSync(path, FLAGS);
  try {
    const steps = reading(fstatSync(fd), opts.max, opts.idleMs ?? IDLE_MS);
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
