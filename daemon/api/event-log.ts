// The API's view of the event bus: a bounded ring of recent events (for the panel's events page and
// for SSE clients that reconnect with Last-Event-ID) plus fan-out to live subscribers.
import type { ApiEvent } from './schemas.js';
import type { DirectorEvent } from '../director/snapshot.js';

type Input = DirectorEvent | ({ type: 'audit'; at: string } & Record<string, unknown>);

export class EventLog {
  #seq = 0;
  readonly #ring: ApiEvent[] = [];
  readonly #subs = new Set<(e: ApiEvent) => void>();

  constructor(readonly capacity = 1000) {}

  push(e: Input): ApiEvent {
    const ev = { ...e, seq: ++this.#seq } as ApiEvent;
    this.#ring.push(ev);
    if (this.#ring.length > this.capacity) this.#ring.shift();
    for (const fn of this.#subs) fn(ev);
    return ev;
  }

  /** Newest first; `type` matches exactly or as a dotted prefix ("vrrp" matches "vrrp.transition"). */
  recent(filter: { type?: string; after?: number; limit?: number } = {}): ApiEvent[] {
    let out: ApiEvent[] = this.#ring;
    if (filter.after !== undefined) {
      const after = filter.after;
      out = out.filter((e) => e.seq > after);
    }
    if (filter.type !== undefined) {
      const t = filter.type;
      out = out.filter((e) => e.type === t || e.type.startsWith(t + '.'));
    }
    return out.slice(-(filter.limit ?? 200)).reverse();
  }

  subscribe(fn: (e: ApiEvent) => void): () => void {
    this.#subs.add(fn);
    return () => this.#subs.delete(fn);
  }

  get subscribers(): number {
    return this.#subs.size;
  }
}
