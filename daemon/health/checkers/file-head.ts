// The head of a track_file, read as keepalived 2.2.7 reads it (track_file.c process_track_file): opened
// O_NONBLOCK, one read of at most 127 bytes, closed. A FIFO with no writer, a silent pipe or an unreadable
// file reads as nothing (0); /dev/zero or a huge file costs 127 bytes. A blocking open of a FIFO nobody
// writes to would hold one of libuv's four threads for ever, at every poll.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** What keepalived reads of the file: its first 127 bytes (latin1, as C sees them), undefined when nothing could be read. */
export async function trackFileHead(path: string): Promise<string | undefined> {
  try {
    const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const buf = Buffer.alloc(127);
      // no position: a pipe cannot seek
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      return buf.toString('latin1', 0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}
