// The director's VRRP peer: starts the VRRP engine process, restarts it when it dies (as keepalived's parent
// restarts its VRRP child), hands it a reload's options, keeps the transition history, applies operator
// failovers, and makes the IPVS connection sync daemon follow the role. Runs in the main lvsd process; the
// engine itself runs in its own child process (daemon/vrrp/engine-process.ts), where nothing here can delay
// an advert.
import type { Logger } from 'pino';
import type { Config, SyncDaemon } from '../config/types.js';
import type { SyncDaemonConfig } from '../dataplane/ipvs/backend.js';
import { startVrrp as realStartVrrp, type TransitionEvent, type VrrpEngine, type VrrpSnapshot, type VrrpState } from '../vrrp/index.js';
import { vrrpOptions } from './plan.js';
import { DirectorRejection } from './port.js';
import type { DirectorEventInput, FailoverHow, VrrpTransition } from './snapshot.js';

/** The sync daemons the director asks for: the VRRP role's one, both at once (ipvs.syncDaemon.role: both), or none. */
export type SyncRole = 'master' | 'backup' | 'both' | 'none';

/** The dataplane's connection sync daemon, when it has one (IPVS). */
export interface SyncDaemonPort {
  setSyncRole(role: SyncRole, cfg?: SyncDaemonConfig): Promise<void>;
}

export interface VrrpSupervisorOptions {
  logger: Logger;
  emit(e: DirectorEventInput): void;
  startVrrp?: typeof realStartVrrp;
  /** Restart delays after the engine process dies (default 1 s, doubling up to 30 s). */
  respawn?: { firstMs: number; maxMs: number };
  now?: () => number;
}

/** An engine that ran this long before it died was healthy: the next restart waits the first delay again. */
const STABLE_MS = 60_000;
const HISTORY = 50;

export class VrrpSupervisor {
  private engine: VrrpEngine | null = null;
  private problem: string | null = null;
  private respawnTimer: NodeJS.Timeout | null = null;
  private respawnDelayMs: number;
  private readonly transitions = new Map<string, VrrpTransition[]>();
  private readonly forced = new Map<string, 'lower-priority' | 'maintenance'>();
  /** Each instance's state as its transitions told it: the role is decided from these, never a stale snapshot. */
  private readonly states = new Map<string, VrrpState>();
  /**
   * MASTERs whose VIPs are up and first gratuitous ARPs sent. The sync daemon turns master only then, as
   * keepalived's does (vrrp_state_become_master): stopping the backup daemon in the kernel while the VIPs are
   * being added held them up by 0.3–0.5 s in a loaded guest, and the ARPs with them (docs/ipvs.md).
   */
  private readonly announced = new Set<string>();
  private config: Config | null = null;
  private sync: SyncDaemonPort | null = null;
  /** The sync daemon as last applied ("role config"), and the chain that applies changes one at a time. */
  private syncApplied = 'none';
  private syncQueue: Promise<void> = Promise.resolve();
  /** Engine starts and restarts run one at a time, and a stop waits for the one in progress. */
  private lifecycle: Promise<unknown> = Promise.resolve();
  private stopping = false;

