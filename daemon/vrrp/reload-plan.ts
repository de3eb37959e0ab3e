// What a reload does to each running instance, decided from the options alone (pure): left untouched,
// updated in place, or stopped (removed, or restarted with its new options); the new ones start.
import type { NormalizedInstance } from './options.js';
import type { ReconfigureSummary } from './protocol.js';

/** Fields that can change on a running instance without restarting it. */
const IN_PLACE_FIELDS = new Set(['priority', 'trackInterfaces', 'trackScripts', 'trackFiles', 'trackProcesses', 'notify', 'notifyDeleted', 'garp', 'group', 'lowerPrioNoAdvert', 'higherPrioSendAdvert', 'dontTrackPrimary', 'promoteSecondaries']);

/** True when only in-place fields differ (and the address owner, 255, is neither side: it starts as MASTER). */
export function inPlaceChange(a: NormalizedInstance, b: NormalizedInstance): boolean {
  if (a.priority === 255 || b.priority === 255) return a.priority === b.priority && sameExcept(a, b);
  return sameExcept(a, b);
}

function sameExcept(a: NormalizedInstance, b: NormalizedInstance): boolean {
  const strip = (x: NormalizedInstance): string =>
    JSON.stringify(Object.fromEntries(Object.entries(x).filter(([k]) => !IN_PLACE_FIELDS.has(k)).sort(([k1], [k2]) => k1.localeCompare(k2))));
  return strip(a) === strip(b);
}

export interface ReloadPlan {
  /** The summary so far: unchanged, removed and restarted are final; updated and added the runtime fills. */
  summary: ReconfigureSummary;
  /** Names of the running instances to stop (removed or restarted), in running order. */
  stop: string[];
  /** Running instances to update in place, with their new options. */
  inPlace: [string, NormalizedInstance][];
}

export function planReload(running: readonly NormalizedInstance[], next: readonly NormalizedInstance[]): ReloadPlan {
  const summary: ReconfigureSummary = { unchanged: [], updated: [], restarted: [], added: [], removed: [] };
  const wanted = new Map(next.map((o) => [o.name, o]));
  const plan: ReloadPlan = { summary, stop: [], inPlace: [] };
  for (const cur of running) {
    const o = wanted.get(cur.name);
    if (o === undefined) {
      plan.stop.push(cur.name);
      summary.removed.push(cur.name);
    } else if (JSON.stringify(o) === JSON.stringify(cur)) summary.unchanged.push(o.name);
    else if (inPlaceChange(cur, o)) plan.inPlace.push([cur.name, o]);
    else {
      plan.stop.push(cur.name);
      summary.restarted.push(o.name);
    }
  }
  return plan;
}
