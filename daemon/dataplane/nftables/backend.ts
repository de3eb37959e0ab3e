// The nftables dataplane: owns one table (inet lvsd), changes it only by whole transactions through a
// long-lived nft process (structural changes) or one netlink batch (a change of real servers), and never flushes conntrack — established connections keep their NAT binding
// whatever happens to the rules (weight 0 and removed real servers included). The one deletion: entries in
// state CLOSE of a real server that leaves a map (conntrack.ts, forgetClosedArgs, says why).
//
// Drift: apply() compares the kernel's table with what lvsd last wrote when a check is due (every
// `driftCheckIntervalMs`, on the first apply, and after any failed transaction); differences are put back
// and listed in ApplyReport.drift. Between checks apply() diffs against its own record (delta.ts: one
// walk by identity, then only the changed services are looked at; handed the changed services counted from
// the table it last applied, types.ts, not even that walk: changed.ts), and a change of an
// existing service's real servers (added, removed, weighted, drained) is one netlink transaction that
// rewrites its slot map in place (fast-path.ts); a structural change (a new or removed service, another
// scheduler or match) goes to nft as three small transactions (stage, switch, retire: render.ts says why).
import type { Logger } from 'pino';
import type { ApplyReport, ChangedServices, Dataplane, DesiredTable, ObservedRealServer, ObservedService, ObservedTable, ServiceSpec } from '../types.js';
import { sameService, tableModel, DEFAULT_TABLE, ModelCache, type NftService, type NftTableModel } from './model.js';
import { fullLive, planPhases, planUpdate, slotMapsIn, type UpdatePlan } from './render.js';
import { tableDelta, type TableDelta } from './delta.js';
import { changedStep, landStep } from './changed.js';
import { fullText, nftText } from './nft-text.js';
import { fastChanges } from './fast-path.js';
import { netfilterWriter, type NftablesNetlink } from './nl-writer.js';
import { freshProgram, type FreshProgram } from './fresh.js';
import { parseTable, type ParsedTable } from './parse.js';
import { NftShell } from './nft-shell.js';
import { anyServiceKey, conntrackKey, countConntrack, forgetClosedArgs, goneTargets, withClosedEntries, type ConnCount, type GoneTarget } from './conntrack.js';

export interface NftablesOptions {
  /** Table name in family inet (default "lvsd"). */
  table?: string;
  /** SNAT forwarded connections (real servers then need no route back via the director). Default false. */
  masquerade?: boolean;
  /** Run nft (and read conntrack) in this network namespace. */
  netns?: string;
  /** nft binary (default "nft" on PATH). */
  nft?: string;
  /** How often apply() re-reads the kernel table to catch changes made behind lvsd's back (default 10 s; 0 = every apply). */
  driftCheckIntervalMs?: number;
  /** Where conntrack lives (default /proc/net/nf_conntrack). */
  conntrackFile?: string;
  /** conntrack binary (default "conntrack" on PATH), for forgetting closed connections of real servers that left a map. */
  conntrack?: string;
  logger?: Logger;
  now?: () => number;
  /** Services per shard table (shards.ts; default SHARD_SIZE, 500). */
  shardSize?: number;
  /**
   * The nft process and netlink writer to use, shared by the shards of one dataplane (shards.ts); closed by
   * their owner, not here. `models`: the dataplane's check of the whole table, whose models of the very same
   * spec objects this table takes instead of modelling them again (ModelCache's parent).
   */
  shared?: { shell: NftShell; netlink: NftablesNetlink; models?: ModelCache };
  /**
   * The table is known not to exist (shards.ts has listed the tables since): the first apply writes it
   * without listing it first (an nft process, ~10 ms, per shard of a full program), in two steps (fresh.ts).
   * Were it there after all, the structure replaces it all the same (it deletes the table in its own transaction).
   */
  absent?: boolean;
}

export interface NftablesDataplane extends Dataplane {
  readonly kind: 'nftables';
  /** Reads the kernel table now and returns what differs from what lvsd last wrote (without repairing). */
  checkDrift(): Promise<string[]>;
}

