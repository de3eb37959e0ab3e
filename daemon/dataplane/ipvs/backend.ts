// The IPVS dataplane backend: reconciles the kernel's IPVS table to the desired table over generic
// netlink. Never flushes: it reads what the kernel holds, adopts what lvsd owns, leaves the rest alone,
// and sends only the difference (see reconcile.ts for the ownership rules, drain.ts for removals).
//
//   const probe = await probeIpvs();                 // { available: true, version } | { available: false, reason }
//   const dp = await createIpvsDataplane({ stateDir: '/var/lib/lvsd', drain: { mode: 'graceful', timeoutMs: 60_000 }, logger });
//   await dp.apply(desired); await dp.observe(); await dp.setSyncRole('master', { interface: 'eth0', syncId: 51 });
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IpvsClient, probeIpvs, type IpvsOp, type RawServiceDump } from '../../ipvs/client.js';
import type { IpvsDaemon, IpvsInfo, IpvsTimeouts } from '../../ipvs/codec.js';
import { planSync, syncSysctls, sysctlEquals, wantedDaemons, type SyncDaemonConfig, type SyncDaemonRole, type SyncTuning } from './sync.js';
import { canonicalizeDesired, canonicalService, fromIpvs, observedDest, serviceKeyOf, toIpvsDest, toIpvsService } from './spec.js';
import { IpvsError } from '../../ipvs/errors.js';
import { applyDrain, DEFAULT_DRAIN_POLICY, REMOVAL_SYSCTLS, type DrainEntry, type DrainPolicy } from './drain.js';
import { applyPlan, checkUniqueServices, configText, opText, plan, type PlanOp } from './reconcile.js';
import { heldAs, readPacked, readService } from './observe.js';
import { KernelView } from './view.js';
import { ipvsNative } from '../../ipvs/native.js';
import { fileOwnership, type OwnershipStore } from './ownership.js';
import type { ApplyReport, ChangedServices, Dataplane, DesiredTable, ObservedService, ObservedTable, RealServerSpec, ServiceSpec } from '../types.js';

export { probeIpvs };

/** The subset of pino's Logger this backend uses. */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
const silent: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

export type { SyncDaemonConfig } from './sync.js';

export interface IpvsDataplaneOptions {
  /** An open client (tests, or to share one socket); default: IpvsClient.open(). */
  client?: IpvsClient;
  /** Ownership record; default fileOwnership(`${stateDir}/ipvs-owned.json`). */
  ownership?: OwnershipStore;
  /** Default /var/lib/lvsd. */
  stateDir?: string;
  drain?: DrainPolicy;
  /** How often draining real servers are re-checked (default 2 s). */
  drainRecheckMs?: number;
  /** How often the whole kernel table is re-read to repair drift (default 30 s; 0 = only when resync() is called). */
  resyncIntervalMs?: number;
  logger?: Log;
  now?: () => number;
  /** Where the sync sysctls live (default /proc/sys/net/ipv4/vs: this network namespace's). */
  sysctlDir?: string;
}

/** A full table read (observedOf): what was decoded, the owned services held as desired, the desired ones left to plan. */
interface Read {
  table: ObservedTable;
  held: ServiceSpec[];
  rest: DesiredTable;
}

interface Round {
  /** The kernel refused an operation because lvsd's view was stale: plan again from a full read. */
  refused: boolean;
  operations: number;
  drift: string[];
  failures: string[];
  conflicts: string[];
  effective: DesiredTable;
  /** The kernel table after this round, as lvsd now believes it. */
  after: ObservedTable;
}

