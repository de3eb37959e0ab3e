// Serialises dataplane applies and coalesces bursts: however many events arrive while an apply is in
// flight, exactly one more apply follows it, with the newest desired table. (Graceful removal is the
// backend's business: IPVS drains to weight 0 first; nftables and userspace keep established
// connections by their nature.)
import type { ApplyReport, ChangedServices, Dataplane, DesiredTable } from '../dataplane/types.js';

export interface ApplyLoopHooks {
  /** The desired table as of now (recomputed on every pass). */
  desired(): DesiredTable;
  /** What the table desired() just returned changed against the one before it (types.ts, ChangedServices). */
  changed?(): ChangedServices | undefined;
  applied(report: ApplyReport): void;
  failed(error: Error): void;
}

/** How the last pass ended. */
export type ApplyOutcome = { ok: true; report: ApplyReport } | { ok: false; error: Error };

export class ApplyLoop {
  private dirty = false;
  private running: Promise<void> | null = null;
  private last: ApplyOutcome | null = null;

  constructor(
    private readonly dataplane: Dataplane,
    private readonly hooks: ApplyLoopHooks,
  ) {}

  /** Asks for an apply; resolves once an apply that started after this call has finished. */
  request(): Promise<void> {
    this.dirty = true;
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * Like request(), and says how the pass that applied the newest desired table ended — what a reload
   * needs to know whether its dataplane part went through.
   */
  async settle(): Promise<ApplyOutcome> {
    await this.request();
    if (this.last === null) throw new Error('apply loop settled without a pass');
    return this.last;
  }

  /** Waits for whatever is in flight. */
  async idle(): Promise<void> {
    while (this.running !== null) await this.running;
  }

  private async run(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      try {
        const desired = this.hooks.desired();
        const report = await this.dataplane.apply(desired, this.hooks.changed?.());
        this.last = { ok: true, report };
        this.hooks.applied(report);
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        this.last = { ok: false, error };
        this.hooks.failed(error);
      }
    }
  }
}
