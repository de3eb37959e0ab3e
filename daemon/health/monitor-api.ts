// The health monitor's public shapes: the targets and services it is given, the events it emits,
// the snapshots it reports, and the clock it runs on (injectable for tests).
import type { Logger } from 'pino';
import type { Probe } from './checkers/index.js';
import type { Notifier } from './notify.js';
import type { CheckOptions } from './options.js';
import type { HealthState, Reason } from './types.js';

/** One real server to check. `id` is its identity; everything else may change on reload. */
export interface HealthTarget {
  /** Unique and stable, e.g. "web/10.0.1.11:80". */
  id: string;
  /** Name of the virtual server it belongs to (quorum group). */
  service: string;
  /** Display name for logs and events (default: id). */
  name?: string;
  address: string;
  port: number;
  /** Configured weight; the live weight is the dynamic weight reported by the check, if any. */
  weight: number;
  check: CheckOptions;
  /**
   * Further checkers of the same server (keepalived: several checkers in one real_server, or the 2nd
   * and later url blocks of one HTTP_GET). The server is up only while `check` and every one of these
   * is up; each keeps its own interval, timeout and rise/fall.
   */
  moreChecks?: readonly CheckOptions[];
  /** keepalived notify_up / notify_down. */
  notify?: { up?: string; down?: string };
  /** keepalived omega: run down hooks (and emit down transitions) on removal and shutdown. */
  omega?: boolean;
  /** Fields every log line about this target carries (the director's: virtualServer, realServer). */
  logFields?: Record<string, string>;
}

export interface HealthService {
  name: string;
  /** Minimum summed live weight (default 1). */
  quorum?: number;
  /** default 0 */
  hysteresis?: number;
  /** keepalived quorum_up / quorum_down hooks. */
  notify?: { quorumUp?: string; quorumDown?: string };
  /** keepalived omega: run quorumDown on shutdown. */
  omega?: boolean;
}

/** What the director reads of one target to build the desired table (HealthMonitor.view()). */
export interface HealthView {
  /** false once the checker declared the server down; true when up. */
  up: boolean;
  /** A weight the checker reported (MISC_CHECK dynamic weight, agent), over the configured one. */
  dynamicWeight?: number;
}

export interface TransitionEvent {
  id: string;
  service: string;
  name: string;
  address: string;
  port: number;
  from: HealthState;
  to: HealthState;
  reason: Reason;
  detail: string;
  /** Wall-clock time of the transition (ms since the epoch). */
  at: number;
  /** How long the server had been in `from`. */
  inPreviousStateMs: number;
  /** Latency of the check that decided it (0 for lifecycle transitions). */
  latencyMs: number;
  /** Weight the server carries now: its live weight when up, 0 when down. */
  weight: number;
}

export interface WeightEvent {
  id: string;
  service: string;
  name: string;
  weight: number;
  previous: number;
  at: number;
  /** Why: the check's detail ("agent: 50%", "exit 7: weight 5") or "configuration changed". */
  detail: string;
}

export interface QuorumEvent {
  service: string;
  /** Quorum reached (true) or lost (false); lost means the sorry server takes over. */
  up: boolean;
  sorryServer: boolean;
  aliveWeight: number;
  quorum: number;
  hysteresis: number;
  at: number;
  inPreviousStateMs: number;
}

export interface RemovedEvent {
  id: string;
  service: string;
  name: string;
}

export interface MonitorEvents {
  transition: [TransitionEvent];
  weight: [WeightEvent];
  quorum: [QuorumEvent];
  removed: [RemovedEvent];
}

/** Timers and time, injectable so tests run on a virtual clock. */
export interface MonitorClock {
  /** Monotonic milliseconds. */
  now(): number;
  /** Wall-clock milliseconds since the epoch (event timestamps). */
  wall(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

export const realClock: MonitorClock = {
  now: () => performance.now(),
  wall: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (h) => {
    clearTimeout(h as NodeJS.Timeout);
  },
};

export interface HealthMonitorOptions {
  logger?: Logger;
  /** Checks in flight at most (default 1000). Due checks beyond it wait their turn in FIFO order. */
  concurrency?: number;
  clock?: MonitorClock;
  /** [0, 1) random source for the first-check spread (default Math.random). */
  random?: () => number;
  /** Runs notify hooks (default: /bin/sh -c, detached, env LVSD_*). */
  notifier?: Notifier;
  /** Builds a target's probe (default: the real checkers). Tests swap in fakes. */
  probeFactory?: (t: HealthTarget) => Probe;
  /**
   * Runs TCP and plain-HTTP checks in the native probe engine (daemon/health/native) when its addon
   * is built (default: true, unless probeFactory is given). The other checks use the JS checkers.
   */
  nativeProbes?: boolean;
}

/** One checker of a server that has several (TargetSnapshot.checkers). */
export interface CheckerSnapshot {
  /** "tcp", "http GET /health", … (all-checks.ts checkLabel). */
  label: string;
  type: CheckOptions['type'];
  state: HealthState;
  checks: number;
  failures: number;
  okStreak: number;
  failStreak: number;
  last: { at: number; reason: Reason; detail: string; latencyMs: number } | undefined;
}

export interface TargetSnapshot {
  id: string;
  service: string;
  name: string;
  address: string;
  port: number;
  /** The type of the first checker (`check`). */
  type: CheckOptions['type'];
  /** up only while every checker is up. */
  state: HealthState;
  /** Wall-clock time the current state began. */
  since: number;
  inStateMs: number;
  weight: number;
  liveWeight: number;
  checks: number;
  failures: number;
  okStreak: number;
  failStreak: number;
  /**
   * The result that explains the state: with several checkers, that of the first checker that is down
   * (its label leads the detail), else the newest.
   */
  last: { at: number; reason: Reason; detail: string; latencyMs: number } | undefined;
  /** Present only when the server has more than one checker: each one's own state. */
  checkers?: CheckerSnapshot[];
}

export interface ServiceSnapshot {
  name: string;
  quorumUp: boolean;
  sorryServer: boolean;
  aliveWeight: number;
  quorum: number;
  hysteresis: number;
  since: number;
  targets: number;
  /** keepalived ha_suspend: its checkers are not probed now (suspend()). */
  suspended: boolean;
}

export interface ReconcileResult {
  added: number;
  unchanged: number;
  updated: number;
  reconfigured: number;
  removed: number;
  /** Targets whose options were rejected (HealthOptionError messages). */
  errors: { id: string; message: string }[];
}

export interface MonitorStats {
  targets: number;
  running: number;
  queued: number;
  checksCompleted: number;
  timeouts: number;
  /** Checks that started more than 50 ms after their due time (scheduler falling behind). */
  lateStarts: number;
  maxLateMs: number;
  /** Targets checked by the native probe engine. */
  nativeTargets: number;
  /** Checks allowed in flight now (adaptive, at most the configured `concurrency`; see admission.ts). */
  concurrencyLimit: number;
  /** Times the limit was cut (congestion seen) and raised (clean and saturated). */
  concurrencyCuts: number;
  concurrencyRaises: number;
}
