// The changed services (types.ts, ChangedServices) in nft terms: the two small tables, before and after,
// that hold those services alone, and what differs between them — so that an apply models, compares and
// plans the services that changed and never walks the table. Pure (the model cache aside).
//
// It answers only when the small tables say all there is to say; otherwise (undefined) the backend walks
// the whole table: a service whose record disagrees with the table lvsd wrote, a new service on the chain
// of one that stays (tableModel's clash, which names both), and adding or removing a service while
// masquerading (the masquerade sets follow every service's address, so they need the whole table).
import type { ChangedServices } from '../types.js';
import { addsOrRemoves, tableDelta, type TableDelta } from './delta.js';
import type { ModelCache, NftTableModel } from './model.js';

export interface ChangedStep {
  /** The changed services as `expected` holds them (with their slot sides). */
  from: NftTableModel;
  /** The same services as the new table has them (those that left are absent). */
  to: NftTableModel;
  delta: TableDelta;
}

/**
 * The step from `expected` (the table lvsd last wrote, modelled through `cache`) for `changed`. Models the
 * new specs through `cache` (the caller commits or discards that build); throws what serviceModel throws.
 */
export function changedStep(expected: NftTableModel, changed: ChangedServices, cache: ModelCache): ChangedStep | undefined {
  const base = { table: expected.table, masquerade: expected.masquerade };
  const from: NftTableModel = { ...base, services: new Map(), live: new Map() };
  const to: NftTableModel = { ...base, services: new Map(), live: new Map() };
  for (const id of changed.services.keys()) {
    const held = cache.held(id);
    if (held === undefined) continue;
    const old = expected.services.get(held.chain);
    if (old?.id !== id) return undefined;
    from.services.set(old.chain, old);
    const side = expected.live.get(old.chain);
    if (side !== undefined) from.live.set(old.chain, side);
  }
  for (const [id, spec] of changed.services) {
    if (spec === undefined) continue;
    const svc = cache.model(spec);
    const holder = expected.services.get(svc.chain);
    if (to.services.has(svc.chain) || (holder !== undefined && holder.id !== id)) return undefined;
    to.services.set(svc.chain, svc);
  }
  const delta = tableDelta(from, to);
  if (expected.masquerade && addsOrRemoves(from, delta)) return undefined;
  return { from, to, delta };
}

/** `expected` once a step's plan is through, changed in place: the step's services and their sides. */
export function landStep(expected: NftTableModel, step: ChangedStep, live: ReadonlyMap<string, 'a' | 'b'>): void {
  for (const chain of step.delta.removed) {
    expected.services.delete(chain);
    expected.live.delete(chain);
  }
  for (const [chain, svc] of step.to.services) expected.services.set(chain, svc);
  for (const [chain, side] of live) expected.live.set(chain, side);
}