export class IpvsDataplane implements Dataplane {
  readonly kind = 'ipvs' as const;
  private owned: Set<string>;
  private drainState = new Map<string, DrainEntry>();
  private lastDesired: DesiredTable | undefined;
  /** The effective specs (drain applied) of the last applies, by canonical id. */
  private lastEffective: Map<string, ServiceSpec> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private recheck: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** The timer's resync is queued or running: the next tick skips it rather than queue another behind it. */
  private resyncing = false;
  /** lvsd's view of the kernel table by service id (undefined: read it in full on the next apply). */
  private cache: KernelView | undefined;
  /** Per desired service (raw id): its spec at the last apply and its canonical form — to find what changed. */
  private lastSeen = new Map<string, { spec: ServiceSpec; canonical: ServiceSpec; pass: number }>();
  /** lastSeen's canonical forms by canonical id (what a draining real server's service is looked up by). */
  private canonicalSeen = new Map<string, ServiceSpec>();
  /** Counts changedScope's walks: an entry stamped with the current one has been counted as held. */
  private passes = 0;
  private conflicts = new Set<string>();
  private closed = false;
  private readonly log: Log;
  private readonly now: () => number;
  private drainPolicy: DrainPolicy;

  constructor(
    readonly client: IpvsClient,
    private readonly ownership: OwnershipStore,
    private readonly opts: IpvsDataplaneOptions = {},
  ) {
    this.owned = ownership.load();
    this.log = opts.logger ?? silent;
    this.now = opts.now ?? Date.now;
    this.drainPolicy = opts.drain ?? DEFAULT_DRAIN_POLICY;
  }

  /** Services lvsd owns now (ids). */
  /** A reload's new removal policy: servers leaving from now on drain by it (those draining keep their deadline). */
  setDrainPolicy(policy: DrainPolicy): void {
    this.drainPolicy = policy;
  }

  ownedServices(): ReadonlySet<string> {
    return this.owned;
  }
  /** Real servers kept at weight 0 while they drain ("serviceId|realServerId" → since). */
  draining(): ReadonlyMap<string, DrainEntry> {
    return this.drainState;
  }

  /**
   * Makes the kernel hold `desired` for what lvsd owns. Works from lvsd's cached view of the kernel
   * table (read in full on the first apply, after a refused operation, and by resync()), so a reload
   * that changes one weight costs one netlink message, whatever the table size. Handed the changed
   * services counted from the table it last applied (types.ts, ChangedServices), it looks at those alone.
   */
  apply(desired: DesiredTable, changed?: ChangedServices): Promise<ApplyReport> {
    return this.enqueue(() => this.applyNow(desired, false, changed));
  }

  /**
   * Re-reads the whole kernel table and re-applies the last desired table: repairs (and reports as
   * drift) whatever changed behind lvsd's back. Runs every `resyncIntervalMs`; the director may call it.
   */
  resync(): Promise<ApplyReport> {
    return this.enqueue(() => this.applyNow(this.lastDesired ?? { services: [] }, true));
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const job = this.queue.then(fn);
    this.queue = job.catch(() => undefined);
    return job;
  }

  /**
   * The canonical form of every desired service, for a full apply: a spec handed before (the same object: specs
   * are immutable once handed) keeps the form remembered for it; any other is canonicalised afresh, without
   * canonicalizeDesired's memo, whose content check (a JSON text per service) is most of the cost on a restart,
   * where nothing has been seen yet.
   */
  private canonicalAll(desired: DesiredTable): DesiredTable {
    return {
      services: desired.services.map((s) => {
        const seen = this.lastSeen.get(s.id);
        return seen !== undefined && seen.spec === s ? seen.canonical : canonicalService(s);
      }),
    };
  }

  /** The whole kernel table as read: the native addon's buffer when it is loaded, the transport's replies otherwise. */
  private async dumpKernel(): Promise<Buffer | RawServiceDump[]> {
    return (await this.client.dumpTablePacked()) ?? (await this.client.dumpTable());
  }

