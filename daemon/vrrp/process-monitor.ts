// track_process on a real host: one scan of /proc at start, then the kernel's process events (exec, fork,
// comm, exit) — no polling, as keepalived. Runs on the main side like track scripts; what changes goes to the
// engine as track messages. The counting and delays are process-track.ts's.
import { readdirSync, readFileSync } from 'node:fs';
import { ProcEvents } from '../net/proc-events.js';
import type { ProcEvent } from '../net/proc-connector.js';
import { ProcessTable, type Cause, type ProcInfo, type QuorumChange, type TrackProcessOptions } from './process-track.js';

/** comm and (when asked) cmdline of a process, or null when it is gone (or a zombie: empty cmdline). */
export function readProc(pid: number, withCmdline: boolean, root = '/proc'): ProcInfo | null {
  try {
    const comm = readFileSync(`${root}/${pid}/comm`, 'utf8').replace(/\n$/, '');
    if (!withCmdline) return { comm, argv: null };
    const raw = readFileSync(`${root}/${pid}/cmdline`, 'utf8');
    // A zombie (or a kernel thread) has no command line: keepalived does not count zombies.
    if (raw === '') return null;
    const argv = raw.split('\0');
    if (argv[argv.length - 1] === '') argv.pop();
    return { comm, argv };
  } catch {
    return null;
  }
}

export class ProcessMonitor {
  private readonly table: ProcessTable;
  private events: ProcEvents | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    trackers: Record<string, TrackProcessOptions>,
    private readonly onChange: (c: QuorumChange) => void,
    private readonly onError: (e: Error & { code?: string }) => void,
  ) {
    this.table = new ProcessTable(trackers);
  }

  start(): void {
    // Subscribe before the scan: a process started in between is then an event, not a miss.
    try {
      this.events = new ProcEvents({ event: (e) => { this.onEvent(e); }, error: (e) => { this.onError(e); } });
      this.events.listen();
    } catch (e) {
      this.onError(e instanceof Error ? e : new Error(String(e)));
    }
    const cmdline = this.table.needsCmdline;
    const now = Date.now();
    for (const d of readdirSync('/proc')) {
      if (!/^[1-9]\d*$/.test(d)) continue;
      const pid = Number(d);
      const p = readProc(pid, cmdline);
      if (p !== null) this.table.seen(pid, p, 'scan', now);
    }
    this.report(this.table.scanned(now));
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.events?.close();
    this.events = null;
  }

  private onEvent(e: ProcEvent): void {
    const now = Date.now();
    // Threads (pid ≠ tgid) are not processes: keepalived counts processes only.
    const seen = (pid: number, cause: Cause): QuorumChange[] => {
      const p = readProc(pid, this.table.needsCmdline);
      return p === null ? this.table.gone(pid, now) : this.table.seen(pid, p, cause, now);
    };
    switch (e.type) {
      case 'exec':
        if (e.pid === e.tgid) this.report(seen(e.pid, 'exec'));
        break;
      case 'fork':
        if (e.childPid === e.childTgid) this.report(seen(e.childPid, 'fork'));
        break;
      case 'comm':
        if (e.pid === e.tgid) this.report(seen(e.pid, 'exec'));
        break;
      case 'exit':
        if (e.pid === e.tgid) this.report(this.table.gone(e.pid, now));
        break;
      case 'ack':
        break;
    }
  }

  private report(changes: QuorumChange[]): void {
    for (const c of changes) this.onChange(c);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const at = this.table.deadline();
    if (at === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.report(this.table.due(Date.now()));
    }, Math.max(0, at - Date.now()));
  }
}
