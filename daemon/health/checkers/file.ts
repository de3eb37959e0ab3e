// FILE_CHECK: the real server follows the integer in a file (keepalived track_file; the rules are in
// file-value.ts). The file is read at every check (the check's interval), and its directory is watched
// (fs.watch: inotify) so a write, a rename into place or a removal asks for a check at once, as
// keepalived's inotify does; a file that cannot be read counts as 0, as keepalived treats a missing one.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { FileCheckOptions } from '../options.js';
import { fail, type CheckVerdict } from '../types.js';
import { fileVerdict, trackFileValue } from './file-value.js';
import { trackFileHead } from './file-head.js';
import type { Probe } from './probe.js';

export function fileProbe(o: FileCheckOptions): Probe {
  if (!o.path.startsWith('/')) throw new Error(`path: not absolute: ${JSON.stringify(o.path)}`);
  const weight = o.weight ?? 1;
  const reverse = o.reverse ?? false;
  // keepalived keeps its last value when the content is out of range; so does each probe.
  let last = 0;
  const probe: Probe = async (signal) => {
    const content = await trackFileHead(o.path);
    if (signal.aborted) return fail('timeout', `${o.path}: not read in time`);
    const read = trackFileValue(content);
    if (read !== undefined) last = read;
    const v = fileVerdict(last, weight, reverse);
    const said = `${o.path} holds ${last}${read === undefined ? ' (the new content is out of range: kept)' : ''}`;
    if (!v.up) return fail('file', said);
    const ok: CheckVerdict = { ok: true, reason: 'ok', detail: said };
    return weight === 0 ? ok : { ...ok, weightOffset: v.offset };
  };
  probe.watch = (changed) => watchFile(o.path, changed);
  return probe;
}

/** Watches the file's directory (the file itself may not exist yet, or be replaced by a rename). */
function watchFile(path: string, changed: () => void): () => void {
  const name = basename(path);
  let w: FSWatcher | undefined;
  try {
    w = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) changed();
    });
    // A directory that goes away ends the watch; the interval's reads still follow the file.
    w.on('error', () => {
      w?.close();
    });
  } catch {
    // No such directory (yet): the interval's reads still follow the file.
  }
  return () => {
    w?.close();
  };
}
