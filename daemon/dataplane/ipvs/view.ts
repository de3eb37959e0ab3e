// lvsd's view of the kernel's IPVS table, by service id. A service a full read found held exactly as desired (the
// native read's line equal to the desired one's: every service of a restart adopting its table) is kept as its
// desired spec, and its observed form (observe.ts, heldAs) is made only when something asks for that service: a
// restart builds nothing for the 1,000 services it adopts, and a later apply builds the few it looks at.
import { heldAs } from './observe.js';
import type { ObservedService, ServiceSpec } from '../types.js';

export class KernelView {
  private readonly observed: Map<string, ObservedService>;
  private readonly held = new Map<string, ServiceSpec>();

  constructor(services: readonly ObservedService[] = [], held: readonly ServiceSpec[] = []) {
    this.observed = new Map(services.map((s) => [s.id, s]));
    for (const s of held) if (!this.observed.has(s.id)) this.held.set(s.id, s);
  }

  /** The service as the kernel holds it (a held one made observed now, with connection counts 0: heldAs). */
  get(id: string): ObservedService | undefined {
    const s = this.observed.get(id);
    if (s !== undefined) return s;
    const h = this.held.get(id);
    if (h === undefined) return undefined;
    const o = heldAs(h);
    this.held.delete(id);
    this.observed.set(id, o);
    return o;
  }

  set(s: ObservedService): void {
    this.held.delete(s.id);
    this.observed.set(s.id, s);
  }

  delete(id: string): void {
    this.held.delete(id);
    this.observed.delete(id);
  }

  get size(): number {
    return this.observed.size + this.held.size;
  }
}
