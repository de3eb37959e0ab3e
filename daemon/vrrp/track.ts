// vrrp_script and track_file, run on the main thread; results go to the VRRP engine process as messages.
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { trackFileValue } from '../health/checkers/file-value.js';
import { trackFileHead } from '../health/checkers/file-head.js';
import { delimiter, join } from 'node:path';
import { splitCommand } from './notify.js';
import type { TrackScriptOptions } from './options.js';

/** rise/fall counting (keepalived): `rise` successes in a row to pass, `fall` failures in a row to fail. Pure. */
export class RiseFall {
  private okRun = 0;
  private failRun = 0;
  state: boolean | null = null;

  constructor(
    private readonly rise: number,
    private readonly fall: number,
  ) {}

  /** Feeds one result; returns the new state when it changed. The first result decides at once. */
  push(ok: boolean): boolean | null {
    if (ok) {
      this.okRun++;
      this.failRun = 0;
    } else {
      this.failRun++;
      this.okRun = 0;
    }
    const before = this.state;
    if (before === null) this.state = ok;
    else if (!before && this.okRun >= this.rise) this.state = true;
    else if (before && this.failRun >= this.fall) this.state = false;
    return this.state !== before ? this.state : null;
  }
}

/**
 * Why a track script's program cannot run at all (not found, not a file, not executable), or null when it can.
 * keepalived checks this when it loads the config and disables such a script ("Disabling track script … since
 * not found/accessible"): it then affects no instance, instead of failing for ever. A bare name is looked up in
 * PATH, as execFile would.
 */
export function unrunnable(command: string, path = process.env.PATH ?? ''): string | null {
  const [cmd] = splitCommand(command);
  if (cmd === undefined) return 'empty command';
  const candidates = cmd.includes('/') ? [cmd] : path.split(delimiter).filter((d) => d !== '').map((d) => join(d, cmd));
  let why = `${cmd} not found${cmd.includes('/') ? '' : ' in PATH'}`;
  for (const c of candidates) {
    try {
      if (!statSync(c).isFile()) {
        why = `${c} is not a file`;
        continue;
      }
      accessSync(c, constants.X_OK);
      return null;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EACCES') why = `${c} is not executable`;
    }
  }
  return why;
}

export class ScriptTracker {
  private timer: NodeJS.Timeout | null = null;
  private readonly rf: RiseFall;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly o: Required<TrackScriptOptions>,
    private readonly onChange: (name: string, ok: boolean, detail: string) => void,
    /** Run as this uid:gid (script_user / the script's user); absent = the daemon's own. */
    private readonly as?: { uid: number; gid: number },
  ) {
    this.rf = new RiseFall(o.rise, o.fall);
  }

  start(): void {
    const tick = (): void => {
      const [cmd, ...args] = splitCommand(this.o.command);
      if (cmd === undefined) return;
      const as = this.as;
      const id = as === undefined || (as.uid === process.getuid?.() && as.gid === process.getgid?.()) ? {} : { uid: as.uid, gid: as.gid };
      execFile(cmd, args, { timeout: this.o.timeoutMs, ...id }, (err) => {
        if (this.stopped) return;
        const ok = err === null;
        const changed = this.rf.push(ok);
        if (changed !== null) this.onChange(this.name, changed, ok ? 'exit 0' : err.killed ? 'timed out' : `exit ${String(err.code)}`);
        this.timer = setTimeout(tick, this.o.intervalMs);
      });
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
  }
}

/**
 * Reads an integer from a file every interval, as keepalived's track_file does (trackFileValue: strtol base 0,
 * so "0x10" is 16 and "010" is 8; a missing or unreadable file counts as 0; an out-of-range number is ignored).
 */
export class FileTracker {
  private timer: NodeJS.Timeout | null = null;
  private last: number | null = null;

  constructor(
    readonly path: string,
    private readonly onChange: (path: string, value: number) => void,
    private readonly intervalMs = 500,
  ) {}

  start(): void {
    let reading = false;
    const tick = async (): Promise<void> => {
      // One read at a time: a slow read finishing after a newer one would put the older value back.
      if (reading) return;
      reading = true;
      const v = trackFileValue(await trackFileHead(this.path));
      reading = false;
      if (v !== undefined && v !== this.last) {
        this.last = v;
        this.onChange(this.path, v);
      }
    };
    void tick();
    this.timer = setInterval(() => void tick(), this.intervalMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }
}
