// Tells systemd how lvsd is doing (Type=notify): READY=1 once it serves, RELOADING=1 … READY=1 around
// a reload, STOPPING=1 on the way out, STATUS=… lines, and WATCHDOG=1 pings while the main loop runs
// and the daemon's own check passes. One datagram per message through the native addon; a failed send
// is logged once per distinct error and never stops lvsd.
import { native } from '../net/native.js';
import { notifyAddress, notifySettings, readyMessage, reloadingMessage, stoppingMessage, watchdogMessage } from './notify.js';

export interface NotifierLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** What `lvsd run` tells its service manager. */
export interface ServiceNotifier {
  ready(status: string): void;
  reloading(status: string): void;
  stopping(status: string): void;
  /**
   * Pings the watchdog while `check` resolves null within half the ping interval (it is given a quarter
   * for its own waits); a problem it names (or no answer) skips the ping, so a hung part gets lvsd restarted. `status` rides along when it changed.
   */
  startWatchdog(check: (timeoutMs: number) => Promise<string | null>, status: () => string): void;
  close(): void;
}

export type DatagramSender = (address: Buffer, message: Buffer) => void;

const nativeSender: DatagramSender = (address, message) => {
  native().sendUnixDatagram(address, message);
};

export class SystemdNotifier implements ServiceNotifier {
  private timer: NodeJS.Timeout | null = null;
  private lastStatus: string | null = null;
  private lastError: string | null = null;
  private lastProblem: string | null = null;
  private closed = false;

  private constructor(
    private readonly address: Buffer,
    private readonly watchdogMs: number | null,
    private readonly log: NotifierLog,
    private readonly send: DatagramSender,
  ) {}

  /** The notifier $NOTIFY_SOCKET asks for, or null when lvsd does not run under Type=notify. */
  static fromEnv(env: NodeJS.ProcessEnv, log: NotifierLog, send: DatagramSender = nativeSender): SystemdNotifier | null {
    const s = notifySettings(env, process.pid);
    for (const p of s.problems) log.warn({ systemd: true }, p);
    if (s.socket === null) return null;
    let address: Buffer;
    try {
      address = notifyAddress(s.socket);
    } catch (e) {
      log.warn({ systemd: true }, e instanceof Error ? e.message : String(e));
      return null;
    }
    // sd_notify(3)'s unset_environment: notify hooks and track scripts must not speak for lvsd.
    delete env.NOTIFY_SOCKET;
    delete env.WATCHDOG_USEC;
    delete env.WATCHDOG_PID;
    log.info({ systemd: true, socket: s.socket, watchdogIntervalMs: s.watchdogIntervalMs }, `notifying systemd at ${s.socket}${s.watchdogIntervalMs === null ? '' : `, watchdog ping every ${s.watchdogIntervalMs} ms`}`);
    return new SystemdNotifier(address, s.watchdogIntervalMs, log, send);
  }

  ready(status: string): void {
    this.lastStatus = status;
    this.post(readyMessage(status));
  }

  reloading(status: string): void {
    this.lastStatus = status;
    this.post(reloadingMessage(status, process.hrtime.bigint()));
  }

  stopping(status: string): void {
    this.lastStatus = status;
    this.post(stoppingMessage(status));
  }

  startWatchdog(check: (timeoutMs: number) => Promise<string | null>, status: () => string): void {
    const every = this.watchdogMs;
    if (every === null || this.timer !== null) return;
    const tick = async (): Promise<void> => {
      // Next tick first: a steady cadence. The check gets half the interval, so checks never overlap.
      const problem = await Promise.race([
        check(Math.ceil(every / 4)).catch((e: unknown) => `watchdog check failed: ${e instanceof Error ? e.message : String(e)}`),
        new Promise<string>((r) => setTimeout(() => { r(`watchdog check did not answer within ${Math.ceil(every / 2)} ms`); }, Math.ceil(every / 2)).unref()),
      ]);
      if (this.closed) return;
      if (problem !== null) {
        if (problem !== this.lastProblem) this.log.warn({ systemd: true, problem }, `watchdog ping withheld: ${problem}`);
        this.lastProblem = problem;
      } else {
        if (this.lastProblem !== null) this.log.info({ systemd: true }, 'watchdog pings resumed');
        this.lastProblem = null;
        const now = status();
        this.post(watchdogMessage(now === this.lastStatus ? null : now));
        this.lastStatus = now;
      }
    };
    const schedule = (): void => {
      this.timer = setTimeout(() => {
        if (this.closed) return;
        schedule();
        void tick();
      }, every);
      this.timer.unref();
    };
    schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private post(message: string): void {
    try {
      this.send(this.address, Buffer.from(message));
      this.lastError = null;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (why !== this.lastError) this.log.warn({ systemd: true, err: why }, `could not notify systemd: ${why}`);
      this.lastError = why;
    }
  }
}
