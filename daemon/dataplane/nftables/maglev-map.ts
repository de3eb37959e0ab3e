// The `mh` scheduler in nftables: a Maglev lookup table (../maglev.ts) computed by lvsd and written as the
// service's DNAT map, keyed by `jhash ip saddr [. th sport] mod M seed S`.
//
// Why: plain jhash over weighted slot ranges sends a flow to `hash mod Σweights`, so any change of the
// real-server set remaps nearly every flow, and two directors agree only while their sets are identical.
// With a Maglev table every director that has the same real servers (same ids, same weights) builds the
// same M slots — the table does not depend on the order the servers arrive in — and the seed is derived
// from the virtual server's id (model.ts seedFor), so the same 5-tuple lands on the same real server
// whichever director ECMP hands it to. A failed real server (weight 0) gives up its slots and the others
// refill them as Maglev does, so little more than that server's own flows move.
import { maglevTable, MH_TABLE_SIZE } from '../maglev.js';
import type { RealServerSpec } from '../types.js';

/** Consecutive slots [from, to] of the table that lead to one real server (model.ts makes them NftSlots). */
export interface MaglevRun {
  from: number;
  to: number;
  realServer: RealServerSpec;
}

/**
 * The Maglev table of `realServers` (weight > 0 only; ids name them, as on every director) as runs of
 * consecutive slots that lead to one real server, sorted by `from` (the form the parser reads back).
 */
export function maglevRuns(realServers: readonly RealServerSpec[], size: number = MH_TABLE_SIZE): MaglevRun[] {
  const byId = new Map(realServers.filter((rs) => rs.weight > 0).map((rs) => [rs.id, rs]));
  const table = maglevTable([...byId.values()].map((rs) => ({ name: rs.id, weight: rs.weight })), size);
  const runs: MaglevRun[] = [];
  if (table.backends.length === 0) return runs;
  const servers = table.backends.map((id) => byId.get(id) as RealServerSpec);
  let from = 0;
  for (let s = 1; s <= size; s++) {
    if (s < size && table.slots[s] === table.slots[from]) continue;
    runs.push({ from, to: s - 1, realServer: servers[table.slots[from] as number] as RealServerSpec });
    from = s;
  }
  return runs;
}
