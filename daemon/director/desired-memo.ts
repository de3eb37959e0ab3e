// The desired table from pass to pass, with the specs of unchanged services kept as the very same objects
// (issue 19). desired.ts still decides every spec; this only remembers which inputs moved since the last
// pass. The director touches a service when an event changes its health, quorum or overrides, and a new
// config makes every service stale. A stale service is decided again, and when the answer equals the old
// spec the old object is kept, so that the dataplane, which takes an object it already holds as an
// unchanged service (dataplane/types.ts, Dataplane.apply), pays for what changed and not for the table.
// A pass with only touched services looks at those alone (the table is the last one's array with their
// entries replaced), and says which they were: the changed services (types.ts, ChangedServices).
import type { VirtualServer } from '../config/types.js';
import { deepEqual } from '../config/diff.js';
import type { ChangedServices, DesiredTable, ServiceSpec } from '../dataplane/types.js';
import { desiredService, type DesiredInputs, type ServicePlan } from './desired.js';
import { servicePlan } from './plan.js';

export class DesiredMemo {
  private source: readonly VirtualServer[] | null = null;
  private plans: readonly ServicePlan[] = [];
  /** Each service's position in `plans` and in the table (ids are unique in a config that loaded). */
  private position = new Map<string, number>();
  private last: DesiredTable | undefined;
  private lastChanged: ChangedServices | undefined;
  private readonly stale = new Set<string>();
  private allStale = true;

  /** Something a service's spec is decided from (its health, quorum or an override) changed. */
  touch(serviceId: string): void {
    this.stale.add(serviceId);
  }

  /** What the last table() changed against the table before it (undefined after the first). */
  get changed(): ChangedServices | undefined {
    return this.lastChanged;
  }

  /**
   * The desired table for `virtualServers` (the running config's list: a different array is a new config,
   * and every service is decided again).
   */
  table(virtualServers: readonly VirtualServer[], inputs: Omit<DesiredInputs, 'services'>): DesiredTable {
    if (virtualServers !== this.source) {
      this.source = virtualServers;
      this.plans = virtualServers.map(servicePlan);
      this.position = new Map(this.plans.map((plan, i) => [plan.id, i]));
      this.allStale = true;
    }
    const full = { ...inputs, services: this.plans };
    const before = this.last;
    const changed = new Map<string, ServiceSpec | undefined>();
    let services: ServiceSpec[];
    /** Every entry the object `before` held at the same position. */
    let same = before !== undefined;
    if (before === undefined || this.allStale || this.position.size !== this.plans.length) {
      const old = new Map(before?.services.map((s) => [s.id, s]));
      services = this.plans.map((plan) => {
        const had = old.get(plan.id);
        old.delete(plan.id);
        const fresh = desiredService(plan, full);
        if (had !== undefined && deepEqual(had, fresh)) return had;
        changed.set(plan.id, fresh);
        return fresh;
      });
      for (const id of old.keys()) changed.set(id, undefined);
      same &&= services.length === before?.services.length && services.every((s, i) => s === before.services[i]);
    } else {
      // Only the touched services: a copy of the array (no service looked at) with their entries replaced.
      services = before.services;
      for (const id of this.stale) {
        const i = this.position.get(id);
        const plan = i === undefined ? undefined : this.plans[i];
        if (i === undefined || plan === undefined) continue;
        const had = services[i];
        const fresh = desiredService(plan, full);
        if (had !== undefined && deepEqual(had, fresh)) continue;
        if (same) services = services.slice();
        same = false;
        services[i] = fresh;
        changed.set(id, fresh);
      }
    }
    this.stale.clear();
    this.allStale = false;
    // Nothing changed: the same table, so that a backend sees the very object it last applied.
    const table = same && before !== undefined ? before : { services };
    this.lastChanged = before === undefined ? undefined : { since: before, services: changed };
    this.last = table;
    return table;
  }
}
