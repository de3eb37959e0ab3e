// A table written from nothing — a fresh start, when lvsd knows there is no such table (shards.ts has
// listed the tables) — in two steps instead of fullText's one transaction. Pure.
//
// Why: nft spends more than half of a full program parsing and evaluating elements (measured at 1,000 × 10
// in a namespace: the whole text 252–273 ms by `nft -f`, the same without the slot maps' `add element`
// lines 104–132 ms), while the same elements cost the kernel a few tens of ms as netlink messages
// (nl-codec.ts writes them for the fast path already). So: the structure — table, maps and sets (the slot
// maps and verdict maps empty), chains, rules, the masquerade sets' elements — through `nft -f` as one
// transaction; then netlink batches, each holding some services whole: their slot maps' elements and
// their verdict map elements (the goto to their slot chain).
//
// Why that loses nothing: until its batch commits, no verdict map element leads to a service's slot chain,
// so the table does not match its packets and they go on un-NATed — exactly as before the table existed,
// which is what they met a moment earlier. A service appears whole, in one transaction: no packet meets
// a slot chain whose map is empty or half-filled, none is NATed to a server not of its service. Where a
// table exists (drift repair, a restart's reconcile) it serves connections, and there the
// one-transaction path stays (backend.ts).
import { slotChainName, type NftTableModel } from './model.js';
import { fullText } from './nft-text.js';
import { vmapName } from './render.js';
import { gotoElementOps, markKey, slotElementOps, tupleKey, type GotoElement, type NftOp } from './nl-codec.js';

/** A netlink batch is one sendmsg: kept well under the writer's send buffer (nl-writer.ts, 1 MiB asked). */
export const FRESH_BATCH_BYTES = 256 * 1024;

export interface FreshProgram {
  /** nft text of one transaction: the full program but for the slot maps' and the verdict maps' elements. */
  structure: string;
  /** Netlink transactions, in order, each of some services whole (their slot map's and verdict map's elements). */
  batches: NftOp[][];
  /** Commands, counted as fullText counts them (a map's elements one command). */
  commands: number;
}

export function freshProgram(m: NftTableModel): FreshProgram {
  const { text, commands } = fullText(m, false);
  const batches: NftOp[][] = [];
  let batch: NftOp[] = [];
  /** This batch's verdict map elements, by map: one message per map at the batch's end. */
  let gotos = new Map<string, GotoElement[]>();
  let bytes = 0;
  let added = 0;
  const close = (): void => {
    for (const [set, elements] of gotos) batch.push(...gotoElementOps(m.table, set, elements));
    batches.push(batch);
    batch = [];
    gotos = new Map();
    bytes = 0;
  };
  for (const svc of m.services.values()) {
    const slot = slotChainName(svc.chain, 'a');
    const ops = svc.slots.length === 0 ? [] : slotElementOps('add', m.table, slot, svc.slots);
    const key = svc.match.kind === 'fwmark' ? markKey(svc.match.mark) : tupleKey(svc.match.address, svc.match.protocol, svc.match.port);
    const size = ops.reduce((n, op) => n + op.payload.length + 20, 0) + key.length + slot.length + 40;
    if (bytes > 0 && bytes + size > FRESH_BATCH_BYTES) close();
    batch.push(...ops);
    const set = vmapName(svc);
    let list = gotos.get(set);
    if (list === undefined) gotos.set(set, (list = []));
    list.push({ key, chain: slot });
    bytes += size;
    added += (ops.length > 0 ? 1 : 0) + 1;
  }
  if (bytes > 0) close();
  return { structure: text, batches, commands: commands + added };
}
