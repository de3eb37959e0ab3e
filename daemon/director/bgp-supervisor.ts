// The director's BGP peer: BIRD, driven over its control socket (daemon/bgp/). lvsd owns one config fragment
// (bgp.configFile, included by bird.conf) with a `protocol static` per prefix; a quorum change is an
// `enable`/`disable` of that protocol (instant), a reload that changes the bgp section is BIRD's
// `configure check` → `configure timeout N` → `configure confirm` (BIRD undoes it by itself if lvsd dies
// half-way), and a stop announces with the graceful-shutdown community, waits bgp.drainOnStop, then withdraws.
// BIRD is its own service: when its socket is missing lvsd says so, keeps serving, and retries.
// An operator's withdraw is kept in the state file (as a drain override is), so a restart does not announce
// a prefix the operator took off this director: the first fragment lvsd writes already has it withdrawn.
import { rename, writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { BirdClient } from '../bgp/bird-client.js';
import { protocolName, renderBirdConfig } from '../bgp/bird-config.js';
import { parseProtocols } from '../bgp/reply.js';
import type { BgpConfig, Config } from '../config/types.js';
import type { StoredBgpWithdraw } from '../state/store.js';
import { bgpAnnouncements, type BgpDecision, type BgpPhase } from './bgp-desired.js';
import { DirectorRejection } from './port.js';
import type { BgpForceHow, BgpSnapshot, DirectorEventInput } from './snapshot.js';

export interface BgpSupervisorOptions {
  logger: Logger;
  emit(e: DirectorEventInput): void;
  quorumLost: { has(id: string): boolean };
  /** How often BIRD's sessions are read and a missing socket retried (default 2 s). */
  pollMs?: number;
  /** Where operator withdrawals outlive a restart (the state store); without it they are held in memory. */
  kept?: BgpWithdrawnStore;
  now?: () => Date;
}

/** The state store's part the supervisor uses (StateStore has it). */
export interface BgpWithdrawnStore {
  bgpWithdrawn(): readonly StoredBgpWithdraw[];
  saveBgpWithdrawn(list: readonly StoredBgpWithdraw[]): Promise<void>;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class BgpSupervisor {
  private bgp: BgpConfig | null = null;
  private client: BirdClient | null = null;
  private phase: BgpPhase = 'running';
  /** Announced state per prefix as BIRD last accepted it (absent: not known to be in BIRD). */
  private readonly applied = new Map<string, boolean>();
  private decisions: BgpDecision[] = [];
  /** Prefixes an operator withdrew from this director, until a restore (opts.kept holds them across restarts). */
  private withdrawals = new Map<string, StoredBgpWithdraw>();
  private sessions: BgpSnapshot['sessions'] = [];
  private problem: string | null = null;
  /** Writes and commands run one at a time: a reload's configure never interleaves with an enable. */
  private chain: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** True once BIRD has read lvsd's fragment (a configure succeeded since the client connected). */
  private configured = false;

  constructor(private readonly opts: BgpSupervisorOptions) {
    for (const w of opts.kept?.bgpWithdrawn() ?? []) this.withdrawals.set(w.prefix, { ...w });
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  async start(config: Config): Promise<void> {
    try {
      await this.apply(config);
    } catch (e) {
      // BIRD down (or refusing) at start: keep the section anyway, so the snapshot says why and the poll
      // configures BIRD once it answers — with the operator's withdrawals, pruned here as apply() would.
      const bgp = config.bgp ?? null;
      this.bgp = bgp;
      await this.dropWithdrawn(bgp?.announce.map((a) => a.prefix) ?? []);
      if (bgp !== null) this.decisions = bgpAnnouncements(bgp, this.opts.quorumLost, this.phase, this.withdrawn);
      this.fail(e);
    }
    this.timer = setInterval(() => { void this.poll(); }, this.opts.pollMs ?? 2000);
    this.timer.unref();
  }

  /** A reload's bgp part (and its rollback): throws when BIRD refuses the new fragment, which stays unapplied. */
  apply(config: Config): Promise<void> {
    return this.serial(async () => {
      const next = config.bgp ?? null;
      const previous = this.bgp;
      if (next === null) {
        // The section removed: what this director announced is withdrawn, then BIRD is left alone.
        if (previous !== null && this.client !== null) await this.withdrawAll();
        this.client?.close();
        this.client = null;
        this.bgp = null;
        await this.dropWithdrawn([]);
        return;
      }
      if (next.socket !== previous?.socket) {
        this.client?.close();
        this.client = new BirdClient({ socket: next.socket });
        this.configured = false;
      }
      this.bgp = next;
      try {
        await this.configure(next, previous);
      } catch (e) {
        this.bgp = previous;
        throw e;
      }
      // Only once BIRD took the new fragment: a refused reload keeps the old prefixes, withdrawals included
      // (bgp is the last part of a reload, so nothing later rolls this one back).
      await this.dropWithdrawn(next.announce.map((a) => a.prefix));
      await this.sync();
    });
  }

  /** Forgets withdrawals of prefixes no longer in bgp.announce (a reload, or a config changed while stopped). */
  private async dropWithdrawn(announced: readonly string[]): Promise<void> {
    const gone = [...this.withdrawals.values()].filter((w) => !announced.includes(w.prefix));
    if (gone.length === 0) return;
    for (const w of gone) {
      this.log.warn({ prefix: w.prefix, by: w.by, at: w.at }, `bgp: dropping the operator withdraw of ${w.prefix}: no longer in bgp.announce`);
      this.withdrawals.delete(w.prefix);
    }
    await this.keep(this.withdrawals).catch((e: unknown) => { this.log.error({ prefixes: gone.map((w) => w.prefix) }, `bgp: could not drop withdrawals from the state file: ${message(e)}`); });
  }

  private keep(withdrawals: ReadonlyMap<string, StoredBgpWithdraw>): Promise<void> {
    return this.opts.kept?.saveBgpWithdrawn([...withdrawals.values()]) ?? Promise.resolve();
  }

  /** prefix → who withdrew it, as bgpAnnouncements() reads it. */
  private get withdrawn(): Map<string, string> {
    return new Map([...this.withdrawals].map(([p, w]) => [p, w.by]));
  }

  private async withdrawAll(): Promise<void> {
    const phase = this.phase;
    this.phase = 'stopped';
    try {
      await this.sync();
    } finally {
      this.phase = phase;
    }
  }

  /**
   * An operator withdraws one prefix from this director (the others keep announcing it, so ECMP moves its
   * flows there), or restores it to follow quorum again. The decision stands even when BIRD does not answer
   * now: it is applied when BIRD is back (the snapshot says what BIRD runs). It is written to the state file
   * first: a withdraw that cannot be kept across a restart is refused, and nothing changes.
   */
  async force(prefix: string, how: BgpForceHow, by: string): Promise<void> {
    const bgp = this.bgp;
    if (bgp === null) throw new DirectorRejection(409, 'BGP is not configured (no bgp section in the running config)');
    if (!bgp.announce.some((a) => a.prefix === prefix)) throw new DirectorRejection(404, `prefix ${prefix} is not in bgp.announce`);
    // In the queue, so two operators' changes are written one after the other and neither is lost.
    await this.serial(async () => {
      const next = new Map(this.withdrawals);
      if (how === 'withdraw') next.set(prefix, { prefix, by, at: (this.opts.now ?? (() => new Date()))().toISOString() });
      else next.delete(prefix);
      await this.keep(next);
      this.withdrawals = next;
    });
    this.log.warn({ prefix, how, by }, `operator bgp ${how}: ${prefix}`);
    this.opts.emit({ type: 'bgp.force', prefix, how, by });
    await this.serial(() => this.sync()).catch((e: unknown) => { this.fail(e); });
  }

  /** Health changed somewhere: announce or withdraw what quorum now says. */
  refresh(): void {
    if (this.bgp !== null) void this.serial(() => this.sync()).catch((e: unknown) => { this.fail(e); });
  }

  /** Graceful stop: graceful-shutdown community, the drain wait, then every prefix withdrawn. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    const bgp = this.bgp;
    if (bgp !== null && this.client !== null) {
      try {
        if (bgp.drainOnStopMs > 0 && [...this.applied.values()].some(Boolean)) {
          this.phase = 'draining';
          await this.serial(() => this.rewrite(bgp, true));
          this.log.info({ drainMs: bgp.drainOnStopMs }, `bgp: announcing with the graceful-shutdown community for ${String(bgp.drainOnStopMs)} ms before the withdraw`);
          await new Promise((r) => setTimeout(r, bgp.drainOnStopMs));
        }
        await this.serial(() => this.withdrawAll());
        this.phase = 'stopped';
      } catch (e) {
        this.fail(e);
      }
    }
    this.client?.close();
  }

  view(): BgpSnapshot | undefined {
    const bgp = this.bgp;
    if (bgp === null) return undefined;
    return {
      speaker: 'bird',
      socket: bgp.socket,
      problem: this.problem,
      sessions: this.sessions,
      announcements: this.decisions.map((d) => ({ prefix: d.prefix, protocol: protocolName(d.prefix), announced: this.applied.get(d.prefix) === true, reason: d.reason, withdrawnBy: this.withdrawals.get(d.prefix)?.by ?? null })),
    };
  }

  // ---- the edges -----------------------------------------------------------------------------------------

  private serial<T>(job: () => Promise<T>): Promise<T> {
    const run = this.chain.then(job);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async command(cmd: string): Promise<string> {
    if (this.client === null) throw new Error('bgp: no BIRD client');
    const r = await this.client.command(cmd);
    return r.lines.map((l) => l.text).join('\n');
  }

  /** Writes the fragment (atomically: BIRD may read it at any time). */
  private async write(bgp: BgpConfig, list: readonly BgpDecision[]): Promise<void> {
    const tmp = `${bgp.configFile}.lvsd-tmp`;
    await writeFile(tmp, renderBirdConfig(list));
    await rename(tmp, bgp.configFile);
  }

  /**
   * Writes the fragment for `next` and has BIRD take it: check first (a refusal puts the previous fragment back
   * and names BIRD's FILE:LINE:COL), then a timed configure that BIRD undoes by itself unless confirmed.
   */
  private async configure(next: BgpConfig, previous: BgpConfig | null): Promise<void> {
    const decisions = bgpAnnouncements(next, this.opts.quorumLost, this.phase, this.withdrawn);
    await this.write(next, decisions);
    try {
      await this.command('configure check');
    } catch (e) {
      if (previous !== null) await this.write(previous, bgpAnnouncements(previous, this.opts.quorumLost, this.phase, this.withdrawn));
      throw new Error(`bgp: BIRD refused lvsd's fragment ${next.configFile}: ${message(e)}`);
    }
    await this.command(`configure timeout ${String(Math.max(1, Math.round(next.configureTimeoutMs / 1000)))}`);
    await this.command('configure confirm');
    this.configured = true;
    this.decisions = decisions;
    // The fragment said each prefix's state, and BIRD now runs it.
    const before = new Map(this.applied);
    this.applied.clear();
    for (const d of decisions) {
      this.applied.set(d.prefix, d.announce);
      if ((before.get(d.prefix) ?? false) !== d.announce) this.announced(d);
    }
    this.clearProblem();
  }

  private announced(d: BgpDecision): void {
    this.log.info({ prefix: d.prefix, reason: d.reason }, `bgp: ${d.announce ? 'announcing' : 'withdrawing'} ${d.prefix} (${d.reason})`);
    this.opts.emit({ type: 'bgp.announcement', prefix: d.prefix, announced: d.announce, reason: d.reason });
  }

  /** Rewrites the fragment (draining: every announced prefix with the graceful-shutdown community) and configures. */
  private async rewrite(bgp: BgpConfig, draining: boolean): Promise<void> {
    const list = bgpAnnouncements(bgp, this.opts.quorumLost, draining ? 'draining' : this.phase, this.withdrawn);
    await this.write(bgp, list);
    await this.command('configure');
    this.decisions = list;
  }

  /** Brings BIRD's protocols in line with the decision: the fragment first, so a later configure agrees. */
  private async sync(): Promise<void> {
    const bgp = this.bgp;
    if (bgp === null) return;
    if (!this.configured) {
      await this.configure(bgp, null);
      return;
    }
    const decisions = bgpAnnouncements(bgp, this.opts.quorumLost, this.phase, this.withdrawn);
    this.decisions = decisions;
    const changed = decisions.filter((d) => this.applied.get(d.prefix) !== d.announce);
    if (changed.length === 0) return;
    await this.write(bgp, decisions);
    for (const d of changed) {
      await this.command(`${d.announce ? 'enable' : 'disable'} ${protocolName(d.prefix)}`);
      this.applied.set(d.prefix, d.announce);
      this.announced(d);
    }
    this.clearProblem();
  }

  private async poll(): Promise<void> {
    if (this.bgp === null || this.client === null) return;
    try {
      if (!this.configured) await this.serial(() => this.sync());
      const r = await this.client.command('show protocols');
      this.sessions = parseProtocols(r).filter((p) => p.proto === 'BGP').map((p) => ({ name: p.name, state: p.state, since: p.since, info: p.info }));
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    const m = message(e);
    // A lost connection means BIRD may have restarted: configure again once it answers.
    this.configured = false;
    this.applied.clear();
    this.sessions = [];
    if (m !== this.problem) this.log.error({ socket: this.bgp?.socket }, `bgp: ${m}`);
    this.problem = m;
  }

  private clearProblem(): void {
    if (this.problem !== null) this.log.info({ socket: this.bgp?.socket }, 'bgp: BIRD answers again');
    this.problem = null;
  }
}
