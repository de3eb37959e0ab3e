// Several checkers on one real server (keepalived: several checker blocks in one real_server, or one
// HTTP_GET with several url blocks): the server is up only while every checker is up, and each checker
// keeps its own rise/fall. Pure: the monitor owns the checkers' rise/fall records and calls settle()
// after any of them moved; this decides whether the server as a whole moved.
import type { CheckOptions } from './options.js';
import type { Transition } from './rise-fall.js';
import type { HealthState, Reason } from './types.js';

/** The server-level state: up while every checker is up. */
export interface ServerHealth {
  state: HealthState;
  /** When the current state began (clock of the caller, ms). */
  sinceMs: number;
}

/** Every checker up = up; one down = down. No checker (cannot happen: `check` is required) = up. */
export function combinedState(checkers: readonly { health: { state: HealthState } }[]): HealthState {
  for (const c of checkers) if (c.health.state === 'down') return 'down';
  return 'up';
}

/**
 * Folds the checkers' states into the server's. Returns the server's transition, if there is one;
 * `reason` and `detail` are those of the checker whose move decided it.
 */
export function settle(
  s: ServerHealth, checkers: readonly { health: { state: HealthState } }[], reason: Reason, detail: string, nowMs: number,
): Transition | null {
  const to = combinedState(checkers);
  if (to === s.state) return null;
  const t: Transition = { from: s.state, to, reason, detail, atMs: nowMs, inPreviousStateMs: nowMs - s.sinceMs };
  s.state = to;
  s.sinceMs = nowMs;
  return t;
}

/**
 * A short name for one checker, for logs, events and the panel when a server has several: "tcp",
 * "http GET /health", "dns A example.org", "exec /bin/check". Checkers of one type on one server
 * differ by the part that tells them apart for an operator (the url, the port).
 */
export function checkLabel(c: CheckOptions): string {
  const port = c.connectPort !== undefined ? ` :${c.connectPort}` : '';
  switch (c.type) {
    case 'http':
    case 'https':
      return `${c.type} GET ${c.http?.path ?? '/'}${port}`;
    case 'dns':
      return `dns ${c.dns?.type ?? 'A'} ${c.dns?.name ?? ''}${port}`;
    case 'exec':
      return `exec ${c.exec?.command ?? ''}`;
    case 'file':
      return `file ${c.file?.path ?? ''}`;
    default:
      return `${c.type}${port}`;
  }
}