/** One table of the dataplane (shards.ts puts services in several). */
export interface NftablesTable extends NftablesDataplane {
  /** The ids of the services the kernel's table holds now; undefined when there is no table. */
  held(): Promise<string[] | undefined>;
  /**
   * While the table is known absent and nothing has been applied: `desired` as a fresh program (fresh.ts)
   * for the caller to send — shards.ts joins several shards' structures into one `nft -f` — with `landed`
   * to call once all of it went through (the table's record) and `failed` if any of it did not (the next
   * apply then reads the kernel). Undefined otherwise: apply() as usual. Throws on bad input, as apply().
   * Called under the caller's serialisation, with no apply of this table in flight.
   */
  fresh(desired: DesiredTable): FreshWrite | undefined;
}

/** A shard's fresh program (fresh.ts) handed to shards.ts to send, and what to tell the table afterwards. */
export interface FreshWrite extends FreshProgram {
  /** All of it went through: the table records it as written, and says so. */
  landed(): ApplyReport;
  /** Some of it did not: the table's next apply reads the kernel. */
  failed(): void;
}

/**
 * Fresh programs (fresh.ts) sent: all their structures as one `nft -f` (one process, one transaction), then
 * each one's netlink batches. The netlink writer opens first, so a worker's start overlaps nft's work.
 */
export async function sendFresh(shell: NftShell, netlink: NftablesNetlink, programs: readonly FreshProgram[]): Promise<void> {
  netlink.open();
  await shell.applyFile(programs.map((f) => f.structure).join(''));
  for (const f of programs) for (const batch of f.batches) await netlink.send(batch);
}

function describeDrift(expected: NftTableModel, kernel: ParsedTable): string[] {
  if (kernel.problems.length > 0) return kernel.problems;
  const out: string[] = [];
  for (const [chain, svc] of expected.services) {
    const k = kernel.services.get(chain);
    if (k === undefined) out.push(`service ${svc.id}: missing from the kernel table`);
    else if (!sameService(svc, k)) out.push(`service ${svc.id}: changed in the kernel table`);
  }
  for (const [chain, k] of kernel.services) {
    if (!expected.services.has(chain)) out.push(`service ${k.id}: in the kernel table but not written by lvsd`);
  }
  return out;
}

function weightOfSlots(svc: NftService, address: string, port: number): number {
  return svc.slots.filter((s) => s.address === address && s.port === port).reduce((n, s) => n + s.to - s.from + 1, 0);
}

