// The desired table from pass to pass, with the specs of unchanged services kept as the very same objects
// (issue 19). desired.ts still decides every spec; this only remembers which inputs moved since the last
// pass. The director touches a service when an event changes its health, quorum or overrides, and a new
// config makes every service stale. A stale service is decided again, and when the answer equals the old
// spec the old object is kept, so that the dataplane, which takes an object it already holds as an
// unchanged service (dataplane/types.ts, Dataplane.apply), pays for what changed and not for the table.
import type { VirtualServer } from '../config/types.js';
import { deepEqual } from '../config/diff.js';
import type { DesiredTable, ServiceSpec } from '../dataplane/types.js';
import { desiredService, type DesiredInputs, type ServicePlan } from './desired.js';
import { servicePlan } from './plan.js';

export class DesiredMemo {
  private source: readonly VirtualServer[] | null = null;
  private plans: readonly ServicePlan[] = [];
  private specs = new Map<string, ServiceSpec>();
  private readonly stale = new Set<string>();
  private allStale = true;

  /** Something a service's spec is decided from (its health, quorum or an override) changed. */
  touch(serviceId: string): void {
    this.stale.add(serviceId);
  }

  /**
   * The desired table for `virtualServers` (the running config's list: a different array is a new config,
   * and every service is decided again).
   */
  table(virtualServers: readonly VirtualServer[], inputs: Omit<DesiredInputs, 'services'>): DesiredTable {
    if (virtualServers !== this.source) {
      this.source = virtualServers;
      this.plans = virtualServers.map(servicePlan);
      this.allStale = true;
    }
    const full = { ...inputs, services: this.plans };
    const kept = this.allStale ? new Map<string, ServiceSpec>() : this.specs;
    const services = this.plans.map((plan) => {
      const had = this.specs.get(plan.id);
      if (had !== undefined && !this.allStale && !this.stale.has(plan.id)) return had;
      const fresh = desiredService(plan, full);
      const spec = had !== undefined && deepEqual(had, fresh) ? had : fresh;
      kept.set(plan.id, spec);
      return spec;
    });
    this.specs = kept;
    this.stale.clear();
    this.allStale = false;
    return { services };
  }
}
