// keepalived's notify FIFO (notify_fifo / vrrp_notify_fifo): one line per event, in order, for the tools
// written against it. The format is keepalived 2.2.7's (vrrp_notify.c notify_fifo(), and measured in
// test/netns/vrrp-notify-fifo.test.ts):  INSTANCE "VI_1" MASTER 150  /  GROUP "G" BACKUP 0  /
// INSTANCE "VI_1" MASTER_RX_LOWER_PRI 150. As keepalived: the FIFO is created (mode 0644) when it does not
// exist and removed on close if we created it; it is opened read-write and non-blocking, so writing never
// waits for a reader and no reader is needed; the optional script is started with the FIFO's path as its
// last argument to read it, and is stopped on close.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { splitCommand } from './notify.js';

export type FifoEvent = 'MASTER' | 'BACKUP' | 'FAULT' | 'STOP' | 'DELETED' | 'MASTER_RX_LOWER_PRI';

/** One event line, newline included (pure). Groups always carry priority 0, as in keepalived. */
export function fifoLine(kind: 'INSTANCE' | 'GROUP', name: string, event: FifoEvent, priority: number): string {
  return `${kind} "${name}" ${event} ${kind === 'GROUP' ? 0 : priority}\n`;
}

export interface NotifyFifoOptions {
  path: string;
  /** keepalived notify_fifo_script: started once with the path appended, to read the FIFO. */
  script?: string;
}

export class NotifyFifo {
  private fd: number | null = null;
  private created = false;
  private reader: ChildProcess | null = null;
  /** Lines dropped because the FIFO was full (nobody reading): counted, never waited for. */
  dropped = 0;

  constructor(
    private readonly o: NotifyFifoOptions,
    private readonly warn: (msg: string, fields: Record<string, unknown>) => void,
    /** Who the reader script runs as (script_user / scriptSecurity); absent = ourselves. */
    private readonly runAs?: { uid: number; gid: number },
  ) {}

  open(): void {
    let exists = true;
    try {
      if (!lstatSync(this.o.path).isFIFO()) throw new Error(`${this.o.path} exists and is not a FIFO`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      exists = false;
    }
    if (!exists) {
      // Node has no mkfifo(3); coreutils' mkfifo is everywhere lvsd runs.
      execFileSync('mkfifo', ['-m', '0644', this.o.path]);
      this.created = true;
    }
    if (this.o.script !== undefined) {
      const [cmd, ...args] = splitCommand(this.o.script);
      if (cmd !== undefined) {
        const id = this.runAs === undefined ? {} : { uid: this.runAs.uid, gid: this.runAs.gid };
        this.reader = spawn(cmd, [...args, this.o.path], { stdio: 'ignore', ...id });
        this.reader.on('error', (e) => {
          this.warn(`notify FIFO script ${cmd} failed`, { err: e.message });
        });
      }
    }
    this.fd = openSync(this.o.path, constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  }

  write(line: string): void {
    if (this.fd === null) return;
    try {
      writeSync(this.fd, line);
    } catch (e) {
      // EAGAIN: a full pipe. The VRRP events must not wait for a slow reader (keepalived ignores it too).
      this.dropped++;
      if (this.dropped === 1 || this.dropped % 100 === 0) this.warn('notify FIFO full: event line dropped', { path: this.o.path, dropped: this.dropped, err: e instanceof Error ? e.message : String(e) });
    }
  }

  close(): void {
    // Unlinked first, so a reader that loops reopening the path cannot reopen this FIFO (keepalived alike).
    if (this.created) {
      try {
        unlinkSync(this.o.path);
      } catch {
        /* gone already */
      }
      this.created = false;
    }
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.reader?.kill('SIGTERM');
    this.reader = null;
  }
}
