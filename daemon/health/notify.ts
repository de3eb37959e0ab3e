// keepalived-style notify hooks: a shell command run (not awaited) on a real server's up/down or a
// virtual server's quorum change. The event rides in environment variables; a hook that hangs is
// killed after 30 s so hooks never accumulate.
import { spawn } from 'node:child_process';
import type { Logger } from 'pino';

export type Notifier = (command: string, env: Readonly<Record<string, string>>) => void;

export function shellNotifier(logger: Logger, killAfterMs = 30_000): Notifier {
  return (command, env) => {
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
    const timer = setTimeout(() => {
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      logger.warn({ command, ...env }, 'notify hook still running after %d ms: killed', killAfterMs);
    }, killAfterMs);
    timer.unref();
    child.once('error', (e) => {
      clearTimeout(timer);
      logger.error({ command, err: e.message, ...env }, 'notify hook could not start');
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      if (code !== 0) logger.warn({ command, code, signal: sig, ...env }, 'notify hook failed');
    });
    child.unref();
  };
}
