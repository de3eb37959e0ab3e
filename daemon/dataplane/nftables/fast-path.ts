// Which changes between two tables can be one netlink transaction, and that transaction. Pure.
//
// A service whose match, family, scheduler kind and map shape stay the same and that dispatches before
// and after has only its slot map's elements to change — and, when its slot space changes, its rule's
// `mod`. Elements alone are the cheap case: a new rule that NATs makes the kernel validate the whole
// table at commit, so its cost grows with the table (a hashed service's slot space never changes for
// that reason: model.ts, HASH_SLOTS). Both go into one batch: the old elements out, the new ones in, and (if the mod changed) the slot
// chain flushed and its rule added anew, which looks up the same named map. No set is created or removed,
// and every slot value has an element (the last interval is open: render.ts, slotElements), so a packet
// that walks the old rule while the batch commits still finds a real server. Everything else (a new or
// removed service, a change of scheduler, of match, of port mapping, hashing a port) goes to nft.
import { slotChainName, type NftService, type NftTableModel } from './model.js';
import { sameService } from './model.js';
import { slotRuleNeedsL4 } from './render.js';
import { flushChain, newSlotRule, slotElementOps, type NftOp, type SlotRuleSpec } from './nl-codec.js';

export interface FastChanges {
  ops: NftOp[];
  /** The chains (chainName) of the services those ops change. */
  chains: string[];
}

function withPort(svc: NftService): boolean {
  return svc.slots.some((s) => s.port !== 0);
}

function ruleDispatch(svc: NftService): SlotRuleSpec['dispatch'] | undefined {
  if (svc.dispatch.kind === 'numgen') return { kind: 'numgen' };
  const [field, ...more] = svc.dispatch.fields;
  if (more.length > 0 || (field !== 'saddr' && field !== 'daddr')) return undefined;
  return { kind: 'jhash', field, seed: svc.dispatch.seed };
}

/** The slot rule's spec, when the codec can write it (a tuple service, or a fwmark one without ports). */
function ruleSpec(table: string, svc: NftService, chain: string): SlotRuleSpec | undefined {
  const dispatch = ruleDispatch(svc);
  if (dispatch === undefined) return undefined;
  const l4 = slotRuleNeedsL4(svc);
  // A fwmark service's transport match is an anonymous set ({ tcp, udp, sctp }): nft's to write.
  if (l4 && svc.match.kind !== 'tuple') return undefined;
  return {
    table, chain, map: chain, family: svc.family, mod: svc.mod, dispatch, withPort: withPort(svc),
    ...(l4 && svc.match.kind === 'tuple' ? { l4proto: svc.match.protocol } : {}),
  };
}

/** Whether a and b have one slot map type and rules that differ at most in `mod`. */
function sameShape(a: NftService, b: NftService): boolean {
  if (a.family !== b.family || a.chain !== b.chain || a.slots.length === 0 || b.slots.length === 0) return false;
  if (withPort(a) !== withPort(b) || slotRuleNeedsL4(a) !== slotRuleNeedsL4(b)) return false;
  const ma = a.match;
  const mb = b.match;
  if (ma.kind === 'fwmark' ? mb.kind !== 'fwmark' || mb.mark !== ma.mark : mb.kind !== 'tuple' || mb.address !== ma.address || mb.protocol !== ma.protocol || mb.port !== ma.port) return false;
  const da = a.dispatch;
  const db = b.dispatch;
  if (da.kind === 'numgen' || db.kind === 'numgen') return da.kind === db.kind;
  return da.seed === db.seed && da.fields.length === db.fields.length && da.fields.every((f, i) => f === db.fields[i]);
}

/**
 * The netlink ops that take `from`'s services to `to`'s where only slots (and mod) differ, in one batch.
 * `chains`: the services to look at (default all of `to`; the backend passes tableDelta's changed ones).
 */
export function fastChanges(from: NftTableModel, to: NftTableModel, chains: Iterable<string> = to.services.keys()): FastChanges {
  const out: FastChanges = { ops: [], chains: [] };
  for (const chain of chains) {
    const svc = to.services.get(chain);
    const old = from.services.get(chain);
    if (svc === undefined) continue;
    const side = from.live.get(chain);
    // A service of an older layout is moved by nft's plan (render.ts), which then writes its change too.
    if (old === undefined || side === undefined || sameService(old, svc) || !sameShape(old, svc) || from.oldLayout?.has(chain) === true) continue;
    const slot = slotChainName(chain, side);
    // The same `mod`: the rule stays as it is, whatever it holds (the codec need not be able to write it).
    const spec = old.mod === svc.mod ? undefined : ruleSpec(to.table, svc, slot);
    if (old.mod !== svc.mod && spec === undefined) continue;
    out.ops.push(...slotElementOps('delete', to.table, slot, old.slots), ...slotElementOps('add', to.table, slot, svc.slots));
    if (spec !== undefined) out.ops.push(flushChain(to.table, slot), newSlotRule(spec));
    out.chains.push(chain);
  }
  return out;
}