  /**
   * A table read, configuration only, decoded straight from the replies (observe.ts). From the native read, a
   * service whose line (the addon's fingerprint) equals the reversed configText of a `desired` one (canonical) is
   * not decoded: if lvsd owns it, it is left out of `table` and of `rest` (the desired services still to plan) and
   * given in `held`, as its desired spec — nothing is built for it, and reconcile and drain never walk it (every
   * service of a restart adopting its table); otherwise (a conflict, a takeOver) it is in `table` as heldAs.
   */
  private observedOf(raw: Buffer | RawServiceDump[], desired?: DesiredTable): Read {
    const all = (services: ObservedService[]): Read => ({ table: { services }, held: [], rest: desired ?? { services: [] } });
    if (!Buffer.isBuffer(raw)) return all(raw.map((e) => readService(e.service, e.dests)));
    const addon = ipvsNative();
    if (desired === undefined || desired.services.length === 0 || addon === null) return all(readPacked(raw));
    // Compared in C: the desired lines joined once, an index per kernel service back (no string or lookup each).
    const services = desired.services;
    // The walk that would have found a service listed twice may not see either of them now.
    checkUniqueServices(desired);
    const texts = new Array<string>(services.length);
    for (let i = 0; i < services.length; i++) {
      const s = services[i];
      texts[i] = (s === undefined ? undefined : configText(s, true)) ?? '';
    }
    const found = addon.match(raw, texts.join('\n'));
    const taken = new Uint8Array(services.length);
    const held: ServiceSpec[] = [];
    const table = {
      services: readPacked(raw, (k) => {
        const i = found[k] ?? -1;
        const s = services[i];
        if (s === undefined) return undefined;
        if (!this.owned.has(s.id)) return heldAs(s);
        taken[i] = 1;
        held.push(s);
        return null;
      }),
    };
    if (held.length === 0) return { table, held, rest: desired };
    const rest: ServiceSpec[] = [];
    for (let i = 0; i < services.length; i++) {
      const s = services[i];
      if (s !== undefined && taken[i] === 0) rest.push(s);
    }
    return { table, held, rest: { services: rest } };
  }

  private async readKernel(desired?: DesiredTable): Promise<Read> {
    return this.observedOf(await this.dumpKernel(), desired);
  }

  /** Fresh connection counts for the owned services that are losing (or draining) real servers. */
  private async refreshDrainCandidates(desired: DesiredTable, cache: ObservedTable): Promise<void> {
    const want = new Map(desired.services.map((s) => [s.id, new Set(s.realServers.map((r) => r.id))]));
    const stale = cache.services.filter((s) => {
      const ids = want.get(s.id);
      return ids !== undefined && this.owned.has(s.id) && s.realServers.some((r) => !ids.has(r.id));
    });
    await Promise.all(
      stale.map(async (s) => {
        s.realServers = (await this.client.listDests(serviceKeyOf(s), false)).map(observedDest);
      }),
    );
  }

  /**
   * What an apply has to look at when lvsd's view is current: the services whose spec changed since
   * the last apply, those removed, and those with real servers draining. Everything else already
   * matches (resync() catches what changed behind lvsd's back). A spec handed before is the same service
   * (specs are immutable once handed: types.ts, Dataplane.apply), so an unchanged service costs one lookup;
   * a new object is compared field by field with the one it replaces. With the changed services of the
   * table last applied (types.ts, ChangedServices), only those are looked at.
   */
  private changedScope(desiredIn: DesiredTable, named: ChangedServices | undefined): { desired: DesiredTable; scope: Set<string>; changed: ServiceSpec[]; removed: string[] } {
    const isNew = (s: ServiceSpec): boolean => {
      const seen = this.lastSeen.get(s.id);
      return seen === undefined || (seen.spec !== s && !sameSpec(s, seen.spec));
    };
    let changed: ServiceSpec[];
    const removed: string[] = [];
    if (named !== undefined && named.since === this.lastDesired) {
      changed = [];
      for (const [id, s] of named.services) {
        if (s !== undefined) {
          if (isNew(s)) changed.push(s);
        } else if (this.lastSeen.has(id)) {
          removed.push(id);
        }
      }
    } else {
      changed = this.walkChanged(desiredIn, removed);
    }
    const sub = canonicalizeDesired({ services: changed }).services;
    const scope = new Set(sub.map((s) => s.id));
    for (const raw of removed) {
      const seen = this.lastSeen.get(raw);
      if (seen !== undefined) scope.add(seen.canonical.id);
    }
    if (this.drainState.size > 0) {
      for (const e of this.drainState.values()) {
        const spec = this.canonicalSeen.get(e.serviceId);
        if (scope.has(e.serviceId) || spec === undefined) continue;
        scope.add(spec.id);
        sub.push(spec);
      }
    }
    return { desired: { services: sub }, scope, changed, removed };
  }

