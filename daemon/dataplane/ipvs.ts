// The IPVS dataplane backend: reconciles the kernel's IPVS table to the desired table over generic
// netlink. Never flushes: it reads what the kernel holds, adopts what lvsd owns, leaves the rest alone,
// and sends only the difference (see reconcile.ts for the ownership rules, drain.ts for removals).
//
//   const probe = await probeIpvs();                 // { available: true, version } | { available: false, reason }
//   const dp = await createIpvsDataplane({ stateDir: '/var/lib/lvsd', drain: { mode: 'graceful', timeoutMs: 60_000 }, logger });
//   await dp.apply(desired); await dp.observe(); await dp.setSyncRole('master', { interface: 'eth0', syncId: 51 });
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { IpvsClient, probeIpvs, type IpvsOp } from '../ipvs/client.js';
import type { IpvsDaemon, IpvsInfo, IpvsTimeouts, SyncRole } from '../ipvs/codec.js';
import { SYNC_DEFAULT_GROUP, SYNC_DEFAULT_PORT } from '../ipvs/constants.js';
import { canonicalizeDesired, fromIpvs, serviceKeyOf, toIpvsDest, toIpvsService } from '../ipvs/spec.js';
import { applyDrain, DEFAULT_DRAIN_POLICY, type DrainEntry, type DrainPolicy } from './drain.js';
import { opText, plan, type PlanOp } from './reconcile.js';
import type { ApplyReport, Dataplane, DesiredTable, ObservedTable } from './types.js';

export { probeIpvs };

/** Where lvsd records which kernel services it owns, so a restart adopts them and leaves others alone. */
export interface OwnershipStore {
  load(): Set<string>;
  save(ids: ReadonlySet<string>): void;
}

/** JSON file `{ "services": [...] }`, written to a temp file then renamed. */
export function fileOwnership(path: string): OwnershipStore {
  return {
    load: () => {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
        throw e;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        throw new Error(`${path}: not JSON: ${(e as Error).message}`);
      }
      const services = (parsed as { services?: unknown }).services;
      if (!Array.isArray(services) || !services.every((s) => typeof s === 'string')) throw new Error(`${path}: expected { "services": [string, ...] }`);
      return new Set(services);
    },
    save: (ids) => {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(`${path}.tmp`, JSON.stringify({ services: [...ids].sort() }, null, 1) + '\n');
      renameSync(`${path}.tmp`, path);
    },
  };
}

export function memoryOwnership(initial: Iterable<string> = []): OwnershipStore & { ids: Set<string> } {
  const store = {
    ids: new Set(initial),
    load: () => new Set(store.ids),
    save: (ids: ReadonlySet<string>) => {
      store.ids = new Set(ids);
    },
  };
  return store;
}

/** The subset of pino's Logger this backend uses. */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
const silent: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface SyncDaemonConfig {
  /** Interface the sync messages go out of / come in on (keepalived's lvs_sync_daemon_interface). */
  interface: string;
  syncId: number;
  mcastGroup?: string;
  mcastPort?: number;
  mcastTtl?: number;
  syncMaxLen?: number;
}

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
  logger?: Log;
  now?: () => number;
}

export class IpvsDataplane implements Dataplane {
  readonly kind = 'ipvs' as const;
  private owned: Set<string>;
  private drainState = new Map<string, DrainEntry>();
  private lastDesired: DesiredTable | undefined;
  private lastEffective: DesiredTable | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private recheck: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly log: Log;
  private readonly now: () => number;
  private readonly drainPolicy: DrainPolicy;

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
  ownedServices(): ReadonlySet<string> {
    return this.owned;
  }
  /** Real servers kept at weight 0 while they drain ("serviceId|realServerId" → since). */
  draining(): ReadonlyMap<string, DrainEntry> {
    return this.drainState;
  }

  apply(desired: DesiredTable): Promise<ApplyReport> {
    const job = this.queue.then(() => this.applyNow(desired));
    this.queue = job.catch(() => undefined);
    return job;
  }

