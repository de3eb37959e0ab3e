// The history the panel's graphs read: a HistoryRing fed every `periodMs` from the director's snapshot
// (history-sample.ts says what a sample holds), with VRRP transitions and health changes from the event
// stream as marks. The I/O edge of the pure ring: one timer (unref'd), one subscription.
import type { DirectorPort } from '../director/port.js';
import { HistoryRing, type HistoryMark } from './history-ring.js';
import { parseHistoryKey, sampleOf, type CounterMemo, type HistoryMetric } from './history-sample.js';

/** 10 s × 1,080 = the last 3 hours. */
export const HISTORY_DEFAULTS = { periodMs: 10_000, capacity: 1080, maxSeries: 4000 };

export interface HistorySeries {
  scope: 'virtualServer' | 'realServer';
  service: string;
  realServer: string | null;
  metric: HistoryMetric;
  values: (number | null)[];
}

export interface HistoryView {
  periodMs: number;
  capacity: number;
  droppedSeries: number;
  t: number[];
  series: HistorySeries[];
  marks: HistoryMark[];
}

export class History {
  readonly ring: HistoryRing;
  readonly periodMs: number;
  #timer: NodeJS.Timeout | null = null;
  #off: (() => void) | null = null;
  #previous: { at: number; counters: CounterMemo } | null = null;

  constructor(
    private readonly director: DirectorPort,
    opts: Partial<typeof HISTORY_DEFAULTS> = {},
    private readonly now: () => number = Date.now,
  ) {
    const o = { ...HISTORY_DEFAULTS, ...opts };
    this.periodMs = o.periodMs;
    this.ring = new HistoryRing(o.capacity, o.maxSeries);
  }

  start(): this {
    if (this.#timer !== null) return this;
    this.#off = this.director.subscribe((e) => {
      const at = Date.parse(e.at);
      if (e.type === 'vrrp.transition') this.ring.mark({ at, kind: 'vrrp', text: `${e.instance}: ${e.from} → ${e.to}` });
      else if (e.type === 'health.change') this.ring.mark({ at, kind: 'health', text: `${e.realServer} in ${e.service}: ${e.status}` });
    });
    this.sample();
    this.#timer = setInterval(() => { this.sample(); }, this.periodMs);
    this.#timer.unref();
    return this;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#off?.();
    this.#off = null;
  }

  /** Takes one sample now (the timer's tick; tests call it to step time themselves). */
  sample(): void {
    const at = this.now();
    const { values, counters } = sampleOf(this.director.snapshot(), this.#previous, at);
    this.ring.push(at, values);
    this.#previous = { at, counters };
  }

  view(q: { service?: string; since?: number }): HistoryView {
    const r = this.ring.read((key) => q.service === undefined || parseHistoryKey(key)?.service === q.service, q.since);
    const series: HistorySeries[] = [];
    for (const [key, values] of r.series) {
      const k = parseHistoryKey(key);
      if (k !== null) series.push({ ...k, values });
    }
    return { periodMs: this.periodMs, capacity: this.ring.capacity, droppedSeries: this.ring.droppedSeries, t: r.t, series, marks: r.marks };
  }
}