  /** The whole table's walk (no changed services counted from the last table): the services new or changed; `removed` gets those gone. */
  private walkChanged(desiredIn: DesiredTable, removed: string[]): ServiceSpec[] {
    const pass = ++this.passes;
    let held = 0;
    const changed = desiredIn.services.filter((s) => {
      const seen = this.lastSeen.get(s.id);
      if (seen === undefined) return true;
      if (seen.pass !== pass) {
        seen.pass = pass;
        held++;
      }
      return seen.spec !== s && !sameSpec(s, seen.spec);
    });
    // Every service held is in the table: nothing was removed, and there is no need to look.
    if (held < this.lastSeen.size) {
      const ids = new Set(desiredIn.services.map((s) => s.id));
      for (const raw of this.lastSeen.keys()) if (!ids.has(raw)) removed.push(raw);
    }
    return changed;
  }

  /** Remembers each service's spec as handed, and its canonical form. */
  private remember(services: readonly ServiceSpec[], canonical: readonly ServiceSpec[] | undefined, removed: readonly string[]): void {
    services.forEach((s, i) => {
      const c = canonical?.[i] ?? canonicalizeDesired({ services: [s] }).services[0];
      if (c === undefined) return;
      const had = this.lastSeen.get(s.id);
      if (had !== undefined) this.canonicalSeen.delete(had.canonical.id);
      this.lastSeen.set(s.id, { spec: s, canonical: c, pass: 0 });
      this.canonicalSeen.set(c.id, c);
    });
    for (const id of removed) {
      const had = this.lastSeen.get(id);
      if (had !== undefined) this.canonicalSeen.delete(had.canonical.id);
      this.lastSeen.delete(id);
    }
  }

  private async applyNow(desiredIn: DesiredTable, fullRead: boolean, named?: ChangedServices): Promise<ApplyReport> {
    const t0 = performance.now();
    let fresh = fullRead || this.cache === undefined;
    let full: DesiredTable | undefined;
    let desired: DesiredTable;
    let scope: Set<string> | undefined;
    let changed: ServiceSpec[] = [];
    let removed: string[] = [];
    // A full read runs (on the addon's thread, or in the kernel) while the desired table is canonicalised.
    const reading = fresh ? this.dumpKernel() : undefined;
    reading?.catch(() => undefined); // awaited below; a throw in between must not leave it unhandled
    if (fresh) {
      full = this.canonicalAll(desiredIn);
      desired = full;
    } else {
      ({ desired, scope, changed, removed } = this.changedScope(desiredIn, named));
    }
    let read: Read | undefined = reading !== undefined ? this.observedOf(await reading, full) : undefined;
    const cache = read?.table ?? scoped(this.cache ?? new KernelView(), scope ?? new Set());
    if (!fresh) {
      try {
        await this.refreshDrainCandidates(desired, cache);
      } catch (e) {
        if (!(e instanceof IpvsError)) throw e;
        fresh = true; // a service vanished behind lvsd's back
      }
    }

    let round = fresh ? undefined : await this.reconcileOnce(desired, cache, false, scope);
    if (round === undefined || round.refused) {
      // First apply, resync, or lvsd's view was stale (someone changed the kernel): read it all, plan everything.
      // The first two have read it above, overlapping the canonicalisation (that read used to be thrown away and
      // the table read a second time here: every restart read its table twice).
      const stale = round !== undefined || read === undefined;
      fresh = true;
      scope = undefined;
      full ??= this.canonicalAll(desiredIn);
      desired = full;
      if (stale) read = await this.readKernel(full);
      if (read === undefined) throw new Error('unreachable: no table read');
      round = await this.reconcileOnce(read.rest, read.table, true, undefined, read.held);
    }
    if (round.refused) {
      this.cache = undefined;
    } else if (scope === undefined) {
      const held = read?.held ?? [];
      this.cache = new KernelView(round.after.services, held);
      this.lastEffective = byId(round.effective.services);
      for (const s of held) this.lastEffective.set(s.id, s);
      this.conflicts = new Set(round.conflicts);
    } else {
      this.cache = mergeView(this.cache ?? new KernelView(), round.after, scope);
      this.lastEffective = merge(this.lastEffective, round.effective, scope);
      for (const id of scope) this.conflicts.delete(id);
      for (const id of round.conflicts) this.conflicts.add(id);
    }
    if (scope === undefined) {
      this.lastSeen.clear();
      this.canonicalSeen.clear();
      this.remember(desiredIn.services, full?.services, []);
    } else {
      this.remember(changed, undefined, removed);
    }
    this.lastDesired = desiredIn;
    this.scheduleTimers();
    const report: ApplyReport = { operations: round.operations, drift: round.drift, durationMs: performance.now() - t0 };
    if (this.conflicts.size > 0) report.conflicts = [...this.conflicts].sort();
    if (round.failures.length > 0) report.failures = round.failures;
    return report;
  }

