// MISC_CHECK: run a command; exit 0 = up, 1 (or anything else) = down. The dynamic form
// (keepalived misc_dynamic): exit 0 = up at the configured weight, 1 = down, 2..255 = up with
// weight exit-2. The command runs in its own process group so a timeout kills it and its children.
import { spawn } from 'node:child_process';
import { fail, OK_VERDICT } from '../types.js';
import type { Endpoint, ExecCheckOptions } from '../options.js';
import { settleOnce, type Probe } from './probe.js';

export function execProbe(ep: Endpoint, o: ExecCheckOptions, timeoutMs: number): Probe {
  if (o.command.trim() === '') throw new Error('command: empty');
  const env = {
    ...process.env,
    LVSD_RS_ADDRESS: ep.host,
    LVSD_RS_PORT: String(ep.port),
    LVSD_CHECK_TIMEOUT_MS: String(timeoutMs),
  };
  const timedOut = fail('timeout', `command still running after ${timeoutMs} ms (killed)`);
  return (signal) =>
    new Promise((resolve) => {
      const child = spawn('/bin/sh', ['-c', o.command], { detached: true, stdio: 'ignore', env });
      const done = settleOnce(
        signal,
        resolve,
        () => {
          if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
            try {
              process.kill(-child.pid, 'SIGKILL');
            } catch {
              /* already gone */
            }
          }
        },
        () => timedOut,
      );
      child.once('error', (e) => {
        done(fail('error', `cannot run ${o.command}: ${e.message}`));
      });
      child.once('exit', (code, sig) => {
        if (code === null) done(fail('exit-code', `killed by ${sig ?? 'a signal'}`));
        else if (code === 0) done(OK_VERDICT);
        else if (o.dynamicWeight === true && code >= 2) done({ ok: true, reason: 'ok', detail: `exit ${code}: weight ${code - 2}`, weight: code - 2 });
        else done(fail('exit-code', `exit ${code}`));
      });
    });
}
