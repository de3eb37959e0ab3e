// keepalived-style notify hooks, run on the main thread (never inside the VRRP engine process): for each
// transition the specific hook (master/backup/fault/stop) runs first, then `any` with
// `INSTANCE|GROUP name STATE priority` appended. One queue per instance or group, so the hooks of
// one object run in order and never concurrently; different objects do not wait for each other.
import { execFile } from 'node:child_process';
import type { NotifyOptions } from './options.js';

export type NotifyState = 'MASTER' | 'BACKUP' | 'FAULT' | 'STOP';

export interface NotifyResult {
  command: string;
  args: string[];
  code: number | null;
  error?: string;
}

/** Splits a hook line into program and arguments: whitespace separated, "double" or 'single' quotes group. */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m !== null; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

/** The hook invocations for one transition, in order (pure, for tests). */
export function notifyCalls(kind: 'INSTANCE' | 'GROUP', name: string, state: NotifyState, priority: number, n: NotifyOptions): string[][] {
  const calls: string[][] = [];
  const specific = { MASTER: n.master, BACKUP: n.backup, FAULT: n.fault, STOP: n.stop }[state];
  if (specific !== undefined && specific.trim() !== '') calls.push(splitCommand(specific));
  if (n.any !== undefined && n.any.trim() !== '') calls.push([...splitCommand(n.any), kind, name, state, String(priority)]);
  return calls;
}

export class NotifyRunner {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly onResult: (object: string, r: NotifyResult) => void,
    private readonly timeoutMs = 30_000,
  ) {}

  run(kind: 'INSTANCE' | 'GROUP', name: string, state: NotifyState, priority: number, n: NotifyOptions): void {
    this.enqueue(kind, name, notifyCalls(kind, name, state, priority, n));
  }

  /** keepalived notify_master_rx_lower_pri: the one hook, without arguments, in the instance's queue. */
  runMasterRxLowerPri(name: string, n: NotifyOptions): void {
    const line = n.masterRxLowerPri;
    if (line !== undefined && line.trim() !== '') this.enqueue('INSTANCE', name, [splitCommand(line)]);
  }

  private enqueue(kind: 'INSTANCE' | 'GROUP', name: string, calls: string[][]): void {
    if (calls.length === 0) return;
    const key = `${kind}:${name}`;
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(async () => {
      for (const [cmd, ...args] of calls) {
        if (cmd === undefined) continue;
        this.onResult(name, await this.exec(cmd, args));
      }
    });
    this.queues.set(key, next);
  }

  private exec(command: string, args: string[]): Promise<NotifyResult> {
    return new Promise((resolve) => {
      execFile(command, args, { timeout: this.timeoutMs }, (err) => {
        if (err === null) {
          resolve({ command, args, code: 0 });
          return;
        }
        const code = typeof err.code === 'number' ? err.code : null;
        resolve({ command, args, code, error: err.message });
      });
    });
  }

  /** Resolves when every queued hook has finished. */
  async idle(): Promise<void> {
    await Promise.all(this.queues.values());
  }
}
