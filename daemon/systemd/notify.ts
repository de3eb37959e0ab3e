// systemd's sd_notify protocol, the pure half: what the environment asks for ($NOTIFY_SOCKET,
// $WATCHDOG_USEC, $WATCHDOG_PID), the socket address as sun_path bytes, and the datagram text
// (newline-separated KEY=VALUE, see sd_notify(3)). The sending lives in notifier.ts.

export interface NotifySettings {
  /** $NOTIFY_SOCKET: a path, or an abstract name written with a leading "@". null: not asked to notify. */
  socket: string | null;
  /** How often to send WATCHDOG=1: half of $WATCHDOG_USEC, as sd_watchdog_enabled(3) advises. */
  watchdogIntervalMs: number | null;
  /** Settings that were present but unusable, for the log. */
  problems: string[];
}

export function notifySettings(env: Readonly<Record<string, string | undefined>>, pid: number): NotifySettings {
  const problems: string[] = [];
  let socket: string | null = env.NOTIFY_SOCKET ?? null;
  if (socket !== null && !(socket.startsWith('/') || (socket.startsWith('@') && socket.length > 1))) {
    problems.push(`NOTIFY_SOCKET=${socket}: neither an absolute path nor an abstract "@name"; not notifying`);
    socket = null;
  }
  let watchdogIntervalMs: number | null = null;
  const usec = env.WATCHDOG_USEC;
  const forPid = env.WATCHDOG_PID;
  if (usec !== undefined && (forPid === undefined || Number(forPid) === pid)) {
    const n = /^\d+$/.test(usec) ? Number(usec) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) problems.push(`WATCHDOG_USEC=${usec}: not a positive number of microseconds; no watchdog pings`);
    else if (socket === null) problems.push('WATCHDOG_USEC is set but NOTIFY_SOCKET is not; no watchdog pings');
    else watchdogIntervalMs = Math.max(1, Math.floor(n / 2000));
  }
  return { socket, watchdogIntervalMs, problems };
}

/** sun_path's bytes for a $NOTIFY_SOCKET value: a path ends with NUL, "@name" becomes NUL + name (abstract). */
export function notifyAddress(socket: string): Buffer {
  const bytes = socket.startsWith('@') ? Buffer.concat([Buffer.alloc(1), Buffer.from(socket.slice(1))]) : Buffer.concat([Buffer.from(socket), Buffer.alloc(1)]);
  // 108 = sizeof(sun_path) on Linux.
  if (bytes.length > 108) throw new RangeError(`NOTIFY_SOCKET ${socket} is longer than a unix socket address can be (108 bytes)`);
  return bytes;
}

export type NotifyField = 'READY' | 'RELOADING' | 'STOPPING' | 'STATUS' | 'WATCHDOG' | 'MONOTONIC_USEC';

/** The datagram: one KEY=VALUE per line. A STATUS is one line, so newlines in it become spaces. */
export function notifyMessage(fields: readonly (readonly [NotifyField, string | number])[]): string {
  return fields.map(([k, v]) => `${k}=${String(v).replace(/[\r\n]+/g, ' ')}\n`).join('');
}

/** CLOCK_MONOTONIC in µs (process.hrtime reads CLOCK_MONOTONIC on Linux), for RELOADING's MONOTONIC_USEC. */
export function monotonicUsec(hrtimeNs: bigint): string {
  return (hrtimeNs / 1000n).toString();
}

export const readyMessage = (status: string): string => notifyMessage([['READY', 1], ['STATUS', status]]);
export const reloadingMessage = (status: string, hrtimeNs: bigint): string =>
  notifyMessage([['RELOADING', 1], ['MONOTONIC_USEC', monotonicUsec(hrtimeNs)], ['STATUS', status]]);
export const stoppingMessage = (status: string): string => notifyMessage([['STOPPING', 1], ['STATUS', status]]);
/** A watchdog ping, with the status only when it changed since the last one sent. */
export const watchdogMessage = (status: string | null): string => notifyMessage(status === null ? [['WATCHDOG', 1]] : [['WATCHDOG', 1], ['STATUS', status]]);