  private async applyNow(desiredIn: DesiredTable): Promise<ApplyReport> {
    const t0 = performance.now();
    const desired = canonicalizeDesired(desiredIn);
    const observed = { services: (await this.client.listTable()).map(fromIpvs) };
    const drain = applyDrain(desired, observed, this.owned, this.drainState, this.drainPolicy, this.now());
    for (const key of drain.started) this.log.info({ service: key.split('|')[0], realServer: key.split('|')[1] }, 'real server draining at weight 0');
    for (const f of drain.finished) this.log.info({ service: f.key.split('|')[0], realServer: f.key.split('|')[1], reason: f.reason }, 'real server removed');
    this.drainState = drain.state;

    const p = plan(drain.effective, observed, this.owned);
    for (const id of p.conflicts) this.log.warn({ service: id }, 'service exists in the kernel but lvsd does not own it: left alone (set takeOver to adopt it)');

    // Drift: operations that would not be needed had the kernel still held what lvsd last applied.
    const drift: string[] = [];
    if (this.lastEffective !== undefined) {
      const expected = new Set(plan(drain.effective, this.lastEffective, p.owned).ops.map(opText));
      for (const op of p.ops) if (!expected.has(opText(op))) drift.push(opText(op));
      for (const d of drift) this.log.warn({ object: d }, 'kernel changed behind lvsd: restoring');
    }

    const results = await this.client.batch(p.ops.map(toClientOp));
    const failures: string[] = [];
    const nextOwned = new Set(p.owned);
    results.forEach((r, i) => {
      const op = p.ops[i];
      if (r.error === undefined || op === undefined) return;
      failures.push(r.error.message);
      this.log.error({ service: op.service.id, ...('realServer' in op ? { realServer: op.realServer.id } : {}), code: r.error.code }, r.error.message);
      if (op.kind === 'add-service') nextOwned.delete(op.service.id);
      if (op.kind === 'delete-service') nextOwned.add(op.service.id);
    });
    if (!sameSet(nextOwned, this.owned)) {
      this.owned = nextOwned;
      this.ownership.save(this.owned);
    }
    this.lastDesired = desiredIn;
    this.lastEffective = drain.effective;
    this.scheduleRecheck();
    const report: ApplyReport = { operations: p.ops.length, drift, durationMs: performance.now() - t0 };
    if (p.conflicts.length > 0) report.conflicts = p.conflicts;
    if (failures.length > 0) report.failures = failures;
    return report;
  }

  private scheduleRecheck(): void {
    if (this.recheck !== undefined || this.closed || this.drainState.size === 0) return;
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      if (this.lastDesired === undefined || this.closed) return;
      this.apply(this.lastDesired).catch((e: unknown) => {
        this.log.error({ err: e }, 'drain re-check failed');
      });
    }, this.opts.drainRecheckMs ?? 2000);
    this.recheck.unref();
  }

  async observe(): Promise<ObservedTable> {
    return { services: (await this.client.listTable()).map(fromIpvs) };
  }

  /**
   * Connection sync daemon role, driven by the VRRP state: 'master' sends connection state,
   * 'backup' receives it, 'none' stops both. Idempotent: an identical running daemon is left alone.
   */
  async setSyncRole(role: SyncRole | 'none', cfg?: SyncDaemonConfig): Promise<void> {
    const running = await this.client.listDaemons();
    const want: IpvsDaemon | undefined =
      role === 'none'
        ? undefined
        : (() => {
            if (cfg === undefined) throw new Error(`setSyncRole(${role}) needs the sync daemon configuration`);
            const d: IpvsDaemon = { role, ifname: cfg.interface, syncId: cfg.syncId, mcastGroup: cfg.mcastGroup ?? SYNC_DEFAULT_GROUP, mcastPort: cfg.mcastPort ?? SYNC_DEFAULT_PORT, mcastTtl: cfg.mcastTtl ?? 1 };
            if (cfg.syncMaxLen !== undefined) d.syncMaxLen = cfg.syncMaxLen;
            return d;
          })();
    for (const d of running) {
      const same = want !== undefined && d.role === want.role && d.ifname === want.ifname && d.syncId === want.syncId &&
        (d.mcastGroup === undefined || d.mcastGroup === want.mcastGroup) && (d.mcastPort === undefined || d.mcastPort === want.mcastPort) &&
        (d.mcastTtl === undefined || d.mcastTtl === want.mcastTtl);
      if (same) return;
      await this.client.stopDaemon(d.role);
      this.log.info({ syncDaemon: d.role, interface: d.ifname, syncId: d.syncId }, 'sync daemon stopped');
    }
    if (want !== undefined) {
      await this.client.startDaemon(want);
      this.log.info({ syncDaemon: want.role, interface: want.ifname, syncId: want.syncId }, 'sync daemon started');
    }
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
    await this.queue;
    this.client.close();
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
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
  return new IpvsDataplane(client, ownership, opts);
}
