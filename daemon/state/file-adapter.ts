// A lowdb adapter that reads with schema checks and writes crash-safely: tmp file, fsync, rename, then
// fsync of the directory so the rename itself survives a power cut. lowdb's own JSONFile adapter skips
// both fsyncs and turns a `null` file into defaults without a word (see shared/notes/stack.md).
//
// Three more duties, because the file outlives any one writer:
// - a rewrite keeps the file's owner and mode: `lvsd user add` run as root while lvsd is stopped must
//   not hand lvsd (running as user lvsd) a root:root 0600 file it can no longer open;
// - tmp files a crash left behind are removed when the file is first read (at start);
// - the audit log is bounded on disk (one entry's before/after, and all entries together), so a flood
//   of big entries cannot grow the file until every write takes seconds.
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { readCapped } from '../read-capped.js';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import { Value } from 'typebox/value';
import { StateSchema, type AuditEntry, type State } from './schema.js';
import { diskFull } from './disk-full.js';

export class StateFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    /** Where in the file, when a place is known (JSON that does not parse). */
    readonly at?: { line: number; col: number },
  ) {
    super(`${file}${at === undefined ? '' : `:${at.line}:${at.col}`}: ${problem}`);
    this.name = 'StateFileError';
  }
}

/**
 * Bytes a state file may have: far above what lvsd writes now (its audit log is bounded to AUDIT_TOTAL_MAX
 * characters, users and overrides are few) so a file an older lvsd let grow still opens and is trimmed, yet
 * /dev/zero or an endless pipe cannot take the heap.
 */
export const STATE_FILE_MAX = 256 * 1024 * 1024;

/** JSON.parse says "at position N" (or nothing, at the end of the input): that place as line and column. */
function jsonErrorAt(text: string, message: string): { line: number; col: number } {
  const m = /at position (\d+)/.exec(message);
  const pos = m === null ? text.length : Math.min(Number(m[1]), text.length);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  return { line, col: pos - (before.lastIndexOf('\n') + 1) + 1 };
}

/**
 * The file is there but this process may not read or replace it (permissions, ownership). Not a
 * StateFileError on purpose: nothing is wrong with its content, so "start from empty" is no cure.
 */
export class StateFileAccessError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'StateFileAccessError';
  }
}

/** Parses and checks a state file's text; throws StateFileError naming the file and the first problems. */
export function parseState(file: string, text: string): State {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const why = (e as Error).message;
    throw new StateFileError(file, `not valid JSON (${why.replace(/ in JSON at position \d+$/, '')})`, jsonErrorAt(text, why));
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new StateFileError(file, `expected a JSON object at the top level, found ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}`);
  }
  if (!Value.Check(StateSchema, data)) {
    const problems = [...Value.Errors(StateSchema, data)]
      .filter((e) => e.keyword !== 'boolean')
      .slice(0, 5)
      .map((e) => `${e.instancePath === '' ? '/' : e.instancePath}: ${e.message}`);
    throw new StateFileError(file, `wrong shape: ${problems.join('; ')}`);
  }
  return data;
}

// ---- the audit log's bounds --------------------------------------------------------------------

/** Characters of JSON one entry's `before` or `after` may take; a bigger one is replaced by a summary. */
export const AUDIT_VALUE_MAX = 2048;
/** Characters of who / action / target at most. */
export const AUDIT_FIELD_MAX = 256;
/** Characters of JSON all audit entries together may take; the oldest go first. */
export const AUDIT_TOTAL_MAX = 4 * 1024 * 1024;

function boundValue(v: unknown): unknown {
  const json = JSON.stringify(v) as string | undefined;
  if (json === undefined || json.length <= AUDIT_VALUE_MAX) return v;
  return { truncated: true, chars: json.length, preview: json.slice(0, 512) };
}

function boundField(s: string): string {
  return s.length <= AUDIT_FIELD_MAX ? s : `${s.slice(0, AUDIT_FIELD_MAX - 1)}…`;
}

/**
 * Bounds the audit log in place: each entry's fields and before/after, then the whole log (oldest
 * entries dropped). In place, so the store's memory and the file keep saying the same thing.
 * `known` caches the size of entries already bounded, by id (an entry never changes once written), so
 * a write measures only the new ones.
 */
export function boundAudit(audit: AuditEntry[], known: Map<number, number> = new Map()): void {
  let total = 0;
  const sizes: number[] = [];
  for (const e of audit) {
    let n = known.get(e.id);
    if (n === undefined) {
      e.who = boundField(e.who);
      e.action = boundField(e.action);
      e.target = boundField(e.target);
      n = JSON.stringify(e).length;
      if (n > AUDIT_VALUE_MAX) {
        e.before = boundValue(e.before);
        e.after = boundValue(e.after);
        n = JSON.stringify(e).length;
      }
      known.set(e.id, n);
    }
    sizes.push(n);
    total += n;
  }
  let keepFrom = 0;
  while (total > AUDIT_TOTAL_MAX && keepFrom < audit.length) total -= sizes[keepFrom++] ?? 0;
  if (keepFrom > 0) for (const e of audit.splice(0, keepFrom)) known.delete(e.id);
  if (known.size > audit.length * 2) {
    const live = new Set(audit.map((e) => e.id));
    for (const id of known.keys()) if (!live.has(id)) known.delete(id);
  }
}

