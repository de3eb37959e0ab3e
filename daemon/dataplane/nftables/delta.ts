// Which services differ between two tables: the one walk over the whole table that an apply makes, so that
// everything after it (the netlink fast path, the nft plan, the conntrack clean-up) costs what the change
// costs, not what the table holds. Pure.
//
// The walk is cheap because ModelCache hands back the very same NftService object for an unchanged spec:
// `===` settles almost every service; sameService (a cached fingerprint) settles the rest, e.g. models
// parsed from the kernel's listing, which are never the objects lvsd built.
import { sameService, type NftService, type NftTableModel } from './model.js';

export interface TableDelta {
  /** Chains (chainName) of services that are new in `to` or differ from `from` (in `to`'s order). */
  changed: string[];
  /** Chains of services in `from` that `to` no longer has. */
  removed: string[];
}

export type SameService = (a: NftService, b: NftService) => boolean;

/**
 * The services of `to` that are new or not `same` as in `from`, and those `from` has and `to` has not.
 * A service kept unchanged but whose slot side `from` does not know, or that is in an older layout, counts as
 * changed (it must be written).
 */
export function tableDelta(from: NftTableModel, to: NftTableModel, same: SameService = sameService): TableDelta {
  const changed: string[] = [];
  let kept = 0;
  for (const [chain, svc] of to.services) {
    const old = from.services.get(chain);
    if (old !== undefined) kept++;
    if (old === undefined || from.live.get(chain) === undefined || from.oldLayout?.has(chain) === true || !same(old, svc)) changed.push(chain);
  }
  const removed: string[] = [];
  // Every service of `from` is in `to` when the count says so: no second walk for the common case.
  if (kept !== from.services.size) {
    for (const chain of from.services.keys()) if (!to.services.has(chain)) removed.push(chain);
  }
  return { changed, removed };
}

/** Whether a delta adds or removes a service (what changes the vmaps and the masquerade sets). */
export function addsOrRemoves(from: NftTableModel, delta: TableDelta): boolean {
  return delta.removed.length > 0 || delta.changed.some((chain) => !from.services.has(chain));
}
