// `lvsd version`: the package version and the runtime, from package.json next to dist/.
import { readFileSync } from 'node:fs';
import type { Command } from './command.js';

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const versionCommand: Command = {
  name: 'version',
  summary: 'print the lvsd version',
  usage: 'version',
  run(_argv, io) {
    io.out(`lvsd ${packageVersion()} (node ${process.version}, ${process.platform}-${process.arch})`);
    return Promise.resolve(0);
  },
};
