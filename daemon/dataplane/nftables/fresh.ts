// A table written from nothing — a fresh start, when lvsd knows there is no such table (shards.ts has
// listed the tables) — in two steps instead of fullText's one transaction. Pure.
//
// Why: nft spends more than half of a full program parsing and evaluating the slot maps' elements
// (measured at 1,000 × 10 in a namespace: the whole text 252–273 ms by `nft -f`, the same without the
// slot maps' `add element` lines 104–132 ms), while the same elements cost the kernel a few tens of ms as
// netlink messages (nl-codec.ts writes them for the fast path already). So: the structure — table, maps
// (the slot maps empty), chains, rules, the vmap and masquerade elements — through `nft -f` as one
// transaction, then the slot maps' elements in netlink batches, each map whole in one of them.
//
// Why that loses nothing: until its map is filled, a service's slot chain finds no element for any slot,
// its DNAT does not happen and the packet goes on un-NATed — exactly as before the table existed, which is
// what it meets a moment earlier. No connection is NATed to a wrong server and none half-way: a map is
// filled in one transaction. Where a table exists (drift repair, a restart's reconcile) it holds served
// connections' services, and there the one-transaction path stays (backend.ts).
import { slotChainName, type NftTableModel } from './model.js';
import { fullText } from './nft-text.js';
import { slotElementOps, type NftOp } from './nl-codec.js';

/** A netlink batch is one sendmsg: kept well under the writer's send buffer (nl-writer.ts, 1 MiB asked). */
export const FRESH_BATCH_BYTES = 256 * 1024;

export interface FreshProgram {
  /** nft text of one transaction: the full program but for the slot maps' elements. */
  structure: string;
  /** Netlink transactions, in order, that fill the slot maps; a map's elements are never split between two. */
  batches: NftOp[][];
  /** Commands, counted as fullText counts them (a map's elements one command). */
  commands: number;
}

export function freshProgram(m: NftTableModel): FreshProgram {
  const { text, commands } = fullText(m, false);
  const batches: NftOp[][] = [];
  let batch: NftOp[] = [];
  let bytes = 0;
  let maps = 0;
  for (const svc of m.services.values()) {
    if (svc.slots.length === 0) continue;
    const ops = slotElementOps('add', m.table, slotChainName(svc.chain, 'a'), svc.slots);
    const size = ops.reduce((n, op) => n + op.payload.length + 20, 0);
    if (batch.length > 0 && bytes + size > FRESH_BATCH_BYTES) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(...ops);
    bytes += size;
    maps++;
  }
  if (batch.length > 0) batches.push(batch);
  return { structure: text, batches, commands: commands + maps };
}
