// The director's dataplane peer: the backend open-dataplane.ts opened, the apply loop that hands it the desired
// table (one apply in flight, bursts coalesced), what it reports (drift repaired, refusals, conflicts: logged
// here once), a reload's dataplane part, and the counters polled for the snapshot.
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { ChangedServices, DesiredTable, ObservedTable } from '../dataplane/types.js';
import { ApplyLoop } from './apply-loop.js';
import type { OpenedDataplane } from './open-dataplane.js';
import type { DirectorEventInput } from './snapshot.js';

/** The most of the wall clock the dataplane's reads may take, periodic or after applies (nextReadAt). */
const READ_SHARE = 0.2;

export interface DataplaneSupervisorOptions {
  logger: Logger;
  emit(e: DirectorEventInput): void;
  /** The desired table as of now (recomputed on every pass). */
  desired(): DesiredTable;
  /** The changed services of the table desired() just returned (types.ts, ChangedServices). */
  changed?(): ChangedServices | undefined;
  /** How often connection counts and rates are read (default 2 s). */
  statsIntervalMs?: number;
}

export class DataplaneSupervisor {
  private readonly loop: ApplyLoop | null;
  private statsTimer: NodeJS.Timeout | null = null;
  /** A counters read is in flight: the next tick skips (see pollStats). */
  private polling = false;
  /** An apply landed while a read was in flight: one more read follows it. */
  private readAgain = false;
  /** An apply's read, waiting out its gap after the last read (readSoon). */
  private readTimer: NodeJS.Timeout | null = null;
  /** When the last read ended and how long it took (performance.now() ms). */
  private lastReadEnd = -Infinity;
  private lastReadMs = 0;
  private closed = false;
  private observedTable: ObservedTable = { services: [] };
  /** What the latest apply refused: a reload fails only on refusals it caused. */
  private refusals: readonly string[] = [];

  constructor(
    readonly opened: OpenedDataplane,
    private readonly opts: DataplaneSupervisorOptions,
  ) {
    const log = opts.logger;
    const dp = opened.dataplane;
    this.loop = dp === null ? null : new ApplyLoop(dp, {
      desired: () => opts.desired(),
      changed: () => opts.changed?.(),
      applied: (report) => {
        this.refusals = report.failures ?? [];
        const changedTable = report.operations > 0 || report.drift.length > 0;
        // What the table holds now is read at once, not at the next tick: `lvsd status` right after a start or
        // a drain would show the table as it was up to a period ago (all real servers "out of the table").
        if (changedTable) this.readSoon();
        if (report.drift.length > 0) log.warn({ drift: report.drift }, 'dataplane drift repaired: entries changed behind lvsd’s back were put back');
        if (changedTable) opts.emit({ type: 'dataplane.apply', operations: report.operations, drift: report.drift, durationMs: report.durationMs });
        for (const c of report.conflicts ?? []) log.warn({ virtualServer: c }, `not taking over ${c}: the dataplane holds it and lvsd does not own it`);
        for (const f of report.failures ?? []) log.error({ failure: f }, `dataplane refused: ${f}`);
      },
      failed: (e) => {
        log.error({ err: e }, `dataplane apply failed: ${e.message}`);
        opts.emit({ type: 'dataplane.error', message: e.message });
      },
    });
  }

  /** The first apply, then counters every statsIntervalMs. */
  async start(config: Config): Promise<void> {
    if (this.loop === null) return;
    await this.loop.request();
    for (const vs of config.virtualServers) {
      this.opts.logger.info({ virtualServer: vs.name, id: vs.id, scheduler: vs.scheduler, realServers: vs.realServers.map((r) => r.id) }, `virtual server ${vs.name} programmed in ${this.opened.kind}`);
    }
    this.statsTimer = setInterval(() => {
      if (performance.now() >= this.nextReadAt()) void this.pollStats();
    }, this.opts.statsIntervalMs ?? 2000);
    this.statsTimer.unref();
  }

  /** The desired table changed: apply it (resolves once an apply started after this call has finished). */
  request(): Promise<void> {
    return this.loop?.request() ?? Promise.resolve();
  }

  /** Waits for the passes in flight or asked for. */
  idle(): Promise<void> {
    return this.loop?.idle() ?? Promise.resolve();
  }

  /** Refusals the backend holds now (before a reload: those it must not be blamed for). */
  get currentRefusals(): ReadonlySet<string> {
    return new Set(this.refusals);
  }

  /** A reload's dataplane part: backend settings, then the table; throws on what the backend newly refused. */
  async applyReload(config: Config, known: ReadonlySet<string>): Promise<void> {
    if (this.loop === null) return;
    await this.opened.retune(config);
    const r = await this.loop.settle();
    if (!r.ok) throw r.error;
    const refused = (r.report.failures ?? []).filter((f) => !known.has(f));
    if (refused.length > 0) throw new Error(`${this.opened.kind} refused: ${refused.join('; ')}`);
  }

  get observed(): ObservedTable {
    return this.observedTable;
  }

  /**
   * One read at a time: a read slower than the period (a big table, a starved guest) that let the next one start
   * beside it would pile reads on the dump sockets without bound, and an apply's own dump would wait behind
   * all of them (issue 16: the guest's table lagged its verdicts by minutes). A tick skips while one is in flight,
   * and before nextReadAt.
   */
  private async pollStats(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    this.clearReadTimer();
    const t0 = performance.now();
    try {
      this.observedTable = (await this.opened.dataplane?.observe()) ?? this.observedTable;
    } catch (e) {
      this.opts.logger.warn({ err: e }, 'reading dataplane counters failed');
    } finally {
      this.polling = false;
      this.lastReadEnd = performance.now();
      this.lastReadMs = this.lastReadEnd - t0;
    }
    if (this.readAgain) {
      this.readAgain = false;
      this.readSoon();
    }
  }

  /**
   * An apply changed the table: read it back soon. A read in flight may have started before the apply landed, so
   * one more follows it. Reads after applies keep READ_SHARE of the wall clock at most: a burst of applies on a
   * table whose read takes long (an IPVS dump of 10,000 real servers in the guest, `nft -j list` of a big table)
   * would otherwise read back to back, each read's decoding on the event loop and its dumps ahead of the next
   * apply's. A table read in a few ms is read at once.
   */
  private readSoon(): void {
    if (this.closed) return;
    if (this.polling) {
      this.readAgain = true;
      return;
    }
    if (this.readTimer !== null) return;
    const wait = this.nextReadAt() - performance.now();
    if (wait <= 0) {
      void this.pollStats();
      return;
    }
    this.readTimer = setTimeout(() => {
      this.readTimer = null;
      void this.pollStats();
    }, wait);
    this.readTimer.unref();
  }

  /**
   * The earliest the next read may start: reads keep READ_SHARE of the wall clock at most. `nft -j list` of 1,000
   * services × 10 takes ~215 ms (~100 ms of it this process's CPU), of 5,000 ~1.1 s (~400 ms): read every 2 s, the
   * counters alone took a fifth of a core.
   */
  private nextReadAt(): number {
    return this.lastReadEnd + this.lastReadMs * (1 / READ_SHARE - 1);
  }

  private clearReadTimer(): void {
    if (this.readTimer !== null) clearTimeout(this.readTimer);
    this.readTimer = null;
  }

  /** Waits for the apply in flight; the dataplane keeps its entries (nothing is flushed on stop). */
  async close(): Promise<void> {
    if (this.statsTimer !== null) clearInterval(this.statsTimer);
    this.clearReadTimer();
    this.closed = true;
    await this.loop?.idle();
    await this.opened.dataplane?.close();
  }
}
