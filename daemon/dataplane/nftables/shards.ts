// The nftables dataplane as shards: its services spread over tables of at most SHARD_SIZE services each,
// every one a whole table of the layout render.ts describes (its own vmaps and its own nat hooks), written
// by its own createNftablesTable over one shared nft process and netlink writer.
//
// Why: a change that adds a rule that NATs or jumps (a round robin whose slot space changes: model.ts,
// HASH_SLOTS) or a verdict-map element makes the kernel validate the jump graph of that rule's table at
// commit, and only of that table (measured on 6.18, one vmap element: 0.55 ms in a table of 100 services
// beside one of 5,000, 8.9 ms in the one of 5,000). A bounded table is a bounded validation.
// The price is per new connection: each shard's nat hooks look the packet up in that shard's vmaps until one
// of them NATs it (the kernel skips the rest once a connection has its NAT binding), so a new connection
// walks up to ceil(services / SHARD_SIZE) tables. Established connections never reach a nat hook.
//
// Placement (place(), pure): a service stays in the shard that holds it; a new one goes to the lowest shard
// with room. Shard 0 is named as the table always was, so a table of the older single-table layout is shard
// 0 on upgrade: what it holds beyond SHARD_SIZE is moved out, each service added to its new shard before it
// is removed from shard 0 (shards are applied from the highest down), so it is never missing.
import type { ApplyReport, ChangedServices, DesiredTable, ObservedTable, ServiceSpec } from '../types.js';
import { createNftablesTable, sendFresh, type FreshWrite, type NftablesDataplane, type NftablesOptions, type NftablesTable } from './backend.js';
import { DEFAULT_TABLE, ModelCache, serviceModel, tableModel } from './model.js';
import { NftShell } from './nft-shell.js';
import { netfilterWriter } from './nl-writer.js';
import { nftText } from './nft-text.js';

/** Services per table: the validation of one stays near that of a 500-service table (0.5 ms above). */
export const SHARD_SIZE = 500;

/** Shard k's table: shard 0 keeps the dataplane's own name (the older single-table layout is shard 0). */
export function shardTable(base: string, k: number): string {
  return k === 0 ? base : `${base}-${String(k)}`;
}

/** The shard index of a table name of this dataplane; undefined for any other table. */
export function shardIndex(base: string, name: string): number | undefined {
  if (name === base) return 0;
  if (!name.startsWith(`${base}-`)) return undefined;
  const rest = name.slice(base.length + 1);
  return /^[1-9][0-9]{0,5}$/.test(rest) ? Number(rest) : undefined;
}

/**
 * Where each of `ids` goes: the shard `held` says while that shard keeps at most `size` of them (in the
 * order of `ids`), otherwise the lowest shard with room. Pure and stable: the same ids and holdings give
 * the same placement.
 */
export function place(ids: readonly string[], held: ReadonlyMap<string, number>, size = SHARD_SIZE): Map<string, number> {
  const out = new Map<string, number>();
  const count: number[] = [];
  const homeless: string[] = [];
  for (const id of ids) {
    const k = held.get(id);
    if (k !== undefined && (count[k] ?? 0) < size) {
      out.set(id, k);
      count[k] = (count[k] ?? 0) + 1;
    } else homeless.push(id);
  }
  let k = 0;
  for (const id of homeless) {
    while ((count[k] ?? 0) >= size) k++;
    out.set(id, k);
    count[k] = (count[k] ?? 0) + 1;
  }
  return out;
}