  constructor(private readonly opts: VrrpSupervisorOptions) {
    this.respawnDelayMs = opts.respawn?.firstMs ?? 1000;
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  /** The dataplane's sync daemon (null: none); the role follows VRRP from then on. */
  attachSyncDaemon(sync: SyncDaemonPort | null): void {
    this.sync = sync;
  }

  /** Starts the engine for `config`; returns why it could not (lvsd then serves the rest without VRRP). */
  async start(config: Config): Promise<string | null> {
    this.config = config;
    if (config.vrrp.instances.length === 0) {
      await this.followRole();
      return null;
    }
    const start = this.opts.startVrrp ?? realStartVrrp;
    let engine: VrrpEngine;
    try {
      // Transitions made while starting (INIT → BACKUP) arrive through the third argument.
      engine = await start(vrrpOptions(config), this.log.child({ component: 'vrrp' }), { transition: (t) => { this.onTransition(t); }, announced: (name) => { this.onAnnounced(name); } });
    } catch (e) {
      // No raw sockets (no CAP_NET_RAW), a missing interface…: say so plainly and keep serving the rest.
      this.problem = e instanceof Error ? e.message : String(e);
      this.log.error({ err: e }, `VRRP not running: ${this.problem}`);
      await this.followRole();
      return this.problem;
    }
    this.engine = engine;
    this.problem = null;
    const startedAt = this.now();
    engine.on('error', (e) => {
      if (this.engine !== engine) return;
      this.problem = e.message;
      this.log.error({ err: e }, `VRRP engine failed: ${e.message}`);
      this.scheduleRespawn(this.now() - startedAt >= STABLE_MS);
    });
    await this.followRole();
    return null;
  }

  /**
   * A reload's VRRP part: the running engine applies only the difference (instances that did not change keep
   * their state, timers and VIPs; see VrrpEngine.reconfigure). It starts when there was none and stops when no
   * instance is left. Throws when `config` could not be applied — except when VRRP was already down for a
   * reason a reload cannot fix (no raw sockets): that stays a logged condition.
   */
  async apply(config: Config): Promise<void> {
    const run = this.lifecycle.then(() => this.applyNow(config));
    this.lifecycle = run.catch(() => undefined);
    return run;
  }

  private async applyNow(config: Config): Promise<void> {
    this.config = config;
    if (config.vrrp.instances.length === 0) {
      if (this.engine !== null) this.log.info('no VRRP instance left: stopping the VRRP engine');
      await this.engine?.stop();
      this.engine = null;
      this.problem = null;
      this.states.clear();
      this.announced.clear();
      await this.followRole();
      return;
    }
    if (this.engine === null || this.problem !== null) {
      const wasDown = this.problem !== null;
      this.engine = null;
      const problem = await this.start(config);
      if (problem !== null && !wasDown) throw new Error(`VRRP engine did not start: ${problem}`);
      return;
    }
    try {
      const s = await this.engine.reconfigure(vrrpOptions(config));
      this.log.info({ added: s.added, removed: s.removed, updated: s.updated, restarted: s.restarted }, 'VRRP configuration applied');
      for (const name of s.removed) this.states.delete(name);
    } finally {
      await this.followRole();
    }
  }

  private onTransition(t: TransitionEvent): void {
    const history = this.transitions.get(t.instance) ?? [];
    history.push({ at: new Date(t.at).toISOString(), from: t.from, to: t.to, reason: t.reason });
    if (history.length > HISTORY) history.splice(0, history.length - HISTORY);
    this.transitions.set(t.instance, history);
    this.states.set(t.instance, t.to);
    this.announced.delete(t.instance);
    this.opts.emit({ type: 'vrrp.transition', instance: t.instance, from: t.from, to: t.to, reason: t.reason });
    void this.followRole();
  }

  private onAnnounced(instance: string): void {
    if (this.states.get(instance) !== 'MASTER') return;
    this.announced.add(instance);
    void this.followRole();
  }

  /**
   * The IPVS sync daemon follows the VRRP role: master while any instance is MASTER (once announced), else backup (or runs both
   * whatever the role, with ipvs.syncDaemon.role: both). Decided from
   * the transitions themselves (the engine's snapshot lags one transition behind when they arrive), and applied
   * one change at a time, so two quick transitions cannot race each other into the kernel.
   */
  private followRole(): Promise<void> {
    const run = this.syncQueue.then(async () => {
      const sd = this.config?.ipvs.syncDaemon;
      if (this.sync === null) return;
      const master = [...this.states].some(([name, state]) => state === 'MASTER' && this.announced.has(name));
      const role: SyncRole = sd === undefined ? 'none' : sd.role === 'both' ? 'both' : master ? 'master' : 'backup';
      const cfg = sd === undefined ? undefined : syncDaemonConfig(sd);
      const key = `${role} ${JSON.stringify(cfg ?? null)}`;
      if (key === this.syncApplied || (role === 'none' && this.syncApplied === 'none')) return;
      try {
        await this.sync.setSyncRole(role, cfg);
        this.syncApplied = role === 'none' ? 'none' : key;
        this.log.info({ role }, `IPVS sync daemon: ${role}`);
      } catch (e) {
        this.log.error({ err: e }, 'IPVS sync daemon role change failed');
      }
    });
    this.syncQueue = run;
    return run;
  }

  /**
   * keepalived's parent restarts a VRRP child that died; so does lvsd, without waiting for systemd's watchdog
   * (which may not be there). The backup takes over meanwhile; the new engine clears VIPs the dead one left
   * behind and runs the election again. Repeated deaths back off up to `maxMs`.
   */
  private scheduleRespawn(stable: boolean): void {
    if (this.stopping) return;
    const first = this.opts.respawn?.firstMs ?? 1000;
    if (stable) this.respawnDelayMs = first;
    const delay = this.respawnDelayMs;
    this.respawnDelayMs = Math.min(delay * 2, this.opts.respawn?.maxMs ?? 30_000);
    this.log.warn({ inMs: delay }, `restarting the VRRP engine in ${delay} ms`);
    if (this.respawnTimer !== null) clearTimeout(this.respawnTimer);
    this.respawnTimer = setTimeout(() => {
      this.respawnTimer = null;
      // After any reload in progress, which may have brought the engine back already.
      this.lifecycle = this.lifecycle.then(() => this.respawn()).catch((e: unknown) => {
        this.log.error({ err: e }, 'restarting the VRRP engine failed');
      });
    }, delay);
  }

  private async respawn(): Promise<void> {
    // Nothing to do when a reload brought it back; still down (dead, or a reload's start failed): try.
    if (this.stopping || this.problem === null || this.config === null || this.config.vrrp.instances.length === 0) return;
    this.engine = null;
    this.states.clear();
    this.announced.clear();
    const problem = await this.start(this.config);
    if (problem === null) this.log.info('VRRP engine restarted');
    else this.scheduleRespawn(false);
  }

  async forceFailover(instance: string, how: FailoverHow, by: string): Promise<void> {
    const engine = this.engine;
    if (engine === null) throw new DirectorRejection(409, `VRRP is not running${this.problem === null ? '' : `: ${this.problem}`}`);
    const inst = engine.snapshot().instances.find((i) => i.name === instance);
    if (inst === undefined) throw new DirectorRejection(404, `unknown VRRP instance "${instance}"`);
    if (how === 'lower-priority') {
      engine.forceFault(instance, false);
      engine.setPriorityOffset(instance, 1 - inst.basePriority);
      this.forced.set(instance, how);
    } else if (how === 'maintenance') {
      engine.forceFault(instance, true);
      this.forced.set(instance, how);
    } else {
      engine.forceFault(instance, false);
      engine.setPriorityOffset(instance, 0);
      this.forced.delete(instance);
    }
    this.log.warn({ instance, how, by }, `operator failover: ${how}`);
    this.opts.emit({ type: 'failover', instance, how, by });
    await Promise.resolve();
  }

  /** Each instance's state as its transitions told it (ha-suspend.ts decides from these). */
  roles(): ReadonlyMap<string, VrrpState> {
    return this.states;
  }

  /** What the snapshot shows of VRRP. */
  view(): { vrrp: VrrpSnapshot | null; problem: string | null; transitions: ReadonlyMap<string, VrrpTransition[]>; forced: ReadonlyMap<string, 'lower-priority' | 'maintenance'> } {
    return { vrrp: this.engine?.snapshot() ?? null, problem: this.problem, transitions: this.transitions, forced: this.forced };
  }

  /**
   * For the systemd watchdog: null while the engine answers, else what does not — its process died, or did not
   * answer a snapshot request within `timeoutMs` (a hung engine holds VIPs it no longer defends).
   */
  async liveness(timeoutMs: number): Promise<string | null> {
    const engine = this.engine;
    if (engine === null) return null;
    if (this.problem !== null) return `VRRP engine failed: ${this.problem}`;
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      engine.refresh().then(() => true),
      new Promise<false>((r) => { timer = setTimeout(() => { r(false); }, timeoutMs); }),
    ]);
    clearTimeout(timer);
    return answered ? null : `the VRRP engine process did not answer within ${timeoutMs} ms`;
  }

  /** Graceful stop: priority-0 adverts and VIPs released; a restart in progress finishes first. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.respawnTimer !== null) clearTimeout(this.respawnTimer);
    await this.lifecycle;
    await this.engine?.stop();
    this.engine = null;
    await this.syncQueue;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }
}

/** The config's sync daemon as the dataplane takes it (the sysctls in the kernel's units). */
export function syncDaemonConfig(sd: SyncDaemon): SyncDaemonConfig {
  return {
    interface: sd.interface,
    syncId: sd.syncId,
    mcastGroup: sd.mcastGroup,
    mcastPort: sd.port,
    mcastTtl: sd.ttl,
    syncMaxLen: sd.maxLen,
    tuning: {
      threshold: sd.threshold,
      thresholdPeriod: sd.thresholdPeriod,
      refreshPeriodS: Math.round(sd.refreshPeriodMs / 1000),
      persistMode: sd.persistMode === 'templates' ? 1 : 0,
      ports: sd.ports,
    },
  };
}
