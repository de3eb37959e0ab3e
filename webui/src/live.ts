// The live view of the director: the snapshot, refreshed on every server-sent event (so an action's
// effect shows within a second) and every few seconds for rates; plus recent events and a short rate
// history per virtual service for the charts.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import type { ApiEvent, DirectorSnapshot } from './types.js';

const HISTORY = 60;

export interface LiveState {
  snap: DirectorSnapshot | null;
  connected: boolean;
  error: string | null;
  events: ApiEvent[];
  /** connections per second, oldest first, per service id */
  rates: Map<string, number[]>;
  /** bumps on every audit event so pages can refetch */
  auditSeq: number;
}

type Listener = (s: LiveState) => void;

class Live {
  state: LiveState = { snap: null, connected: false, error: null, events: [], rates: new Map(), auditSeq: 0 };
  #listeners = new Set<Listener>();
  #source: EventSource | null = null;
  #timer: number | null = null;
  #pending: number | null = null;
  #lastAt = '';

  #set(patch: Partial<LiveState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of this.#listeners) l(this.state);
  }

  subscribe(l: Listener): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  async refresh(): Promise<void> {
    try {
      const snap = await api<DirectorSnapshot>('GET', '/api/v1/status');
      const rates = new Map(this.state.rates);
      if (snap.at !== this.#lastAt) {
        this.#lastAt = snap.at;
        for (const s of snap.virtualServices) {
          const h = [...(rates.get(s.id) ?? []), s.counters?.cps ?? 0];
          rates.set(s.id, h.slice(-HISTORY));
        }
      }
      this.#set({ snap, rates, error: null });
    } catch (e) {
      this.#set({ error: e instanceof Error ? e.message : String(e) });
    }
  }

  /** Coalesces a burst of events into one refresh. */
  soon(): void {
    if (this.#pending !== null) return;
    this.#pending = window.setTimeout(() => {
      this.#pending = null;
      void this.refresh();
    }, 150);
  }

  start(): void {
    if (this.#source !== null) return;
    void this.refresh();
    void api<ApiEvent[]>('GET', '/api/v1/events?limit=200').then((events) => {
      this.#set({ events });
    }, () => undefined);
    const src = new EventSource('/api/v1/events/stream');
    this.#source = src;
    src.onopen = () => {
      this.#set({ connected: true });
    };
    src.onerror = () => {
      this.#set({ connected: false });
    };
    const onEvent = (m: MessageEvent<string>): void => {
      const e = JSON.parse(m.data) as ApiEvent;
      const events = [e, ...this.state.events.filter((x) => x.seq !== e.seq)].slice(0, 500);
      this.#set(e.type === 'audit' ? { events, auditSeq: this.state.auditSeq + 1 } : { events });
      this.soon();
    };
    src.addEventListener('director', onEvent);
    src.addEventListener('audit', onEvent);
    this.#timer = window.setInterval(() => void this.refresh(), 2000);
  }

  stop(): void {
    this.#source?.close();
    this.#source = null;
    if (this.#timer !== null) window.clearInterval(this.#timer);
    this.#timer = null;
    this.#set({ snap: null, connected: false, events: [], rates: new Map() });
  }
}

export const live = new Live();

export function useLive(): LiveState {
  const [s, set] = useState(live.state);
  useEffect(() => live.subscribe(set), []);
  return s;
}
