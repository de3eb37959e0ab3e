// The director's config file: the text that runs (it travels with its parsed config, so the hash shown is
// always the config that runs), reading the file once per reload, atomic writes for configs applied through
// the API, and the history a rollback goes back through. The file on disk is the source of truth for restarts.
import { createHash, randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { formatError, type ConfigError } from '../config/errors.js';
import { readConfigText } from '../config/load.js';
import { parseConfigOffThread } from '../config/parse-off-thread.js';
import type { Config } from '../config/types.js';
import { DirectorRejection, type ConfigProblem } from './port.js';
import { diskFull } from '../state/disk-full.js';

/** A parsed config and the exact text it was parsed from. */
export interface LoadedConfig {
  config: Config;
  text: string;
}

export type ParsedText = { ok: true; loaded: LoadedConfig; warnings: ConfigProblem[] } | { ok: false; errors: ConfigProblem[] };

const problem = (e: ConfigError): ConfigProblem => ({ message: formatError(e), line: e.line, column: e.col, path: e.path });

/** Earlier good configs a rollback can go back to. */
const HISTORY = 20;

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

export class ConfigFile {
  private current: LoadedConfig;
  private readonly previous: string[] = [];

  constructor(running: LoadedConfig) {
    this.current = running;
  }

  get path(): string {
    return this.current.config.source;
  }

  get running(): LoadedConfig {
    return this.current;
  }

  get hash(): string {
    return sha256(this.current.text);
  }

  /** Parses `text` as if it were this file (errors name it with line and column); a large text on a worker thread. */
  async parse(text: string): Promise<ParsedText> {
    const r = await parseConfigOffThread(text, this.path);
    if (r.ok) return { ok: true, loaded: { config: r.config, text }, warnings: r.warnings.map(problem) };
    return { ok: false, errors: r.errors.map(problem) };
  }

  /**
   * Reads the file once and parses what was read. Read as lvsd's loader reads it (read-capped.ts): a config
   * swapped for a huge file, /dev/zero or a FIFO with no writer used to take the heap or the reload queue
   * (for ever) with it; now the reload is refused and the running config keeps running.
   */
  async read(): Promise<ParsedText> {
    const r = await readConfigText(this.path);
    return r.ok ? this.parse(r.text) : { ok: false, errors: [problem(r.error)] };
  }

  /** Makes `loaded` the one everything reads (a reload adopting it, or going back). */
  swap(loaded: LoadedConfig): void {
    this.current = loaded;
  }

  /** After a reload that applied: `replaced` is the newest config a rollback returns to. */
  remember(replaced: string): void {
    if (replaced === this.current.text) return;
    this.previous.push(replaced);
    if (this.previous.length > HISTORY) this.previous.shift();
  }

  get canRollback(): boolean {
    return this.previous.length > 0;
  }

  /** The newest earlier config, taken out of the history (put it back with `restoreHistory` if it fails). */
  takePrevious(): string | undefined {
    return this.previous.pop();
  }

  restoreHistory(text: string): void {
    this.previous.push(text);
  }

  /** Drops the newest history entry: after a rollback, the config rolled back from is not one to return to. */
  forgetNewest(): void {
    this.previous.pop();
  }

  /** What the file says now (null when it cannot be read). */
  async onDisk(): Promise<string | null> {
    const r = await readConfigText(this.path);
    return r.ok ? r.text : null;
  }

  /**
   * Replaces the file's content atomically and durably: a temp file unique to this write in the same folder,
   * fsynced, renamed over the file, and the folder fsynced, so a crash leaves the old or the new text, never
   * a mix. The file keeps its mode. A folder or file lvsd may not write (a read-only /etc under systemd's
   * ProtectSystem, a root-owned file) is refused with the path and the reason, nothing changed.
   */
  async write(text: string): Promise<void> {
    const path = this.path;
    const mode = await stat(path).then((s) => s.mode & 0o7777, () => 0o640);
    const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const fh = await open(tmp, 'wx', mode);
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      const dir = await open(dirname(path), 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EACCES' || err.code === 'EPERM' || err.code === 'EROFS') {
        throw new DirectorRejection(409, `cannot write ${path} (${err.code}): lvsd may not change the config file here; edit it and reload instead (see docs/install.md)`);
      }
      throw diskFull(path, e);
    }
  }
}
