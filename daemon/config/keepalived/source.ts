// The file-system edge of the importer: reads keepalived.conf and the files it includes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { globFiles, type DirReader } from './glob.js';
import type { SourceLoader } from './parser.js';
import { readCappedSync } from '../../read-capped.js';
import { MAX_CONFIG_BYTES, tooBigMessage } from '../errors.js';

/** Each file at most MAX_CONFIG_BYTES, as lvsd's own config: /dev/zero, a huge file or an endless pipe is refused. */
function readFile(file: string): string {
  const r = readCappedSync(file, { max: MAX_CONFIG_BYTES });
  if (r.ok) return r.text;
  throw Object.assign(new Error(tooBigMessage(r.bytes, r.endless)), { code: 'EFBIG' });
}

const diskDirs: DirReader = {
  list(dir) {
    try {
      return fs.readdirSync(dir);
    } catch {
      return undefined;
    }
  },
  isFile(file) {
    try {
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  },
};

export const diskLoader: SourceLoader = {
  read: readFile,
  notAFile: (file) => {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      return undefined;
    }
    if (st.isFile()) return undefined;
    if (st.isFIFO()) return 'a FIFO (named pipe)';
    if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
    if (st.isSocket()) return 'a socket';
    return st.isDirectory() ? 'a directory (include dir/*.conf?)' : 'not a regular file';
  },
  identity: (file) => {
    const st = fs.statSync(file, { bigint: true });
    return `${st.dev}:${st.ino}`;
  },
  glob: (pattern) => globFiles(pattern, diskDirs),
  resolve: (baseDir, pattern) => path.resolve(baseDir, pattern),
  dirname: (file) => path.dirname(file),
};
