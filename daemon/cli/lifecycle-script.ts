// keepalived's startup_script and shutdown_script (core/main.c), as keepalived 2.2.7 runs them, measured
// here (test/netns/lifecycle-scripts.test.ts): the startup script runs before anything starts and the
// daemon waits for it; the shutdown script runs once everything stopped (the VIPs are gone) and the daemon
// exits after it. Either one runs in a process group of its own with the daemon's environment and no
// arguments of its own; a failing one is logged; at its timeout the group gets SIGTERM, SIGKILL 2 s later,
// and the daemon goes on. Who runs it, and whether it may, is the VRRP scripts' gate (script_user,
// enable_script_security).
import { spawn } from 'node:child_process';
import type { LifecycleScriptConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { gateScript } from '../vrrp/script-security.js';
import { splitCommand } from '../vrrp/notify.js';

export type LifecycleWhen = 'startup' | 'shutdown';

/** How a run ended: its exit code or signal, a timeout, or why it did not run. */
export type LifecycleOutcome = { exit: number | null; signal: NodeJS.Signals | null; timedOut: boolean } | { notRun: string };

const KILL_AFTER_MS = 2000;

export async function runLifecycleScript(when: LifecycleWhen, s: LifecycleScriptConfig, env: { scriptUser: string | undefined; scriptSecurity: boolean; log: Logger }): Promise<LifecycleOutcome> {
  const argv = splitCommand(s.command);
  const [program = '', ...args] = argv;
  const gate = gateScript(program, s.user ?? env.scriptUser, env.scriptSecurity);
  if (gate.who === null || !gate.verdict.run) {
    const why = gate.verdict.run ? '' : gate.verdict.reason;
    env.log.error({ script: program, reason: why }, `${when} script not run: ${why}`);
    return { notRun: why };
  }
  if (gate.verdict.unsafe !== undefined) env.log.warn({ script: program, unsafe: gate.verdict.unsafe }, `SECURITY VIOLATION - ${when} script ${program} runs as root from an unsafe path (${gate.verdict.unsafe}) and script security is not enabled (vrrp.scriptSecurity)`);
  env.log.info({ script: program }, `running ${when} script ${program}`);
  const mine = gate.who.uid === (process.getuid?.() ?? 0) && gate.who.gid === (process.getgid?.() ?? 0);
  return new Promise((resolve) => {
    const child = spawn(gate.verdict.run ? gate.verdict.path : program, args, { stdio: 'ignore', detached: true, ...(mine ? {} : { uid: gate.who.uid, gid: gate.who.gid }) });
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    const group = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        /* the group is gone already */
      }
    };
    timers.push(
      setTimeout(() => {
        timedOut = true;
        env.log.warn({ script: program, timeoutMs: s.timeoutMs }, `${when} script timed out after ${s.timeoutMs} ms: SIGTERM to its process group`);
        group('SIGTERM');
        timers.push(setTimeout(() => { group('SIGKILL'); }, KILL_AFTER_MS));
      }, s.timeoutMs),
    );
    const done = (o: LifecycleOutcome): void => {
      for (const t of timers) clearTimeout(t);
      resolve(o);
    };
    child.once('error', (e) => {
      env.log.error({ script: program, err: e.message }, `${when} script could not start: ${e.message}`);
      done({ notRun: e.message });
    });
    child.once('exit', (code, signal) => {
      // keepalived too: a script ended by the timeout's SIGTERM leaves no children behind.
      if (timedOut) group('SIGKILL');
      if (code === 0) env.log.info({ script: program }, `${when} script succeeded`);
      else env.log.warn({ script: program, exit: code, signal }, `${when} script failed, ${code !== null ? `status ${code}` : `signal ${signal ?? '?'}`}; lvsd goes on`);
      done({ exit: code, signal, timedOut });
    });
  });
}

/** The longest a shutdown script can hold the stop: its timeout and the SIGKILL grace after it. */
export function lifecycleBudgetMs(s: LifecycleScriptConfig | undefined): number {
  return s === undefined ? 0 : s.timeoutMs + KILL_AFTER_MS;
}
