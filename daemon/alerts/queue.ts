// The alerts' bounded queue and its failure accounting. Pure: no timers, no I/O.
// An alert must never hold up what it reports (keepalived forks a thread per mail for the same reason), so
// offering never waits: when the queue is full — the SMTP server is dead or slow — the alert is dropped and
// counted. A dead server fails every message of a burst; that is logged once, when the burst starts (the first
// failure after a success, or after start), and once when it ends (the next success, with the count).

export interface QueueCounters {
  sent: number;
  failed: number;
  dropped: number;
}

export class BoundedQueue<T> {
  private readonly items: T[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
  }

  get length(): number {
    return this.items.length;
  }

  /** False when full: the caller counts the drop. */
  offer(item: T): boolean {
    if (this.items.length >= this.capacity) return false;
    this.items.push(item);
    return true;
  }

  take(): T | undefined {
    return this.items.shift();
  }

  /** Empties the queue; returns how many were waiting. */
  clear(): number {
    return this.items.splice(0).length;
  }
}

/** What the caller should log after an outcome: the start of a failure burst, its end, or nothing. */
export type BurstNote = { kind: 'burst-start' } | { kind: 'burst-end'; failures: number } | null;

/** Counts outcomes and says when a failure burst starts and ends. */
export class OutcomeLedger {
  readonly counters: QueueCounters = { sent: 0, failed: 0, dropped: 0 };
  private failuresInBurst = 0;

  sent(): BurstNote {
    this.counters.sent++;
    const failures = this.failuresInBurst;
    this.failuresInBurst = 0;
    return failures > 0 ? { kind: 'burst-end', failures } : null;
  }

  failed(): BurstNote {
    this.counters.failed++;
    return ++this.failuresInBurst === 1 ? { kind: 'burst-start' } : null;
  }

  dropped(n = 1): void {
    this.counters.dropped += n;
  }

  /** Failures since the last success (0: not in a burst). */
  get burst(): number {
    return this.failuresInBurst;
  }
}
