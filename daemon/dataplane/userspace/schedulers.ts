// Schedulers of the userspace proxy. Pure: they choose among backends from the numbers they are given
// (weights, active connection counts, a source address); no sockets, no clock.
import type { Scheduler } from '../types.js';
import { maglevTable, MH_TABLE_SIZE, type MaglevTable } from '../maglev.js';

/** What a scheduler sees of a real server. `active` is maintained by the proxy. */
export interface Pickable {
  readonly id: string;
  weight: number;
  active: number;
}

export interface Picker {
  /** A backend for a new connection from `source`, skipping `tried` (for connect retry); undefined if none. */
  pick(backends: readonly Pickable[], source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined;
}

function usable(b: Pickable, tried: ReadonlySet<Pickable> | undefined): boolean {
  return b.weight > 0 && (tried === undefined || !tried.has(b));
}

/** Plain round robin over servers with weight > 0. */
export class RoundRobin implements Picker {
  private next = 0;
  pick(backends: readonly Pickable[], _source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    const n = backends.length;
    for (let i = 0; i < n; i++) {
      const b = backends[(this.next + i) % n];
      if (b !== undefined && usable(b, tried)) {
        this.next = (this.next + i + 1) % n;
        return b;
      }
    }
    return undefined;
  }
}

/**
 * Smooth weighted round robin (the nginx algorithm): each pick adds every weight to its server's
 * credit, takes the largest and subtracts the total. 5:1:1 gives a a b a c a a, not a a a a a b c.
 */
export class WeightedRoundRobin implements Picker {
  private readonly credit = new Map<string, number>();
  pick(backends: readonly Pickable[], _source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    let best: Pickable | undefined;
    let bestCredit = -Infinity;
    let total = 0;
    for (const b of backends) {
      if (!usable(b, tried)) continue;
      const c = (this.credit.get(b.id) ?? 0) + b.weight;
      this.credit.set(b.id, c);
      total += b.weight;
      if (c > bestCredit) {
        best = b;
        bestCredit = c;
      }
    }
    if (best !== undefined) this.credit.set(best.id, bestCredit - total);
    if (this.credit.size > backends.length * 2) this.prune(backends);
    return best;
  }
  private prune(backends: readonly Pickable[]): void {
    const ids = new Set(backends.map((b) => b.id));
    for (const id of this.credit.keys()) if (!ids.has(id)) this.credit.delete(id);
  }
}

/** Least connections; `weighted` divides by weight (wlc), else weights only gate (lc). Ties go round robin. */
export class LeastConnections implements Picker {
  private rot = 0;
  constructor(readonly weighted: boolean) {}
  pick(backends: readonly Pickable[], _source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    let best: Pickable | undefined;
    let bestLoad = Infinity;
    const n = backends.length;
    this.rot = (this.rot + 1) % Math.max(n, 1);
    for (let i = 0; i < n; i++) {
      const b = backends[(this.rot + i) % n];
      if (b === undefined || !usable(b, tried)) continue;
      const load = this.weighted ? b.active / b.weight : b.active;
      if (load < bestLoad) {
        best = b;
        bestLoad = load;
      }
    }
    return best;
  }
}

/** FNV-1a over the source address text. */
export function hashSource(source: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Source hashing over weighted slots: one client address always lands on the same server while the set
 * is unchanged; a refused or tried server moves the client to the next slot's server (sh-fallback).
 */
export class SourceHash implements Picker {
  pick(backends: readonly Pickable[], source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    let total = 0;
    for (const b of backends) if (b.weight > 0) total += b.weight;
    if (total === 0) return undefined;
    let slot = hashSource(source) % total;
    let start = 0;
    for (const [i, b] of backends.entries()) {
      if (b.weight <= 0) continue;
      if (slot < b.weight) {
        start = i;
        break;
      }
      slot -= b.weight;
    }
    for (let i = 0; i < backends.length; i++) {
      const b = backends[(start + i) % backends.length];
      if (b !== undefined && usable(b, tried)) return b;
    }
    return undefined;
  }
}

/**
 * mh: the Maglev table the nftables dataplane loads (same real-server ids and weights, same size), looked
 * up by a hash of the source address, so the proxy's mh moves as few clients as IPVS and nftables mh do
 * when a real server fails or returns. A tried server moves the client to the next slot whose server is
 * usable (mh-fallback). The table is rebuilt only when the usable set or a weight changes.
 */
export class MaglevHash implements Picker {
  private key = '';
  private table: MaglevTable | undefined;
  constructor(readonly size = MH_TABLE_SIZE) {}
  pick(backends: readonly Pickable[], source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    let key = '';
    for (const b of backends) if (b.weight > 0) key += `${b.id}\u0000${String(b.weight)}\u0000`;
    if (key === '') return undefined;
    if (this.table === undefined || key !== this.key) {
      this.table = maglevTable(backends.filter((b) => b.weight > 0).map((b) => ({ name: b.id, weight: b.weight })), this.size);
      this.key = key;
    }
    const byId = new Map(backends.map((b) => [b.id, b]));
    const slots = this.table.slots;
    const start = hashSource(source) % slots.length;
    let last = -1;
    for (let i = 0; i < slots.length; i++) {
      const idx = slots[(start + i) % slots.length] as number;
      if (idx === last) continue; // a run of one server: it was refused already
      last = idx;
      const b = byId.get(this.table.backends[idx] ?? '');
      if (b !== undefined && usable(b, tried)) return b;
      if (tried === undefined || tried.size === 0) return undefined;
    }
    return undefined;
  }
}

/** Weighted failover: the highest weight wins; ties keep list order. */
export class Failover implements Picker {
  pick(backends: readonly Pickable[], _source: string, tried?: ReadonlySet<Pickable>): Pickable | undefined {
    let best: Pickable | undefined;
    for (const b of backends) if (usable(b, tried) && (best === undefined || b.weight > best.weight)) best = b;
    return best;
  }
}

/** The userspace meaning of each IPVS scheduler name (documented in docs/dataplanes.md). */
export function pickerFor(s: Scheduler): Picker {
  switch (s) {
    case 'rr':
      return new RoundRobin();
    case 'wrr':
      return new WeightedRoundRobin();
    case 'lc':
      return new LeastConnections(false);
    case 'wlc':
    case 'sed':
    case 'nq':
    case 'twos':
      return new LeastConnections(true);
    case 'mh':
      return new MaglevHash();
    case 'sh':
    case 'dh':
    case 'lblc':
    case 'lblcr':
      return new SourceHash();
    case 'fo':
    case 'ovf':
      return new Failover();
  }
}
