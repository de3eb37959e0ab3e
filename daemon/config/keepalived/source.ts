// The file-system edge of the importer: reads keepalived.conf and the files it includes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { globFiles, type DirReader } from './glob.js';
import type { SourceLoader } from './parser.js';

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
  read: (file) => fs.readFileSync(file, 'utf8'),
  glob: (pattern) => globFiles(pattern, diskDirs),
  resolve: (baseDir, pattern) => path.resolve(baseDir, pattern),
  dirname: (file) => path.dirname(file),
};
