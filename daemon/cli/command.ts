// The subcommand table of the `lvsd` bin. Each subcommand is one module exporting a Command;
// main.ts dispatches by name. To add one (import-keepalived, reload, user add): write the module
// and add its name and loader to COMMANDS in commands.ts (loaded only when it runs).
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export const processIo: Io = {
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
};

export interface Command {
  /** One word, or words separated by a space for nested commands ("user add"). */
  name: string;
  /** One line for `lvsd help`. */
  summary: string;
  /** Usage line(s) after "lvsd ". */
  usage: string;
  /** Returns the exit code. Long-running commands (run) resolve when they are done. */
  run(argv: string[], io: Io): Promise<number>;
}

/** Exit codes shared by the subcommands. */
export const EXIT = { ok: 0, failed: 1, usage: 2, notRunning: 3 } as const;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** node:util parseArgs with errors turned into UsageError (exit 2 with the usage text). */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, positionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: positionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
