// The history the panel's graphs read: a HistoryRing fed every `periodMs` from the director's snapshot
// (history-sample.ts says what a sample holds), with VRRP transitions and health changes from the event
// stream as marks. The I/O edge of the pure ring: one timer (unref'd), one subscription, and with `file`
// the ring kept on disk (history-codec.ts): read at start (samples older than the ring's span dropped),
// written every `saveEveryMs` and at stop, atomically; a file that cannot be read or written is logged and
// the graphs go on in memory.
import { renameSync, writeFileSync } from 'node:fs';
import { readCappedBytesSync } from '../read-capped.js';
import type { DirectorPort } from '../director/port.js';
import { decodeHistory, encodeHistory } from './history-codec.js';
import { fetchPrometheusHistory, type PrometheusSource } from './history-prometheus.js';
import { HistoryRing } from './history-ring.js';
import { parseHistoryKey, sampleOf, type CounterMemo } from './history-sample.js';
import type { HistorySeries, HistoryView } from './history-view.js';

/** 10 s × 1,080 = the last 3 hours. */
/** The history file's JSON header (times, series names, marks) at most: far above what a full ring writes. */
const HEADER_MAX_BYTES = 64 * 1024 * 1024;

export const HISTORY_DEFAULTS = { periodMs: 10_000, capacity: 1080, maxSeries: 4000, saveEveryMs: 60_000 };

export interface HistoryPersistence {
  /** Where the ring is kept across restarts. */
  file?: string;
  onError?: (e: Error) => void;
  /** Graphs read from this Prometheus (history-prometheus.ts); the ring still keeps the marks, and stands in when it cannot answer. */
  prometheus?: PrometheusSource;
}

export class History {
  readonly ring: HistoryRing;
  readonly periodMs: number;
  #timer: NodeJS.Timeout | null = null;
  #off: (() => void) | null = null;
  #previous: { at: number; counters: CounterMemo } | null = null;
  #saver: NodeJS.Timeout | null = null;
  readonly #saveEveryMs: number;
  readonly #persist: HistoryPersistence;

  constructor(
    private readonly director: DirectorPort,
    opts: Partial<typeof HISTORY_DEFAULTS> & HistoryPersistence = {},
    private readonly now: () => number = Date.now,
  ) {
    const o = { ...HISTORY_DEFAULTS, ...opts };
    this.periodMs = o.periodMs;
    this.#saveEveryMs = o.saveEveryMs;
    this.#persist = { file: opts.file, onError: opts.onError, prometheus: opts.prometheus };
    this.ring = new HistoryRing(o.capacity, o.maxSeries);
  }

  start(): this {
    if (this.#timer !== null) return this;
    this.restore();
    if (this.#persist.file !== undefined) {
      this.#saver = setInterval(() => { this.save(); }, this.#saveEveryMs);
      this.#saver.unref();
    }
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
    if (this.#timer !== null) {
      this.save();
      clearInterval(this.#timer);
    }
    if (this.#saver !== null) clearInterval(this.#saver);
    this.#saver = null;
    this.#timer = null;
    this.#off?.();
    this.#off = null;
  }

  /** Reads the file back into the ring: the samples still within its span of now. */
  private restore(): void {
    const file = this.#persist.file;
    if (file === undefined) return;
    let bytes: Buffer;
    try {
      // Never more than a ring of this size writes (its float32 values and a generous header): a file put in
      // its place by hand (/dev/zero, a FIFO, gigabytes) is refused, and start() is not held up by it.
      const max = this.ring.maxSeries * this.ring.capacity * 4 + HEADER_MAX_BYTES;
      const r = readCappedBytesSync(file, { max, idleMs: 0 });
      if (!r.ok) throw new Error(`${file}: more than ${max} bytes${r.endless ? ' (a device or pipe)' : ''}; not a history file lvsd wrote`);
      bytes = r.data;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.#persist.onError?.(e as Error);
      return;
    }
    try {
      this.ring.load(decodeHistory(bytes, file), this.now() - this.periodMs * this.ring.capacity);
    } catch (e) {
      this.#persist.onError?.(e as Error);
    }
  }

  /** Writes the ring to the file (a temporary file renamed over it: a crash mid-write leaves the last one whole). */
  save(): void {
    const file = this.#persist.file;
    if (file === undefined) return;
    try {
      writeFileSync(`${file}.tmp`, encodeHistory(this.ring.dump()), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (e) {
      this.#persist.onError?.(e as Error);
    }
  }

  /** Takes one sample now (the timer's tick; tests call it to step time themselves). */
  sample(): void {
    const at = this.now();
    const { values, counters } = sampleOf(this.director.snapshot(), this.#previous, at);
    this.ring.push(at, values);
    this.#previous = { at, counters };
  }

  /** The graphs: from Prometheus when one is configured and answers, else from the ring (saying why). */
  async read(q: { service?: string; since?: number }): Promise<HistoryView> {
    const prom = this.#persist.prometheus;
    const ring = this.view(q);
    if (prom === undefined) return ring;
    try {
      return await fetchPrometheusHistory(prom, { periodMs: this.periodMs, capacity: this.ring.capacity }, q, ring.marks, this.now());
    } catch (e) {
      return { ...ring, problem: `${(e as Error).message}; lvsd's own samples shown` };
    }
  }

  view(q: { service?: string; since?: number }): HistoryView {
    const r = this.ring.read((key) => q.service === undefined || parseHistoryKey(key)?.service === q.service, q.since);
    const series: HistorySeries[] = [];
    for (const [key, values] of r.series) {
      const k = parseHistoryKey(key);
      if (k !== null) series.push({ ...k, values });
    }
    return { source: 'ring', periodMs: this.periodMs, capacity: this.ring.capacity, droppedSeries: this.ring.droppedSeries, t: r.t, series, marks: r.marks };
  }
}