// ---- the adapter -------------------------------------------------------------------------------

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

function ids(): string {
  return typeof process.geteuid === 'function' ? `uid ${process.geteuid()} gid ${process.getegid?.() ?? '?'}` : 'this user';
}

export class CheckedJsonFile implements Adapter<State> {
  #queue: Promise<void> = Promise.resolve();
  #seq = 0;
  #cleaned = false;
  /** Sizes of the audit entries already bounded (boundAudit). */
  readonly #auditSizes = new Map<number, number>();
  /** Orphan tmp files removed at the first read (kept for the start-up log). */
  removedOrphans: string[] = [];

  constructor(readonly file: string) {}

  /** Our tmp names: `.state.json.<pid>.<seq>.tmp`. */
  #tmpPattern(): RegExp {
    const base = basename(this.file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return new RegExp(`^\\.${base}\\.(\\d+)\\.\\d+\\.tmp$`);
  }

  /**
   * Removes tmp files that crashed writers left beside the file. A tmp file of a process that still
   * runs (another `lvsd user add` writing right now) is left alone.
   */
  async #removeOrphans(): Promise<void> {
    this.#cleaned = true;
    const dir = dirname(this.file);
    const re = this.#tmpPattern();
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return; // no directory yet: nothing to clean, and the read says what is wrong
    }
    for (const name of names) {
      const pid = Number(re.exec(name)?.[1]);
      if (!Number.isInteger(pid) || (pid !== process.pid && alive(pid))) continue;
      try {
        await unlink(join(dir, name));
        this.removedOrphans.push(join(dir, name));
      } catch (e) {
        if (errno(e) !== 'ENOENT') throw new StateFileAccessError(this.file, `cannot remove the leftover ${name} (${(e as Error).message})`);
      }
    }
  }

  async read(): Promise<State | null> {
    if (!this.#cleaned) await this.#removeOrphans();
    let text: string;
    try {
      const r = await readCapped(this.file, { max: STATE_FILE_MAX });
      if (!r.ok) throw new StateFileError(this.file, `${r.endless ? `more than ${STATE_FILE_MAX} bytes (reading stopped there)` : `${r.bytes} bytes`}; a state file is read up to ${STATE_FILE_MAX} (256 MiB)`);
      text = r.text;
    } catch (e) {
      if (e instanceof StateFileError) throw e;
      if (errno(e) === 'ENOENT') return null;
      if (errno(e) === 'EACCES' || errno(e) === 'EPERM') throw new StateFileAccessError(this.file, `cannot read (${(e as Error).message}) as ${ids()}${await ownerText(this.file)}; its content may be fine: give the file back to the user lvsd runs as (chown), do not start from empty`);
      throw new StateFileError(this.file, `cannot read (${(e as Error).message})`);
    }
    const state = parseState(this.file, text);
    boundAudit(state.audit, this.#auditSizes);
    return state;
  }

  /** Writes are serialised: the last write wins and no two renames race. */
  write(data: State): Promise<void> {
    boundAudit(data.audit, this.#auditSizes);
    const text = JSON.stringify(data, null, 2) + '\n';
    const run = this.#queue.then(() => this.#writeNow(text)).catch((e: unknown) => {
      throw diskFull(this.file, e);
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #writeNow(text: string): Promise<void> {
    const dir = dirname(this.file);
    const tmp = join(dir, `.${basename(this.file)}.${process.pid}.${++this.#seq}.tmp`);
    // the file as it is now: its replacement gets the same owner and mode (a new file: ours, 0600)
    let keep: { uid: number; gid: number; mode: number } | null = null;
    try {
      const st = await stat(this.file);
      keep = { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
    } catch (e) {
      if (errno(e) !== 'ENOENT') throw e;
    }
    const fh = await open(tmp, 'w', 0o600);
    try {
      if (keep !== null) {
        if (keep.uid !== process.geteuid?.() || keep.gid !== process.getegid?.()) {
          try {
            await fh.chown(keep.uid, keep.gid);
          } catch (e) {
            throw new StateFileAccessError(this.file, `cannot keep its owner uid ${keep.uid} gid ${keep.gid} as ${ids()} (${(e as Error).message}); not replaced — run this as root or as the file's owner`);
          }
        }
        await fh.chmod(keep.mode);
      }
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } catch (e) {
      await fh.close();
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    await fh.close();
    try {
      await rename(tmp, this.file);
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errno(e) === 'EPERM'; // exists, but not ours to signal
  }
}

async function ownerText(file: string): Promise<string> {
  try {
    const st = await stat(file);
    return `; it belongs to uid ${st.uid} gid ${st.gid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}`;
  } catch {
    return '';
  }
}
