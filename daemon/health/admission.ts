// Adaptive admission control for health checks in flight: an AIMD limit between a floor and the
// configured `concurrency` (the ceiling). Pure: the monitor feeds it one sample per verdict.
//
// Why: too many checks in flight on a slow CPU is congestion collapse (answers sit unread until every
// check passes its deadline and every target is marked down); too few and checks queue. The right
// number depends on the machine and its load, so the monitor finds it instead of the operator.
//
// The signal must tell local congestion from dead servers. A dead server times out on every check,
// whatever the limit, so only these count as congestion:
//   - an answer (success or refusal) that took more than `slowFraction` of its timeout and more than
//     twice the target's usual answer time: the time went into our own queues, the server answered (a
//     server slow by nature is judged against itself);
//   - a "fresh" timeout (the target answered its previous check, or has had none), but only in a window
//     where the answers that did come back were mostly slow, or none came back at all (collapse).
//     Timeouts beside fast answers are dead servers, not us. A target that keeps timing out is dead or
//     hung and is ignored altogether, so a thousand dead targets never throttle the rest.
// Decisions are taken once per window (about one timeout long), on the share of congested samples:
// a few slow answers stay under `cutShare` and do not move the limit.
export interface AdmissionOptions {
  /** Upper bound: the configured `concurrency`. */
  ceiling: number;
  /** Lower bound (default 16, or the ceiling when smaller). */
  floor?: number;
  /** An answer slower than this share of its timeout counts as congestion (default 0.5). */
  slowFraction?: number;
  /** Share of congested samples in a window that cuts the limit (default 0.25). */
  cutShare?: number;
  /** Multiplicative decrease (default 0.7). */
  decrease?: number;
  /** Additive increase per clean window in which the limit was reached (default 16). */
  increase?: number;
  /** Fewest samples a window needs before it decides (default 8). */
  minSamples?: number;
}

export interface AdmissionSample {
  /** Start to verdict, ms. */
  latencyMs: number;
  timeoutMs: number;
  /** The target's usual answer time (0: not known yet); an answer is slow only past twice this too. */
  baselineMs: number;
  /** The check hit its deadline with no answer. */
  timedOut: boolean;
  /** The target answered its previous check (or this is its first). */
  answeredBefore: boolean;
  /** Checks were waiting for a slot when this one finished (the limit was binding). */
  saturated: boolean;
}

export class AdmissionLimit {
  private readonly ceiling: number;
  private readonly floor: number;
  private readonly slowFraction: number;
  private readonly cutShare: number;
  private readonly decrease: number;
  private readonly increase: number;
  private readonly minSamples: number;
  private current: number;
  private windowStart = -Infinity;
  private windowMs = 0;
  private fast = 0;
  private slow = 0;
  private freshTimeouts = 0;
  private saturated = false;
  /** Cuts and raises so far (stats). */
  cuts = 0;
  raises = 0;

  constructor(opts: AdmissionOptions) {
    this.ceiling = Math.max(1, Math.floor(opts.ceiling));
    this.floor = Math.min(this.ceiling, Math.max(1, Math.floor(opts.floor ?? 16)));
    this.slowFraction = opts.slowFraction ?? 0.5;
    this.cutShare = opts.cutShare ?? 0.25;
    this.decrease = opts.decrease ?? 0.7;
    this.increase = opts.increase ?? 16;
    this.minSamples = opts.minSamples ?? 8;
    // Start open: on a machine that keeps up, behaviour is exactly the fixed ceiling.
    this.current = this.ceiling;
  }

  /** Checks allowed in flight now. */
  get limit(): number {
    return this.current;
  }

  /** Records one verdict at time `now` (ms); may move the limit when a window closes. */
  record(s: AdmissionSample, now: number): void {
    if (this.windowStart === -Infinity) this.windowStart = now;
    if (s.timedOut) {
      if (s.answeredBefore) this.freshTimeouts++;
    } else if (s.latencyMs > Math.max(s.timeoutMs * this.slowFraction, 2 * s.baselineMs)) this.slow++;
    else this.fast++;
    if (s.saturated) this.saturated = true;
    // A window lasts about one timeout: long enough for a cut to show in the next samples.
    if (s.timeoutMs > this.windowMs) this.windowMs = s.timeoutMs;
    const samples = this.fast + this.slow + this.freshTimeouts;
    if (now - this.windowStart < this.windowMs || samples < this.minSamples) return;
    const congested = this.slow + (this.slow >= this.fast ? this.freshTimeouts : 0);
    if (congested > samples * this.cutShare) {
      const next = Math.max(this.floor, Math.floor(this.current * this.decrease));
      if (next < this.current) this.cuts++;
      this.current = next;
    } else if (this.saturated && this.current < this.ceiling) {
      this.current = Math.min(this.ceiling, this.current + this.increase);
      this.raises++;
    }
    this.windowStart = now;
    this.windowMs = 0;
    this.fast = 0;
    this.slow = 0;
    this.freshTimeouts = 0;
    this.saturated = false;
  }
}
