// Reading a config file, never more than MAX_CONFIG_BYTES + 1 bytes: a huge file, /dev/zero or an endless
// pipe costs no memory to refuse. lvsd's own config (load.ts) and a keepalived.conf with the files it
// includes (keepalived/source.ts) are read through here, so both have the one limit.
import { openSync, readSync, fstatSync, closeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { MAX_CONFIG_BYTES } from './errors.js';

/** The text, or how far reading got: `endless` when the size was not known in advance (a device, a pipe). */
export type Capped = { ok: true; text: string } | { ok: false; bytes: number; endless: boolean };

/** Reads a file up to `max` bytes; I/O errors (ENOENT, EISDIR, …) are thrown. */
export async function readCapped(path: string, max = MAX_CONFIG_BYTES): Promise<Capped> {
  const fh = await open(path, 'r');
  try {
    const st = await fh.stat();
    if (st.isFile() && st.size > max) return { ok: false, bytes: st.size, endless: false };
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (;;) {
      // no position: a pipe or a character device cannot seek
      const { bytesRead } = await fh.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > max) return { ok: false, bytes: n, endless: !st.isFile() };
    }
    return { ok: true, text: buf.subarray(0, n).toString('utf8') };
  } finally {
    await fh.close();
  }
}

/** readCapped for the synchronous importer (`lvsd import-keepalived`). */
export function readCappedSync(path: string, max = MAX_CONFIG_BYTES): Capped {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    if (st.isFile() && st.size > max) return { ok: false, bytes: st.size, endless: false };
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (;;) {
      const bytesRead = readSync(fd, buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > max) return { ok: false, bytes: n, endless: !st.isFile() };
    }
    return { ok: true, text: buf.subarray(0, n).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