  /** One plan + batch over `cache` (the whole table, or only the services in `scope`). */
  private async reconcileOnce(desired: DesiredTable, cache: ObservedTable, fresh: boolean, scope: Set<string> | undefined, held: readonly ServiceSpec[] = []): Promise<Round> {
    const drain = applyDrain(desired, cache, this.owned, this.drainState, this.drainPolicy, this.now());
    const p = plan(drain.effective, cache, this.owned);
    // Drift: on a fresh read, operations that would not be needed had the kernel still held what lvsd last applied.
    const drift: string[] = [];
    if (fresh && this.lastEffective !== undefined) {
      const expected = new Set(plan(drain.effective, { services: [...this.lastEffective.values()] }, p.owned).ops.map(opText));
      for (const op of p.ops) if (!expected.has(opText(op))) drift.push(opText(op));
    }
    let results;
    try {
      results = await this.client.batch(p.ops.map(toClientOp));
    } catch (e) {
      this.cache = undefined; // replies lost: what the kernel holds now is unknown, read it all next time
      throw e;
    }
    const failures: string[] = [];
    const okOps: PlanOp[] = [];
    // p.owned speaks for the services the plan saw (all of them, or those in scope); the others keep theirs.
    const nextOwned = new Set(p.owned);
    // Services held as desired (observedOf) were left out of the plan: owned, and staying so.
    for (const s of held) nextOwned.add(s.id);
    let refused = false;
    for (const [i, r] of results.entries()) {
      const op = p.ops[i];
      if (op === undefined) continue;
      if (r.error === undefined) {
        okOps.push(op);
        continue;
      }
      // EEXIST / ESRCH / ENOENT: the kernel is not what lvsd thought; other errors are real failures.
      if (!fresh && ['EEXIST', 'ESRCH', 'ENOENT'].includes(r.error.code)) refused = true;
      failures.push(r.error.message);
      if (op.kind === 'add-service') nextOwned.delete(op.service.id);
      if (op.kind === 'delete-service') nextOwned.add(op.service.id);
    }
    if (refused) return { refused, operations: 0, drift, failures, conflicts: p.conflicts, effective: drain.effective, after: cache };

    for (const key of drain.started) this.log.info({ service: key.split('|')[0], realServer: key.split('|')[1] }, 'real server draining at weight 0');
    for (const f of drain.finished) this.log.info({ service: f.key.split('|')[0], realServer: f.key.split('|')[1], reason: f.reason }, 'real server removed');
    for (const d of drift) this.log.warn({ object: d }, 'kernel changed behind lvsd: restored');
    for (const id of p.conflicts) this.log.warn({ service: id }, 'service exists in the kernel but lvsd does not own it: left alone (set takeOver to adopt it)');
    results.forEach((r, i) => {
      const op = p.ops[i];
      if (r.error === undefined || op === undefined) return;
      this.log.error({ service: op.service.id, ...('realServer' in op ? { realServer: op.realServer.id } : {}), code: r.error.code }, r.error.message);
    });
    this.drainState = drain.state;
    const owned = this.ownedAfter(nextOwned, scope);
    if (owned !== this.owned) {
      this.owned = owned;
      this.ownership.save(owned);
    }
    // Nothing sent (a restart adopting its table, a resync finding no drift): the kernel holds what was read.
    const after = okOps.length === 0 ? cache : withCounts(applyPlan(cache, okOps), cache);
    return { refused, operations: p.ops.length, drift, failures, conflicts: p.conflicts, effective: drain.effective, after };
  }