/** One nftables table of services (the dataplane is one or more of them: shards.ts). */
export function createNftablesTable(opts: NftablesOptions = {}): NftablesTable {
  const table = opts.table ?? DEFAULT_TABLE;
  const masquerade = opts.masquerade ?? false;
  const interval = opts.driftCheckIntervalMs ?? 10_000;
  const now = opts.now ?? (() => performance.now());
  const shell = opts.shared?.shell ?? new NftShell({ ...(opts.nft === undefined ? {} : { nft: opts.nft }), ...(opts.netns === undefined ? {} : { netns: opts.netns }) });
  const log = opts.logger;
  const netlink = opts.shared?.netlink ?? netfilterWriter(opts.netns);
  let expected: NftTableModel | undefined;
  /** The table of the last apply that went through (observe() reads its specs back). */
  let lastDesired: DesiredTable = { services: [] };
  let lastVerified = -Infinity;
  let chainQueue: Promise<unknown> = Promise.resolve();
  const cache = new ModelCache(opts.shared?.models);

  let absent = opts.absent ?? false;

  /** The kernel's table; `knownAbsent`: none, without listing it (the first apply's reading, opts.absent). */
  async function readKernel(knownAbsent = false): Promise<ParsedTable> {
    const doc = knownAbsent ? undefined : await shell.listTable(table);
    if (doc === undefined) return { services: new Map(), counters: new Map(), live: new Map(), oldLayout: new Set(), leftovers: [], problems: [`table inet ${table} missing`] };
    return parseTable(doc, table, masquerade);
  }

  function planFrom(kernel: ParsedTable, next: NftTableModel): UpdatePlan {
    return planUpdate({ table, masquerade, services: kernel.services, live: kernel.live, oldLayout: kernel.oldLayout }, next, sameService, kernel.leftovers, kernel.maps);
  }

  let warnedNoConntrack = false;
  /** Deletes the CLOSE conntrack entries of real servers that just left a map (conntrack.ts says why). */
  async function forgetClosed(gone: GoneTarget[]): Promise<void> {
    if (gone.length === 0) return;
    let targets = gone;
    try {
      // One read of the table instead of a conntrack process per target: most targets have no CLOSE entry.
      targets = withClosedEntries(await shell.read(opts.conntrackFile ?? '/proc/net/nf_conntrack'), gone);
    } catch (e) {
      log?.debug({ err: e }, 'nftables: conntrack not readable; trying every target');
    }
    for (const t of targets) {
      try {
        const r = await shell.tool(opts.conntrack ?? 'conntrack', forgetClosedArgs(t));
        // conntrack exits 1 when nothing matched.
        if (r.code !== 0 && !r.stderr.includes('flow entries have been deleted')) log?.warn({ target: t, stderr: r.stderr.trim() }, 'nftables: conntrack -D failed');
      } catch (e) {
        if (!warnedNoConntrack) log?.warn({ err: e }, 'nftables: conntrack tool not usable; a client port reused within 10 s of a reset by a removed real server may be refused');
        warnedNoConntrack = true;
        return;
      }
    }
  }

  /**
   * The changed chains netlink can write in place (weights, members: fast-path.ts) go in one netlink
   * transaction; returns how many operations that was and the delta left for nft's plan. Refused, nothing of
   * it reached the kernel and nft's path does the whole change.
   */
  async function sendFast(from: NftTableModel, to: NftTableModel, delta: TableDelta): Promise<{ fastOps: number; rest: TableDelta }> {
    const fast = fastChanges(from, to, delta.changed);
    if (fast.ops.length === 0) return { fastOps: 0, rest: delta };
    try {
      await netlink.send(fast.ops);
      // Those services are now as `to` says, on the same slot side: the plan leaves them be.
      const written = new Set(fast.chains);
      return { fastOps: fast.ops.length, rest: { changed: delta.changed.filter((chain) => !written.has(chain)), removed: delta.removed } };
    } catch (e) {
      log?.info({ err: e }, 'nftables: netlink change refused (a table from an older lvsd?); writing it through nft');
      return { fastOps: 0, rest: delta };
    }
  }

  /** Sends the plan's transactions in order; returns how many commands went out. */
  async function run(plan: UpdatePlan): Promise<number> {
    let n = 0;
    for (const phase of planPhases(plan)) {
      await shell.apply(nftText(phase));
      n += phase.length;
    }
    return n;
  }

  /**
   * An apply from the changed services alone (changed.ts): the same netlink and nft steps as below, over
   * the two small tables of those services; the record is then changed in place. Returns how many
   * operations went out, or undefined when the table must be walked instead (then nothing went out, or
   * what did is read back: the next step is a check against the kernel).
   */
  async function applyChanged(record: NftTableModel, changed: ChangedServices): Promise<number | undefined> {
    let step;
    try {
      step = changedStep(record, changed, cache);
    } finally {
      if (step === undefined) cache.discard();
    }
    if (step === undefined) return undefined;
    const { from, to, delta } = step;
    const { fastOps, rest } = await sendFast(from, to, delta);
    const p = planUpdate(from, to, sameService, [], slotMapsIn(record), rest);
    let operations: number;
    try {
      operations = fastOps + (await run(p));
    } catch {
      // As below: a stale record or a plan stopped between its transactions; the walk reads the kernel.
      cache.discard();
      lastVerified = -Infinity;
      return undefined;
    }
    landStep(record, step, p.live);
    await forgetClosed(goneTargets(from.services, to, [...delta.changed, ...delta.removed]));
    cache.commitChanged([...changed.services].filter(([, spec]) => spec === undefined).map(([id]) => id));
    return operations;
  }

  /** The table's model of `desired`; refused (UnsupportedByDataplane, a clash), the cache forgets this build. */
  function modelOf(desired: DesiredTable): NftTableModel {
    try {
      return tableModel(desired, { table, masquerade }, cache);
    } catch (e) {
      cache.discard();
      throw e;
    }
  }

  async function applyNow(desired: DesiredTable, changed?: ChangedServices): Promise<ApplyReport> {
    const t0 = now();
    if (changed !== undefined && changed.since === lastDesired && expected !== undefined && now() - lastVerified < interval) {
      const operations = await applyChanged(expected, changed);
      if (operations !== undefined) {
        lastDesired = desired;
        return { operations, drift: [], durationMs: now() - t0 };
      }
    }
    // Throws UnsupportedByDataplane before anything reaches the kernel.
    const next = modelOf(desired);
    let drift: string[] = [];
    let before: ReadonlyMap<string, NftService> = expected?.services ?? new Map();
    /** Plans from what the kernel holds (first apply, periodic check, or a stale record) and runs it. */
    const fromKernel = async (): Promise<{ plan: UpdatePlan; operations: number }> => {
      const knownAbsent = absent;
      const kernel = await readKernel(knownAbsent);
      absent = false;
      lastVerified = now();
      if (expected !== undefined) drift = describeDrift(expected, kernel);
      before = kernel.services;
      if (knownAbsent) {
        // No table: nothing is served through it, so it may appear in two steps (fresh.ts says why that is safe).
        const f = freshProgram(next);
        await sendFresh(shell, netlink, [f]);
        return { plan: { stage: [], switch: [], retire: [], live: fullLive(next) }, operations: f.commands };
      }
      if (kernel.problems.length > 0) {
        // A table lvsd cannot read is written whole, in one transaction (it had no consistent state to keep).
        const full = fullText(next);
        await shell.apply(full.text);
        return { plan: { stage: [], switch: [], retire: [], live: fullLive(next) }, operations: full.commands };
      }
      const p = planFrom(kernel, next);
      return { plan: p, operations: await run(p) };
    };
    let done: { plan: UpdatePlan; operations: number };
    /** The services this apply changed, when it planned from its own record (undefined: all were compared). */
    let changedChains: string[] | undefined;
    const verify = expected === undefined || now() - lastVerified >= interval;
    try {
      if (verify) {
        done = await fromKernel();
      } else {
        const from = expected ?? next;
        // The one walk over the table; everything below looks only at what it found changed.
        const delta = tableDelta(from, next);
        changedChains = [...delta.changed, ...delta.removed];
        const { fastOps, rest } = await sendFast(from, next, delta);
        const p = planUpdate(from, next, sameService, [], slotMapsIn(from), rest);
        try {
          done = { plan: p, operations: fastOps + (await run(p)) };
        } catch {
          // Our record was stale (someone changed the table since the last check), or the plan stopped
          // between its transactions: read, describe, redo from what the kernel holds.
          changedChains = undefined;
          done = await fromKernel();
        }
      }
    } catch (e) {
      // Whatever reached the kernel, the next apply starts from a fresh reading of it.
      lastVerified = -Infinity;
      throw e;
    }
    const { plan, operations } = done;
    expected = { ...next, live: plan.live };
    await forgetClosed(goneTargets(before, next, changedChains));
    cache.commit();
    lastDesired = desired;
    if (drift.length > 0) log?.warn({ table, drift }, 'nftables: table changed behind lvsd\'s back; restored');
    return { operations, drift, durationMs: now() - t0 };
  }

  function serialize<T>(fn: () => Promise<T>): Promise<T> {
    const p = chainQueue.then(fn, fn);
    chainQueue = p.catch(() => undefined);
    return p;
  }

  async function observe(): Promise<ObservedTable> {
    const kernel = await readKernel();
    let conns = new Map<string, ConnCount>();
    try {
      conns = countConntrack(await shell.read(opts.conntrackFile ?? '/proc/net/nf_conntrack'));
    } catch (e) {
      log?.debug({ err: e }, 'nftables: conntrack not readable; connection counts are 0');
    }
    const specs = new Map(lastDesired.services.map((s) => [s.id, s]));
    const byChain = new Map<string, ServiceSpec>();
    for (const svc of expected?.services.values() ?? []) {
      const spec = specs.get(svc.id);
      if (spec !== undefined) byChain.set(svc.chain, spec);
    }
    const services: ObservedService[] = [];
    for (const [chain, k] of kernel.services) {
      const spec = byChain.get(chain);
      const want = expected?.services.get(chain);
      const asWritten = spec !== undefined && want !== undefined && sameService(want, k);
      const rsList = asWritten
        ? spec.realServers
        : [...new Map(k.slots.map((s) => [`${s.address}|${s.port}`, s])).values()].map((s) => ({
            id: k.family === 6 ? `[${s.address}]:${s.port}` : `${s.address}:${s.port}`,
            address: s.address,
            port: s.port,
            weight: weightOfSlots(k, s.address, s.port),
            method: 'nat' as const,
          }));
      const realServers: ObservedRealServer[] = rsList.map((rs) => {
        const key =
          k.match.kind === 'tuple'
            ? conntrackKey(k.match.protocol, k.match.address, k.match.port, rs.address, rs.port)
            : anyServiceKey(rs.address, rs.port);
        const c = conns.get(key) ?? { active: 0, inactive: 0 };
        return { ...rs, activeConns: c.active, inactiveConns: c.inactive, persistConns: 0 };
      });
      const counter = kernel.counters.get(chain);
      const base: Omit<ServiceSpec, 'realServers'> = spec !== undefined
        ? (({ realServers: _r, ...rest }) => rest)(spec)
        : {
            id: k.id,
            family: k.family,
            protocol: k.match.kind === 'tuple' ? k.match.protocol : 'tcp',
            ...(k.match.kind === 'tuple' ? { address: k.match.address, port: k.match.port } : { fwmark: k.match.mark }),
            scheduler: k.dispatch.kind === 'numgen' ? 'wrr' : 'sh',
          };
      services.push({
        ...base,
        realServers,
        ...(counter === undefined
          ? {}
          : { counters: { conns: counter.packets, inPackets: 0, outPackets: 0, inBytes: 0, outBytes: 0, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 } }),
      });
    }
    return { services };
  }

  return {
    kind: 'nftables',
    apply: (desired, changed) => serialize(() => applyNow(desired, changed)),
    observe: () => serialize(observe),
    checkDrift: () =>
      serialize(async () => {
        const kernel = await readKernel();
        return expected === undefined ? kernel.problems : describeDrift(expected, kernel);
      }),
    held: () =>
      serialize(async () => {
        const doc = await shell.listTable(table);
        return doc === undefined ? undefined : [...parseTable(doc, table, masquerade).services.values()].map((s) => s.id);
      }),
    fresh: (desired) => {
      if (!absent || expected !== undefined) return undefined;
      const t0 = now();
      const next = modelOf(desired);
      const f = freshProgram(next);
      return {
        ...f,
        landed: () => {
          absent = false;
          lastVerified = now();
          expected = { ...next, live: fullLive(next) };
          cache.commit();
          lastDesired = desired;
          return { operations: f.commands, drift: [], durationMs: now() - t0 };
        },
        failed: () => {
          absent = false;
          lastVerified = -Infinity;
          cache.discard();
        },
      };
    },
    close: () => {
      if (opts.shared !== undefined) return Promise.resolve();
      netlink.close();
      return shell.close();
    },
  };
}
