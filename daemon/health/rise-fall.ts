// The per-target health state machine: rise/fall with keepalived's retry and alpha. Pure: no timers,
// no I/O; the clock is an argument. The record is mutated in place on purpose: at 10,000 targets
// checked every second, allocating a fresh state per check would be the scheduler's biggest cost.
// Only a transition allocates (it is an event that leaves the module).
import type { CheckResult, HealthState, Reason } from './types.js';

export interface RiseFallOptions {
  /** Time between check attempts. */
  intervalMs: number;
  /** Consecutive passed attempts that bring a down server up. */
  rise: number;
  /** Consecutive failed attempts that take an up server down. */
  fall: number;
  /** keepalived `retry`: extra tries inside one attempt before the attempt counts as failed. */
  retry: number;
  /** keepalived `delay_before_retry`: pause before each of those extra tries. */
  delayBeforeRetryMs: number;
  /** keepalived `warmup`: the first check lands at a random point in [0, warmup); 0 = spread over one interval. */
  warmupMs: number;
  /** keepalived `alpha`: start down until `rise` attempts pass (otherwise start up, optimistic). */
  alpha: boolean;
}

export interface TargetHealth {
  state: HealthState;
  /** When the current state began (clock of the caller, ms). */
  sinceMs: number;
  okStreak: number;
  failStreak: number;
  /** Tries used so far in the current attempt beyond the first (0 = not retrying). */
  retriesUsed: number;
  checks: number;
  failures: number;
  lastReason: Reason;
  lastDetail: string;
  lastLatencyMs: number;
  lastCheckMs: number;
  /** Weight reported by a dynamic check (exec dynamic form); undefined = the configured weight. */
  dynamicWeight: number | undefined;
  /** Percentage of the configured weight an agent reported (0 = drain); undefined = 100 %. */
  weightPercent: number | undefined;
  /** Added to the weight by a file check (value × weight); undefined = nothing added. */
  weightOffset: number | undefined;
}

export interface Transition {
  from: HealthState;
  to: HealthState;
  reason: Reason;
  detail: string;
  atMs: number;
  /** How long the target had been in `from`. */
  inPreviousStateMs: number;
}

export function newHealth(opts: Pick<RiseFallOptions, 'alpha'>, nowMs: number): TargetHealth {
  return {
    state: opts.alpha ? 'down' : 'up',
    sinceMs: nowMs,
    okStreak: 0,
    failStreak: 0,
    retriesUsed: 0,
    checks: 0,
    failures: 0,
    lastReason: 'initial',
    lastDetail: opts.alpha ? 'alpha: down until proven up' : 'assumed up until proven down',
    lastLatencyMs: 0,
    lastCheckMs: 0,
    dynamicWeight: undefined,
    weightPercent: undefined,
    weightOffset: undefined,
  };
}

/** Delay before a new target's first check; `rand01` in [0, 1) comes from the caller (testable). */
export function firstDelayMs(opts: Pick<RiseFallOptions, 'warmupMs' | 'intervalMs'>, rand01: number): number {
  const span = opts.warmupMs > 0 ? opts.warmupMs : opts.intervalMs;
  return Math.floor(span * rand01);
}

/** Delay before the next check after applyResult(): a retry pause while retrying, else one interval. */
export function nextDelayMs(h: TargetHealth, opts: Pick<RiseFallOptions, 'intervalMs' | 'delayBeforeRetryMs'>): number {
  return h.retriesUsed > 0 ? opts.delayBeforeRetryMs : opts.intervalMs;
}

/**
 * Folds one check result into the target's state. Returns the transition, if the result caused one.
 * A failed try with retries left only schedules a retry; the attempt counts as failed when the last
 * retry fails, and as passed as soon as any try passes (keepalived's semantics).
 */
export function applyResult(h: TargetHealth, opts: RiseFallOptions, r: CheckResult, nowMs: number): Transition | null {
  h.checks++;
  h.lastReason = r.reason;
  h.lastDetail = r.detail;
  h.lastLatencyMs = r.latencyMs;
  h.lastCheckMs = nowMs;
  if (!r.ok) {
    h.failures++;
    if (h.retriesUsed < opts.retry) {
      h.retriesUsed++;
      return null;
    }
    h.retriesUsed = 0;
    h.okStreak = 0;
    h.failStreak++;
    if (h.state === 'up' && h.failStreak >= opts.fall) return move(h, 'down', r, nowMs);
    return null;
  }
  h.retriesUsed = 0;
  h.failStreak = 0;
  h.okStreak++;
  if (r.weight !== undefined) h.dynamicWeight = r.weight;
  if (r.weightPercent !== undefined) h.weightPercent = r.weightPercent;
  if (r.weightOffset !== undefined) h.weightOffset = r.weightOffset;
  if (h.state === 'down' && h.okStreak >= opts.rise) return move(h, 'up', r, nowMs);
  return null;
}

function move(h: TargetHealth, to: HealthState, r: CheckResult, nowMs: number): Transition {
  const t: Transition = { from: h.state, to, reason: r.reason, detail: r.detail, atMs: nowMs, inPreviousStateMs: nowMs - h.sinceMs };
  h.state = to;
  h.sinceMs = nowMs;
  return t;
}

/** A lifecycle transition (removal, shutdown with omega): forces down with the given reason. */
export function forceDown(h: Pick<TargetHealth, 'state' | 'sinceMs'>, reason: Reason, detail: string, nowMs: number): Transition | null {
  if (h.state === 'down') return null;
  const t: Transition = { from: 'up', to: 'down', reason, detail, atMs: nowMs, inPreviousStateMs: nowMs - h.sinceMs };
  h.state = 'down';
  h.sinceMs = nowMs;
  return t;
}
