// keepalived-style notify hooks, run on the main thread (never inside the VRRP engine process): for each
// transition the specific hook (master/backup/fault/stop) runs first, then `any` with
// `INSTANCE|GROUP name STATE priority` appended. One queue per instance or group, so the hooks of
// one object run in order and never concurrently; different objects do not wait for each other.
import { execFile } from 'node:child_process';
import type { NotifyOptions } from './options.js';

export type NotifyState = 'MASTER' | 'BACKUP' | 'FAULT' | 'STOP' | 'DELETED';

/**
 * What a reload that removes an instance tells its hooks and the FIFO, as keepalived 2.2.7 does (vrrp.c
 * clear_diff_vrrp, vrrp_notify.c send_instance_notifies; test/netns/vrrp-notify-deleted.test.ts): FAULT by
 * default — nothing when the instance was in FAULT already — and DELETED with notify_deleted, whatever its state
 * was. keepalived picks the specific hook while the state still reads DELETED, so a FAULT said this way runs
 * `any` but not the fault hook (measured). null: nothing is said.
 */
export function removalNotify(from: string, notifyDeleted: boolean, n: NotifyOptions): { state: NotifyState; hooks: NotifyOptions } | null {
  if (notifyDeleted) return { state: 'DELETED', hooks: n };
  if (from === 'FAULT') return null;
  const users = n.users?.any === undefined ? {} : { users: { any: n.users.any } };
  return { state: 'FAULT', hooks: n.any === undefined ? {} : { any: n.any, ...users } };
}

export interface NotifyResult {
  command: string;
  args: string[];
  code: number | null;
  error?: string;
}

/**
 * Decides who runs a script and whether it may run (script-security.ts): `user` is the hook's own, if any.
 * `unsafe` says why a script that still runs is unsafe (enable_script_security off), for a warning.
 */
export type ScriptGate = (program: string, user: string | undefined) => { uid: number; gid: number; unsafe?: string } | { refused: string };

/** The notify option key of a state's specific hook. */
export type HookKey = 'master' | 'backup' | 'fault' | 'stop' | 'deleted' | 'any' | 'masterRxLowerPri';
const HOOK_OF: Record<NotifyState, HookKey> = { MASTER: 'master', BACKUP: 'backup', FAULT: 'fault', STOP: 'stop', DELETED: 'deleted' };

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
  const specific = n[HOOK_OF[state]];
  if (specific !== undefined && specific.trim() !== '') calls.push(splitCommand(specific));
  if (n.any !== undefined && n.any.trim() !== '') calls.push([...splitCommand(n.any), kind, name, state, String(priority)]);
  return calls;
}

export class NotifyRunner {
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly onResult: (object: string, r: NotifyResult) => void,
    private readonly timeoutMs = 30_000,
    /** Absent: every hook runs as the daemon's own user, unchecked. */
    private readonly gate?: ScriptGate,
  ) {}

  run(kind: 'INSTANCE' | 'GROUP', name: string, state: NotifyState, priority: number, n: NotifyOptions): void {
    const calls = notifyCalls(kind, name, state, priority, n);
    // notifyCalls puts the specific hook first, `any` second: their users follow the same order.
    const specific = n[HOOK_OF[state]];
    const users = [...(specific !== undefined && specific.trim() !== '' ? [n.users?.[HOOK_OF[state]]] : []), n.users?.any];
    this.enqueue(kind, name, calls.map((argv, i) => ({ argv, user: users[i] })));
  }

  /** keepalived notify_master_rx_lower_pri: the one hook, without arguments, in the instance's queue. */
  runMasterRxLowerPri(name: string, n: NotifyOptions): void {
    const line = n.masterRxLowerPri;
    if (line !== undefined && line.trim() !== '') this.enqueue('INSTANCE', name, [{ argv: splitCommand(line), user: n.users?.masterRxLowerPri }]);
  }

  private enqueue(kind: 'INSTANCE' | 'GROUP', name: string, calls: { argv: string[]; user: string | undefined }[]): void {
    if (calls.length === 0) return;
    const key = `${kind}:${name}`;
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(async () => {
      for (const { argv: [cmd, ...args], user } of calls) {
        if (cmd === undefined) continue;
        const g = this.gate?.(cmd, user);
        if (g !== undefined && 'refused' in g) {
          this.onResult(name, { command: cmd, args, code: null, error: `not run: ${g.refused}` });
          continue;
        }
        this.onResult(name, await this.exec(cmd, args, g));
      }
    });
    this.queues.set(key, next);
  }

  private exec(command: string, args: string[], as?: { uid: number; gid: number }): Promise<NotifyResult> {
    return new Promise((resolve) => {
      const id = as === undefined || (as.uid === process.getuid?.() && as.gid === process.getgid?.()) ? {} : { uid: as.uid, gid: as.gid };
      execFile(command, args, { timeout: this.timeoutMs, ...id }, (err) => {
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
