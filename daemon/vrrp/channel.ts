// The VRRP engine's own process, seen from lvsd's main process: a typed message channel to it.
// keepalived runs VRRP in a child of its own for the same reason: a separate process has its own heap,
// GC and helper threads, so the checkers' allocation pressure cannot stall an advert (a worker thread
// shares V8's GC helper threads with the main thread; bench/health-vrrp-jitter.ts measured 22–62 ms p99).
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { FromWorker, ToWorker } from './protocol.js';

export interface EngineChannel {
  readonly pid: number | undefined;
  post(m: ToWorker): void;
  on(event: 'message', fn: (m: FromWorker) => void): this;
  /** The process is gone: `how` says why ("code 1", "signal SIGKILL"). */
  on(event: 'exit', fn: (how: string) => void): this;
  once(event: 'exit', fn: (how: string) => void): this;
  off(event: 'message', fn: (m: FromWorker) => void): this;
  off(event: 'exit', fn: (how: string) => void): this;
  /** SIGKILL, resolved when the process is gone (at once when it already is). */
  kill(): Promise<void>;
}

/** Environment the engine must not see: systemd's notify/watchdog and socket-activation variables are the main process's. */
const PRIVATE_ENV = /^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID|LISTEN_FDS|LISTEN_PID|LISTEN_FDNAMES|LVSD_VRRP_ENGINE_FLAGS)$/;

/**
 * V8 flags of the engine process: none. A small young generation (--max-semi-space-size=1) made no
 * measurable difference to its jitter or RSS (docs/health.md); $LVSD_VRRP_ENGINE_FLAGS sets some for
 * bench/health-vrrp-jitter.ts --engine-flags. Not the main process's own flags (fork's default).
 */
const DEFAULT_EXEC_ARGV: string[] = [];

function engineExecArgv(): string[] {
  const flags = process.env.LVSD_VRRP_ENGINE_FLAGS;
  return flags === undefined ? DEFAULT_EXEC_ARGV : flags.split(/\s+/).filter((f) => f !== '');
}

class ProcessChannel extends EventEmitter implements EngineChannel {
  private gone = false;
  private readonly exited: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    super();
    this.exited = new Promise((resolve) => {
      const gone = (how: string): void => {
        if (this.gone) return;
        this.gone = true;
        this.emit('exit', how);
        resolve();
      };
      child.once('exit', (code, signal) => {
        gone(signal === null ? `code ${String(code)}` : `signal ${signal}`);
      });
      // A process that never started has no 'exit'; a send on a closed channel is followed by one.
      child.on('error', (e) => {
        if (child.pid === undefined) gone(`not started: ${e.message}`);
      });
    });
    // The engine sends FromWorker messages only (engine-process.ts).
    child.on('message', (m) => {
      this.emit('message', m);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  post(m: ToWorker): void {
    if (!this.gone && this.child.connected) this.child.send(m);
  }

  kill(): Promise<void> {
    if (!this.gone) this.child.kill('SIGKILL');
    return this.exited;
  }
}

/** Starts the engine process (daemon/vrrp/engine-process.js); the first message it gets is `start`. */
export function forkEngine(): EngineChannel {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!PRIVATE_ENV.test(k)) env[k] = v;
  const child = fork(fileURLToPath(new URL('./engine-process.js', import.meta.url)), [], {
    serialization: 'advanced',
    // Its logs travel as messages; stdout/stderr stay lvsd's own for what escapes them (a crash's stack).
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: engineExecArgv(),
    env,
  });
  return new ProcessChannel(child);
}