  /**
   * The owned set after a round whose plan owns `planned` of the services in `scope` (undefined: of all);
   * this.owned itself when nothing moved. Scoped, ownership can only move inside the scope, so only that is
   * compared, and the set is copied only when it did.
   */
  private ownedAfter(planned: Set<string>, scope: Set<string> | undefined): Set<string> {
    if (scope === undefined) return sameSet(planned, this.owned) ? this.owned : planned;
    if (![...scope].some((id) => planned.has(id) !== this.owned.has(id))) return this.owned;
    const merged = new Set(this.owned);
    for (const id of scope) merged.delete(id);
    for (const id of planned) merged.add(id);
    return merged;
  }

  private scheduleTimers(): void {
    if (this.closed) return;
    if (this.recheck === undefined && this.drainState.size > 0) {
      this.recheck = setTimeout(() => {
        this.recheck = undefined;
        if (this.lastDesired === undefined || this.closed) return;
        this.apply(this.lastDesired).catch((e: unknown) => {
          this.log.error({ err: e }, 'drain re-check failed');
        });
      }, this.opts.drainRecheckMs ?? 2000);
      this.recheck.unref();
    }
    const every = this.opts.resyncIntervalMs ?? 30_000;
    if (this.resyncTimer === undefined && every > 0) {
      // One at a time: a full read slower than the period (a starved guest) would otherwise queue resyncs
      // without bound, and every apply behind them (issue 16).
      this.resyncTimer = setInterval(() => {
        if (this.closed || this.resyncing) return;
        this.resyncing = true;
        this.resync()
          .catch((e: unknown) => {
            this.log.error({ err: e }, 'IPVS resync failed');
          })
          .finally(() => {
            this.resyncing = false;
          });
      }, every);
      this.resyncTimer.unref();
    }
  }

  async observe(): Promise<ObservedTable> {
    return { services: (await this.client.listTable()).map(fromIpvs) };
  }

  /**
   * Connection sync daemons, driven by the director: 'master' sends connection state, 'backup' receives it,
   * 'both' runs the two at once (backup with sync id 0), 'none' stops them. The sync sysctls are written first
   * (a daemon starts with the sync_ports it finds). Idempotent: an identical running daemon is left alone.
   */
  async setSyncRole(role: SyncDaemonRole, cfg?: SyncDaemonConfig): Promise<void> {
    const wanted = wantedDaemons(role, cfg);
    const portsChanged = cfg?.tuning !== undefined && role !== 'none' ? await this.writeSyncSysctls(cfg.tuning) : false;
    const running = await this.client.listDaemons();
    const plan = planSync(running, wanted, portsChanged);
    for (const r of plan.stop) {
      await this.client.stopDaemon(r);
      this.log.info({ syncDaemon: r }, 'sync daemon stopped');
    }
    for (const d of plan.start) {
      await this.client.startDaemon(d);
      this.log.info({ syncDaemon: d.role, interface: d.ifname, syncId: d.syncId }, 'sync daemon started');
    }
  }

