// In-memory keepalived.conf trees for the importer's unit tests (path → text).
import * as path from 'node:path';
import { globFiles, type DirReader } from '../../daemon/config/keepalived/glob.js';
import type { SourceLoader } from '../../daemon/config/keepalived/parser.js';
import { importKeepalived, type ImportResult } from '../../daemon/config/keepalived/index.js';

export function memLoader(files: Record<string, string>): SourceLoader {
  const dirs: DirReader = {
    list: (dir) => {
      const prefix = dir.endsWith('/') ? dir : `${dir}/`;
      const names = new Set<string>();
      for (const f of Object.keys(files)) if (f.startsWith(prefix)) names.add(f.slice(prefix.length).split('/')[0] ?? '');
      return names.size > 0 ? [...names] : undefined;
    },
    isFile: (f) => f in files,
  };
  return {
    read: (f) => {
      const text = files[f];
      if (text === undefined) throw new Error('ENOENT: no such file');
      return text;
    },
    glob: (p) => globFiles(p, dirs),
    resolve: (base, p) => path.resolve(base, p),
    dirname: (f) => path.dirname(f),
  };
}

export const MAIN = '/etc/keepalived/keepalived.conf';

/** Imports one keepalived.conf text (plus optional extra files) with config id "lb1". */
export function importText(text: string, extra: Record<string, string> = {}): ImportResult {
  return importKeepalived(MAIN, { configId: 'lb1', loader: memLoader({ [MAIN]: text, ...extra }) });
}

/** "LINE directive" of each diagnostic, for compact assertions. */
export function diag(r: ImportResult): string[] {
  return r.diagnostics.map((d) => `${d.line} ${d.directive}`);
}
