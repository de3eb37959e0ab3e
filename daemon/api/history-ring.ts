// The panel's graphs: the last N samples of a few numbers per virtual server and real server, taken at a
// fixed period, plus marks (VRRP transitions, health changes) on the same time axis. Bounded memory: N
// slots of Float32 per series, at most `maxSeries` series (a series that has been absent for all N slots
// is forgotten; a new one beyond the limit is counted in `droppedSeries`, not kept). Pure: time is given.

export interface HistoryMark {
  at: number;
  kind: 'vrrp' | 'health';
  text: string;
}

export interface HistoryRead {
  /** Sample times, ms since the epoch, oldest first. */
  t: number[];
  /** Per series, one value per time (null: the series did not exist or had no value then). */
  series: Map<string, (number | null)[]>;
  marks: HistoryMark[];
}

/** The whole ring, oldest sample first (history-codec.ts writes it to disk). */
export interface HistoryDump {
  t: number[];
  /** One value per time; NaN: no value then. */
  series: [string, Float32Array][];
  marks: HistoryMark[];
}

export class HistoryRing {
  readonly #times: Float64Array;
  readonly #series = new Map<string, { values: Float32Array; lastSeen: number }>();
  readonly #marks: HistoryMark[] = [];
  /** Slots written so far (the next slot is #written % capacity). */
  #written = 0;
  droppedSeries = 0;

  constructor(
    readonly capacity: number,
    readonly maxSeries: number,
    readonly maxMarks = 500,
  ) {
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError(`history capacity must be an integer ≥ 2 (got ${capacity})`);
    this.#times = new Float64Array(capacity);
  }

  get length(): number {
    return Math.min(this.#written, this.capacity);
  }

  /** One sample: every series' value at time `t` (a series not named gets no value for this slot). */
  push(t: number, values: ReadonlyMap<string, number>): void {
    const slot = this.#written % this.capacity;
    this.#times[slot] = t;
    for (const s of this.#series.values()) s.values[slot] = Number.NaN;
    for (const [key, v] of values) {
      let s = this.#series.get(key);
      if (s === undefined) {
        if (this.#series.size >= this.maxSeries) { this.droppedSeries++; continue; }
        s = { values: new Float32Array(this.capacity).fill(Number.NaN), lastSeen: 0 };
        this.#series.set(key, s);
      }
      s.values[slot] = v;
      s.lastSeen = this.#written;
    }
    this.#written++;
    // forget series with no value left in the ring (a removed real server), so the limit is of live ones
    for (const [key, s] of this.#series) if (this.#written - s.lastSeen > this.capacity) this.#series.delete(key);
    const oldest = this.#times[this.#written % this.capacity] ?? 0;
    while (this.#marks.length > 0 && this.length === this.capacity && (this.#marks[0]?.at ?? 0) < oldest) this.#marks.shift();
  }

  mark(m: HistoryMark): void {
    this.#marks.push(m);
    if (this.#marks.length > this.maxMarks) this.#marks.shift();
  }

  dump(): HistoryDump {
    return {
      t: Array.from(this.#inOrder(this.#times)),
      series: [...this.#series].map(([key, s]) => [key, this.#inOrder(s.values)]),
      marks: [...this.#marks],
    };
  }

  /**
   * A slot array's written part, oldest first: at most two block copies where the ring wraps (one value at
   * a time was 4.3M calls at 4,000 series × 1,080 slots, 0.4 s of a blocked loop at every save).
   */
  #inOrder<T extends Float32Array | Float64Array>(slots: T): T {
    const n = this.length;
    const first = (this.#written - n) % this.capacity;
    const out = slots.slice(0, n) as T;
    if (first === 0) return out;
    const tail = this.capacity - first;
    out.set(slots.subarray(first, first + Math.min(tail, n)));
    if (n > tail) out.set(slots.subarray(0, n - tail), tail);
    return out;
  }

  /** Replays a dump's samples newer than `after` (ms), oldest first, then its marks, as if they had just been pushed. */
  load(d: HistoryDump, after = -Infinity): void {
    for (const [i, t] of d.t.entries()) {
      if (t <= after) continue;
      const values = new Map<string, number>();
      for (const [key, v] of d.series) if (!Number.isNaN(v[i] ?? Number.NaN)) values.set(key, v[i] ?? 0);
      this.push(t, values);
    }
    for (const m of d.marks) if (m.at > after) this.mark(m);
  }

  /** The samples since `since` (ms, exclusive) of the series `want` keeps, oldest first. */
  read(want: (key: string) => boolean = () => true, since = -Infinity): HistoryRead {
    const n = this.length;
    const first = this.#written - n;
    const slots: number[] = [];
    for (let i = first; i < this.#written; i++) {
      const slot = i % this.capacity;
      if ((this.#times[slot] ?? 0) > since) slots.push(slot);
    }
    const series = new Map<string, (number | null)[]>();
    for (const [key, s] of this.#series) {
      if (!want(key)) continue;
      series.set(key, slots.map((slot) => { const v = s.values[slot] ?? Number.NaN; return Number.isNaN(v) ? null : v; }));
    }
    const t = slots.map((slot) => this.#times[slot] ?? 0);
    return { t, series, marks: this.#marks.filter((m) => m.at > since) };
  }
}