  /**
   * Writes drain.ts's REMOVAL_SYSCTLS where they differ. A sysctl that cannot be written (a read-only /proc/sys
   * in a container) is a warning naming it: the table still works, with the kernel's removal behaviour.
   */
  async writeRemovalSysctls(): Promise<void> {
    const dir = this.opts.sysctlDir ?? '/proc/sys/net/ipv4/vs';
    for (const [name, value] of REMOVAL_SYSCTLS) {
      const file = join(dir, name);
      try {
        const held = await readFile(file, 'utf8');
        if (sysctlEquals(held, value)) continue;
        await writeFile(file, `${value}\n`);
        this.log.info({ sysctl: `net.ipv4.vs.${name}`, from: held.trim(), to: value }, 'removal sysctl set');
      } catch (e) {
        this.log.warn({ sysctl: `net.ipv4.vs.${name}`, file, err: e instanceof Error ? e.message : String(e) }, `net.ipv4.vs.${name} could not be set to ${value}: the kernel's behaviour for connections to removed real servers stays`);
      }
    }
  }

  /** Writes the sync sysctls that differ; returns whether sync_ports changed (running daemons must restart). */
  private async writeSyncSysctls(t: SyncTuning): Promise<boolean> {
    const dir = this.opts.sysctlDir ?? '/proc/sys/net/ipv4/vs';
    let portsChanged = false;
    for (const [name, value] of syncSysctls(t)) {
      const file = join(dir, name);
      const held = await readFile(file, 'utf8');
      if (sysctlEquals(held, value)) continue;
      try {
        await writeFile(file, `${value}\n`);
      } catch (e) {
        throw new Error(`net.ipv4.vs.${name} = ${value}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      this.log.info({ sysctl: `net.ipv4.vs.${name}`, from: held.trim(), to: value }, 'sync sysctl set');
      if (name === 'sync_ports') portsChanged = true;
    }
    return portsChanged;
  }

  syncDaemons(): Promise<IpvsDaemon[]> {
    return this.client.listDaemons();
  }
  /** Connection timeouts (tcp, tcpfin, udp) in seconds; 0 leaves one unchanged. */
  setTimeouts(t: Partial<IpvsTimeouts>): Promise<void> {
    return this.client.setTimeouts(t);
  }
  getTimeouts(): Promise<IpvsTimeouts> {
    return this.client.getTimeouts();
  }
  info(): Promise<IpvsInfo> {
    return this.client.getInfo();
  }

  /** Closes the socket; the kernel table stays as it is (reconcile, never flush). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.recheck !== undefined) clearTimeout(this.recheck);
    if (this.resyncTimer !== undefined) clearInterval(this.resyncTimer);
    await this.queue;
    this.client.close();
  }
}

// Field-by-field equality of specs, without allocating: the hot path of every apply (a generic deep
// compare was most of the cost of a one-weight change in a 1,000-service table). The two records below
// make the compiler fail here when the contract gains a field, so no field can be forgotten.
const _SERVICE_FIELDS: Record<keyof ServiceSpec, true> = {
  id: true, family: true, protocol: true, address: true, port: true, fwmark: true, scheduler: true, schedulerFlags: true,
  persistence: true, onePacket: true, realServers: true, takeOver: true,
};
const _REAL_SERVER_FIELDS: Record<keyof RealServerSpec, true> = {
  id: true, address: true, port: true, weight: true, method: true, tunnel: true, upperThreshold: true, lowerThreshold: true,
};

function sameRealServer(a: RealServerSpec, b: RealServerSpec): boolean {
  return (
    a.id === b.id && a.address === b.address && a.port === b.port && a.weight === b.weight && a.method === b.method &&
    a.upperThreshold === b.upperThreshold && a.lowerThreshold === b.lowerThreshold &&
    a.tunnel?.type === b.tunnel?.type && a.tunnel?.port === b.tunnel?.port && a.tunnel?.checksum === b.tunnel?.checksum
  );
}

function sameSpec(a: ServiceSpec, b: ServiceSpec): boolean {
  if (
    a.id !== b.id || a.family !== b.family || a.protocol !== b.protocol || a.address !== b.address || a.port !== b.port ||
    a.fwmark !== b.fwmark || a.scheduler !== b.scheduler || a.onePacket !== b.onePacket || a.takeOver !== b.takeOver ||
    a.persistence?.timeoutSec !== b.persistence?.timeoutSec || a.persistence?.netmask !== b.persistence?.netmask ||
    a.realServers.length !== b.realServers.length
  ) {
    return false;
  }
  const fa = a.schedulerFlags ?? [];
  const fb = b.schedulerFlags ?? [];
  if (fa.length !== fb.length || fa.some((f, i) => f !== fb[i])) return false;
  for (let i = 0; i < a.realServers.length; i++) {
    const ra = a.realServers[i];
    const rb = b.realServers[i];
    if (ra === undefined || rb === undefined || !sameRealServer(ra, rb)) return false;
  }
  return true;
}

/** The services of `t` in `scope`, looked up one by one (the table is not walked). */
function scoped(t: KernelView, scope: Set<string>): ObservedTable {
  const services: ObservedService[] = [];
  for (const id of scope) {
    const s = t.get(id);
    if (s !== undefined) services.push(s);
  }
  return { services };
}

function byId<T extends { id: string }>(services: readonly T[]): Map<string, T> {
  return new Map(services.map((s) => [s.id, s]));
}

/** `base` with the services in `scope` replaced by those of `part`, in place (only the scope is touched). */
function merge<T extends { id: string }>(base: Map<string, T> | undefined, part: { services: T[] }, scope: Set<string>): Map<string, T> {
  const out = base ?? new Map<string, T>();
  for (const id of scope) out.delete(id);
  for (const s of part.services) out.set(s.id, s);
  return out;
}

/** `view` with the services in `scope` replaced by those of `part`, in place (only the scope is touched). */
function mergeView(view: KernelView, part: ObservedTable, scope: Set<string>): KernelView {
  for (const id of scope) view.delete(id);
  for (const s of part.services) view.set(s);
  return view;
}

/** A planned table as an observed one: connection counts carried over from what was read. */
function withCounts(t: DesiredTable, prev: ObservedTable): ObservedTable {
  const before = new Map(prev.services.map((s) => [s.id, new Map(s.realServers.map((r) => [r.id, r]))]));
  return {
    services: t.services.map((s) => ({
      ...s,
      realServers: s.realServers.map((r) => {
        const old = before.get(s.id)?.get(r.id);
        return { ...r, activeConns: old?.activeConns ?? 0, inactiveConns: old?.inactiveConns ?? 0, persistConns: old?.persistConns ?? 0 };
      }),
    })),
  };
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function toClientOp(op: PlanOp): IpvsOp {
  switch (op.kind) {
    case 'add-service':
      return { op: 'add-service', service: toIpvsService(op.service) };
    case 'update-service':
      return { op: 'update-service', service: toIpvsService(op.service) };
    case 'delete-service':
      return { op: 'delete-service', key: serviceKeyOf(op.service) };
    case 'add-real-server':
      return { op: 'add-dest', service: serviceKeyOf(op.service), dest: toIpvsDest(op.realServer) };
    case 'update-real-server':
      return { op: 'update-dest', service: serviceKeyOf(op.service), dest: toIpvsDest(op.realServer) };
    case 'delete-real-server':
      return { op: 'delete-dest', service: serviceKeyOf(op.service), dest: toIpvsDest(op.realServer) };
  }
}

/** Opens the IPVS socket (throws IpvsUnavailable without IPVS) and returns the backend. */
export async function createIpvsDataplane(opts: IpvsDataplaneOptions = {}): Promise<IpvsDataplane> {
  const client = opts.client ?? (await IpvsClient.open());
  const ownership = opts.ownership ?? fileOwnership(join(opts.stateDir ?? '/var/lib/lvsd', 'ipvs-owned.json'));
  const dp = new IpvsDataplane(client, ownership, opts);
  await dp.writeRemovalSysctls();
  return dp;
}
