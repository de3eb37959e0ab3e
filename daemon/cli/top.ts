// `lvsd top [--interval S] [--count N]`: `lvsd status` refreshed in place every S seconds (default 2), with the
// dataplane's rates per real server. On a terminal it draws on the alternate screen and quits on q or Ctrl-C;
// when stdout is not a terminal it prints one plain frame per interval (for a log or `| tee`), until
// Ctrl-C/SIGTERM or N frames. Nothing listening on the socket at start is exit 3, as for `lvsd status`; a
// daemon that goes away later shows in the frame and is asked again at the next interval.
import { EXIT, UsageError, parse, type Command, type Io } from './command.js';
import { findLocalDaemon } from './local.js';
import { readSnapshot, type SnapshotRead } from './status.js';
import { ENTER_SCREEN, LEAVE_SCREEN, keyAction, redraw, topFrame } from './top-screen.js';
import { MAX_DURATION_MS } from '../config/formats.js';

/** The edges of a terminal top needs; processTerminal() is the real one, tests pass their own. */
export interface Terminal {
  /** stdout is a terminal: redraw in place. */
  readonly isTTY: boolean;
  size(): { columns: number; rows: number };
  write(text: string): void;
  /** Delivers key presses (raw mode) when stdin is a terminal; the returned function restores it. */
  keys(onKey: (data: string) => void): () => void;
  onResize(fn: () => void): () => void;
  /** SIGINT and SIGTERM: end the loop cleanly (the terminal is restored in any case). */
  onStop(fn: () => void): () => void;
}

export function processTerminal(): Terminal {
  const { stdin, stdout } = process;
  return {
    isTTY: stdout.isTTY,
    size: () => ({ columns: stdout.columns, rows: stdout.rows }),
    write: (t) => stdout.write(t),
    keys(onKey) {
      if (!stdin.isTTY) return () => undefined;
      const onData = (d: Buffer): void => {
        onKey(d.toString('utf8'));
      };
      stdin.setRawMode(true);
      stdin.on('data', onData);
      stdin.resume();
      return () => {
        stdin.off('data', onData);
        stdin.setRawMode(false);
        stdin.pause();
      };
    },
    onResize(fn) {
      stdout.on('resize', fn);
      return () => stdout.off('resize', fn);
    },
    onStop(fn) {
      process.on('SIGINT', fn);
      process.on('SIGTERM', fn);
      return () => {
        process.off('SIGINT', fn);
        process.off('SIGTERM', fn);
      };
    },
  };
}

function positive(flag: string, text: string | undefined, dflt: number, integer: boolean, max = Infinity): number {
  if (text === undefined) return dflt;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)) || n > max) {
    const most = max === Infinity ? '' : ` of at most ${max}`;
    throw new UsageError(`--${flag} ${JSON.stringify(text)}: must be a positive ${integer ? 'whole number' : 'number of seconds'}${most}`);
  }
  return n;
}

/** Waits for the interval to pass or for someone to wake it early (a key, a resize, a stop). */
class Pause {
  #wake: (() => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  /** A key, a signal: the loop ends at its next look, and a pause in progress ends now. */
  stop(): void {
    this.#stopped = true;
    this.wake();
  }

  stopped(): boolean {
    return this.#stopped;
  }

  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
    });
  }

  wake(): void {
    clearTimeout(this.#timer);
    this.#wake?.();
    this.#wake = null;
  }
}

export async function runTop(argv: string[], io: Io, term: Terminal): Promise<number> {
  const { values } = parse(argv, {
    interval: { type: 'string', short: 'd' },
    count: { type: 'string', short: 'n' },
    socket: { type: 'string' },
    config: { type: 'string', short: 'c' },
  });
  // a longer timer fires after 1 ms in Node: `--interval 3000000` (meant as ms) asked the daemon a thousand times a second
  const intervalSec = positive('interval', values.interval, 2, false, MAX_DURATION_MS / 1000);
  const count = values.count === undefined ? Infinity : positive('count', values.count, 1, true);
  const { socket } = await findLocalDaemon({ config: values.config, socket: values.socket }, io);
  let read: SnapshotRead = await readSnapshot(socket);
  if (!read.ok) {
    io.err(read.message);
    return read.notRunning ? EXIT.notRunning : EXIT.failed;
  }

  const pause = new Pause();
  const undo: (() => void)[] = [term.onStop(() => { pause.stop(); })];
  if (term.isTTY) {
    term.write(ENTER_SCREEN);
    undo.push(
      () => {
        term.write(LEAVE_SCREEN);
      },
      term.keys((data) => {
        const action = keyAction(data);
        if (action === 'quit') pause.stop();
        else if (action === 'refresh') pause.wake();
      }),
      term.onResize(() => {
        pause.wake();
      }),
    );
  }
  try {
    for (let frames = 0; ; ) {
      const frame = topFrame(read.ok ? read.snapshot : { problem: read.message }, { at: new Date(), intervalSec, ...(term.isTTY ? { size: term.size() } : {}) });
      term.write(term.isTTY ? redraw(frame) : `${frame.join('\n')}\n\n`);
      frames += 1;
      if (frames >= count || pause.stopped()) break;
      await pause.for(intervalSec * 1000);
      if (pause.stopped()) break;
      read = await readSnapshot(socket);
      if (pause.stopped()) break;
    }
  } finally {
    // Restore in reverse: keys off and the screen left before the signal handlers go.
    for (const u of undo.reverse()) u();
  }
  return EXIT.ok;
}

export const topCommand: Command = {
  name: 'top',
  summary: 'lvsd status refreshed in place, with rates per real server (q or Ctrl-C quits)',
  usage: 'top [--interval SECONDS] [--count N] [--socket PATH | --config FILE]',
  run: (argv, io) => runTop(argv, io, processTerminal()),
};