export function createNftablesDataplane(opts: NftablesOptions = {}): NftablesDataplane {
  const base = opts.table ?? DEFAULT_TABLE;
  const shell = new NftShell({ ...(opts.nft === undefined ? {} : { nft: opts.nft }), ...(opts.netns === undefined ? {} : { netns: opts.netns }) });
  const netlink = netfilterWriter(opts.netns);
  const shards = new Map<number, NftablesTable>();
  /** The sub-table each shard was last handed (its `since` for the next change). */
  const subs = new Map<number, DesiredTable>();
  const placed = new Map<string, number>();
  let lastDesired: DesiredTable | undefined;
  let discovered = false;
  const interval = opts.driftCheckIntervalMs ?? 10_000;
  const now = opts.now ?? (() => performance.now());
  /** When every shard was last handed its table (each then checks the kernel when its own check is due). */
  let lastWalk = -Infinity;
  /** Bad input is refused before any shard is written (a shard's apply could not undo another's). */
  const check = new ModelCache();
  let queue: Promise<unknown> = Promise.resolve();

  function shard(k: number): NftablesTable {
    let s = shards.get(k);
    if (s === undefined) {
      // Once the tables are listed (discover), a shard not made then has no table (dropShard deletes one
      // with its shard), so its first apply need not list it.
      s = createNftablesTable({ ...opts, table: shardTable(base, k), shared: { shell, netlink, models: check }, absent: discovered });
      shards.set(k, s);
    }
    return s;
  }

  /** The first apply: which services the kernel's shard tables hold (a restart adopts them where they are). */
  async function discover(): Promise<void> {
    // The first apply writes (fresh tables' elements) or will soon (the first change of real servers): the
    // netlink worker of another namespace, a process, starts now, beside the listing (lvsd's own: a socket).
    netlink.open();
    for (const name of await shell.listTables()) {
      const k = shardIndex(base, name);
      if (k === undefined) continue;
      for (const id of (await shard(k).held()) ?? []) if (!placed.has(id)) placed.set(id, k);
    }
    discovered = true;
  }

  /** The changed services in shards they already have, or undefined (a new one: the whole table is placed). */
  function changedByShard(changed: ChangedServices): Map<number, Map<string, ServiceSpec | undefined>> | undefined {
    const out = new Map<number, Map<string, ServiceSpec | undefined>>();
    for (const [id, spec] of changed.services) {
      const k = placed.get(id);
      if (k === undefined) {
        if (spec === undefined) continue;
        return undefined;
      }
      let m = out.get(k);
      if (m === undefined) out.set(k, (m = new Map<string, ServiceSpec | undefined>()));
      m.set(id, spec);
    }
    return out;
  }

  /** A shard's new sub-table: its last one with the changed services replaced or removed (its size, not the table's). */
  function patched(k: number, changes: ReadonlyMap<string, ServiceSpec | undefined>): DesiredTable {
    const services: ServiceSpec[] = [];
    for (const s of subs.get(k)?.services ?? []) {
      if (!changes.has(s.id)) services.push(s);
      else {
        const spec = changes.get(s.id);
        if (spec !== undefined) services.push(spec);
      }
    }
    return { services };
  }

  async function applyNow(desired: DesiredTable, changed?: ChangedServices): Promise<ApplyReport> {
    const t0 = performance.now();
    if (!discovered) await discover();
    // The changed services go only to their shards; every drift-check interval all shards are handed their
    // tables, so that each one's check of the kernel comes due as the one table's did.
    const hinted = changed !== undefined && changed.since === lastDesired && now() - lastWalk < interval;
    const byShard = hinted ? changedByShard(changed) : undefined;
    const next = new Map<number, { sub: DesiredTable; changed?: ChangedServices }>();
    if (byShard !== undefined) {
      // Refused before any shard is written, as the walk below refuses a whole table.
      for (const spec of changed?.services.values() ?? []) if (spec !== undefined) serviceModel(spec);
      for (const [k, changes] of byShard) {
        const since = subs.get(k) ?? { services: [] };
        next.set(k, { sub: patched(k, changes), changed: { since, services: changes } });
      }
    } else {
      try {
        // Throws what the one-table dataplane throws (UnsupportedByDataplane, a clash), before any shard is written.
        tableModel(desired, { table: base }, check);
        check.commit();
      } catch (e) {
        check.discard();
        throw e;
      }
      lastWalk = now();
      const where = place(desired.services.map((s) => s.id), placed, opts.shardSize ?? SHARD_SIZE);
      const tables = new Map<number, ServiceSpec[]>([...shards.keys()].map((k) => [k, []]));
      for (const spec of desired.services) {
        const k = where.get(spec.id) ?? 0;
        let list = tables.get(k);
        if (list === undefined) tables.set(k, (list = []));
        list.push(spec);
      }
      for (const [k, services] of tables) next.set(k, { sub: { services } });
      placed.clear();
      for (const [id, k] of where) placed.set(id, k);
    }
    const report: ApplyReport = { operations: 0, drift: [], durationMs: 0 };
    try {
      // New tables first (they only add services), and all of them in one nft process.
      for (const k of await writeFresh(next, report)) next.delete(k);
      // Highest first: a service that moves (to a higher shard) is added before it leaves its old one.
      for (const k of [...next.keys()].sort((a, b) => b - a)) {
        const step = next.get(k);
        if (step === undefined) continue;
        if (k > 0 && step.sub.services.length === 0) {
          await dropShard(k);
          continue;
        }
        const r = await shard(k).apply(step.sub, step.changed);
        subs.set(k, step.sub);
        report.operations += r.operations;
        report.drift.push(...r.drift);
      }
    } catch (e) {
      // The next apply walks and places the whole table again, from each shard's reading of the kernel.
      lastDesired = undefined;
      throw e;
    }
    if (byShard !== undefined) {
      for (const [id, spec] of changed?.services ?? []) if (spec === undefined) placed.delete(id);
    }
    lastDesired = desired;
    report.durationMs = performance.now() - t0;
    return report;
  }

  /**
   * The shards of `next` whose tables are known absent, written together: their structures as one `nft -f`
   * (one process and one transaction for them all, not one each), then each one's slot maps' elements by
   * netlink (fresh.ts says why the two steps lose nothing). Returns the shards it wrote.
   */
  async function writeFresh(next: ReadonlyMap<number, { sub: DesiredTable }>, report: ApplyReport): Promise<number[]> {
    const fresh = new Map<number, FreshWrite>();
    try {
      for (const [k, step] of next) {
        if (k > 0 && step.sub.services.length === 0) continue;
        const f = shard(k).fresh(step.sub);
        if (f !== undefined) fresh.set(k, f);
      }
      if (fresh.size === 0) return [];
      await sendFresh(shell, netlink, [...fresh.values()]);
    } catch (e) {
      for (const f of fresh.values()) f.failed();
      throw e;
    }
    for (const [k, f] of fresh) {
      report.operations += f.landed().operations;
      subs.set(k, next.get(k)?.sub ?? { services: [] });
    }
    return [...fresh.keys()];
  }

  /** An emptied shard above 0 goes, table and all: it would cost every new connection a look for nothing. */
  async function dropShard(k: number): Promise<void> {
    const s = shards.get(k);
    if (s !== undefined) {
      // Its services leave through its own plan first (their conntrack clean-up included), then the table.
      await s.apply({ services: [] });
      await s.close();
    }
    const name = shardTable(base, k);
    if ((await shell.listTables()).includes(name)) await shell.apply(nftText([{ delete: { table: { family: 'inet', name } } }]));
    shards.delete(k);
    subs.delete(k);
  }

  function serialize<T>(fn: () => Promise<T>): Promise<T> {
    const p = queue.then(fn, fn);
    queue = p.catch(() => undefined);
    return p;
  }

  return {
    kind: 'nftables',
    apply: (desired, changed) => serialize(() => applyNow(desired, changed)),
    observe: () =>
      serialize(async (): Promise<ObservedTable> => {
        if (!discovered) await discover();
        const out: ObservedTable = { services: [] };
        for (const k of [...shards.keys()].sort((a, b) => a - b)) out.services.push(...(await shard(k).observe()).services);
        return out;
      }),
    checkDrift: () =>
      serialize(async () => {
        if (shards.size === 0) return shard(0).checkDrift();
        const out: string[] = [];
        for (const k of [...shards.keys()].sort((a, b) => a - b)) out.push(...(await shard(k).checkDrift()));
        return out;
      }),
    close: async () => {
      for (const s of shards.values()) await s.close();
      netlink.close();
      await shell.close();
    },
  };
}
