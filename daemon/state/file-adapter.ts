// A lowdb adapter that reads with schema checks and writes crash-safely: tmp file, fsync, rename, then
// fsync of the directory so the rename itself survives a power cut. lowdb's own JSONFile adapter skips
// both fsyncs and turns a `null` file into defaults without a word (see shared/notes/stack.md).
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import { Value } from 'typebox/value';
import { StateSchema, type State } from './schema.js';

export class StateFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'StateFileError';
  }
}

/** Parses and checks a state file's text; throws StateFileError naming the file and the first problems. */
export function parseState(file: string, text: string): State {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new StateFileError(file, `not valid JSON (${(e as Error).message})`);
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

export class CheckedJsonFile implements Adapter<State> {
  #queue: Promise<void> = Promise.resolve();
  #seq = 0;

  constructor(readonly file: string) {}

  async read(): Promise<State | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StateFileError(this.file, `cannot read (${(e as Error).message})`);
    }
    return parseState(this.file, text);
  }

  /** Writes are serialised: the last write wins and no two renames race. */
  write(data: State): Promise<void> {
    const text = JSON.stringify(data, null, 2) + '\n';
    const run = this.#queue.then(() => this.#writeNow(text));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #writeNow(text: string): Promise<void> {
    const dir = dirname(this.file);
    const tmp = join(dir, `.${basename(this.file)}.${process.pid}.${++this.#seq}.tmp`);
    const fh = await open(tmp, 'w', 0o600);
    try {
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
