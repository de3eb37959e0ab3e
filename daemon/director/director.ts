// The Director: the core that ties lvsd together.
//   desired state = config ⊕ health ⊕ operator overrides  →  dataplane (on master and backup alike)
//   VRRP role  →  VIPs (the engine moves them) + the IPVS sync daemon's role
//   everything  →  events (subscribe) and one snapshot (snapshot())
// It implements the API's DirectorPort, so the panel, the CLI and /metrics all see one source.
import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { loadConfigText } from '../config/load.js';
import { formatError } from '../config/errors.js';
import { diffConfig, describeDiff, type ConfigDiff as ConfigModelDiff } from '../config/diff.js';
import type { Config } from '../config/types.js';
import type { Dataplane, DataplaneKind, ObservedTable } from '../dataplane/types.js';
import type { SyncDaemonConfig } from '../dataplane/ipvs.js';
import { HealthMonitor } from '../health/monitor.js';
import type { StateStore } from '../state/store.js';
import { startVrrp as realStartVrrp, type TransitionEvent as VrrpTransitionEvent, type VrrpEngine, type VrrpSnapshot } from '../vrrp/index.js';
import type {
  ApplyResult,
  ConfigCheck,
  ConfigDiff,
  DirectorPort,
  ReloadFailure,
  RunningConfig,
} from '../api/director-port.js';
import { DirectorRejection } from '../api/director-port.js';
import { ApplyLoop } from './apply-loop.js';
import { configChanges } from './config-changes.js';
import { desiredTable, type HealthView } from './desired.js';
import { healthPlan, servicePlan, vrrpOptions } from './plan.js';
import { describeOutcome, partsToReload, runReload, type ReloadOutcome, type ReloadPart } from './reload-transaction.js';
import { buildSnapshot } from './snapshot-builder.js';
import {
  overrideKey,
  type DirectorEvent,
  type DirectorSnapshot,
  type FailoverHow,
  type Override,
  type OverrideTarget,
  type VrrpTransition,
} from './snapshot.js';

/** A dataplane that also drives the IPVS connection sync daemon. */
interface SyncCapable {
  setSyncRole(role: 'master' | 'backup' | 'none', cfg?: SyncDaemonConfig): Promise<void>;
}
function hasSync(d: Dataplane | null): d is Dataplane & SyncCapable {
  return d !== null && typeof (d as Partial<SyncCapable>).setSyncRole === 'function';
}

export interface OpenedDataplane {
  dataplane: Dataplane | null;
  kind: DataplaneKind | 'none';
  reason: string;
}

export interface DirectorOptions {
  config: Config;
  configText: string;
  logger: Logger;
  store: StateStore;
  version: string;
  openDataplane(config: Config): Promise<OpenedDataplane>;
  startVrrp?: typeof realStartVrrp;
  /** How often connection counts and rates are read from the dataplane (default 2 s). */
  statsIntervalMs?: number;
  /** Around a config applied through the API (`lvsd reload`, the panel): the service manager hears it as a reload. */
  applyNotices?: { begin(by: string): void; end(): void };
  /** Restart delays after the VRRP engine process dies (default 1 s, doubling up to 30 s). */
  vrrpRespawn?: { firstMs: number; maxMs: number };
}

/** An engine that ran this long before it died was healthy: the next restart waits the first delay again. */
const VRRP_STABLE_MS = 60_000;

const HISTORY = 50;
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const nowIso = (): string => new Date().toISOString();

export class Director implements DirectorPort {
  private config: Config;
  private configText: string;
  private readonly previousTexts: string[] = [];
  private loadedAt = nowIso();
  private reloads = 0;
  private lastReload: DirectorSnapshot['config']['lastReload'] = null;
  private readonly startedAt = nowIso();
  private readonly bus = new EventEmitter();
  private readonly health: HealthMonitor;
  private readonly healthViews = new Map<string, HealthView>();
  private readonly quorumLost = new Set<string>();
  /** Operator overrides by service id or `${serviceId}/${realServerId}`: loaded from the store at start. */
  private readonly overrides: Map<string, Override>;
  private vrrp: VrrpEngine | null = null;
  private vrrpError: string | null = null;
  private vrrpRespawnTimer: NodeJS.Timeout | null = null;
  private vrrpRespawnDelayMs: number;
  private readonly transitions = new Map<string, VrrpTransition[]>();
  private readonly forced = new Map<string, 'lower-priority' | 'maintenance'>();
  private dataplane: OpenedDataplane = { dataplane: null, kind: 'none', reason: 'not started' };
  private loop: ApplyLoop | null = null;
  private observed: ObservedTable = { services: [] };
  private statsTimer: NodeJS.Timeout | null = null;
  private syncRole: 'master' | 'backup' | 'none' = 'none';
  private reloading: Promise<unknown> = Promise.resolve();
  private stopping = false;
  /** What the latest dataplane apply refused: a reload fails only on refusals it caused. */
  private dataplaneFailures: readonly string[] = [];

  private constructor(private readonly opts: DirectorOptions) {
    this.config = opts.config;
    this.configText = opts.configText;
    this.vrrpRespawnDelayMs = opts.vrrpRespawn?.firstMs ?? 1000;
    this.overrides = opts.store.overrideMap();
    this.bus.setMaxListeners(0);
    this.health = new HealthMonitor({ logger: opts.logger.child({ component: 'health' }) });
  }

  static async start(opts: DirectorOptions): Promise<Director> {
    const d = new Director(opts);
    await d.init();
    return d;
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  private async init(): Promise<void> {
    this.wireHealth();
    this.reconcileHealth(this.config);

    this.dataplane = await this.opts.openDataplane(this.config);
    this.log.info({ dataplane: this.dataplane.kind, reason: this.dataplane.reason }, `dataplane: ${this.dataplane.kind} (${this.dataplane.reason})`);
    const dp = this.dataplane.dataplane;
    if (dp !== null) {
      this.loop = new ApplyLoop(dp, {
        desired: () => this.desired(),
        applied: (report) => {
          this.dataplaneFailures = report.failures ?? [];
          if (report.operations > 0 || report.drift.length > 0) {
            if (report.drift.length > 0) this.log.warn({ drift: report.drift }, 'dataplane drift repaired: entries changed behind lvsd’s back were put back');
            this.emit({ type: 'dataplane.apply', operations: report.operations, drift: report.drift, durationMs: report.durationMs });
          }
          for (const c of report.conflicts ?? []) this.log.warn({ virtualServer: c }, `not taking over ${c}: the dataplane holds it and lvsd does not own it`);
          for (const f of report.failures ?? []) this.log.error({ failure: f }, `dataplane refused: ${f}`);
        },
        failed: (e) => {
          this.log.error({ err: e }, `dataplane apply failed: ${e.message}`);
          this.emit({ type: 'dataplane.error', message: e.message });
        },
      });
      await this.loop.request();
      for (const vs of this.config.virtualServers) {
        this.log.info({ virtualServer: vs.name, id: vs.id, scheduler: vs.scheduler, realServers: vs.realServers.map((r) => r.id) }, `virtual server ${vs.name} programmed in ${this.dataplane.kind}`);
      }
      this.statsTimer = setInterval(() => void this.pollStats(), this.opts.statsIntervalMs ?? 2000);
      this.statsTimer.unref();
    }

    await this.startVrrpEngine(this.config);
  }

  // ---- health ----------------------------------------------------------------------------------

  private wireHealth(): void {
    this.health.on('transition', (e) => {
      const prev = this.healthViews.get(e.id);
      // Coming up, the server carries the weight its checks reported meanwhile (agent, misc_dynamic).
      this.healthViews.set(e.id, e.to === 'up' ? { ...prev, up: true, dynamicWeight: e.weight } : { ...prev, up: false });
      const [service, realServer] = splitTarget(e.id);
      this.log.info({ virtualServer: this.serviceName(service), realServer, from: e.from, to: e.to, reason: e.reason, detail: e.detail }, `real server ${e.to}: ${e.detail}`);
      this.emit({ type: 'health.change', service, realServer, status: e.to, reason: `${e.reason}: ${e.detail}` });
      this.healthChanged();
    });
    this.health.on('weight', (e) => {
      const prev = this.healthViews.get(e.id) ?? { up: true };
      this.healthViews.set(e.id, { ...prev, dynamicWeight: e.weight });
      const [service, realServer] = splitTarget(e.id);
      this.log.info({ virtualServer: this.serviceName(service), realServer, weight: e.weight, previous: e.previous, detail: e.detail }, `real server weight ${e.previous} → ${e.weight}: ${e.detail}`);
      this.emit({ type: 'health.weight', service, realServer, weight: e.weight, previous: e.previous, reason: e.detail });
      this.healthChanged();
    });
    this.health.on('quorum', (e) => {
      if (e.up) this.quorumLost.delete(e.service);
      else this.quorumLost.add(e.service);
      this.log.warn({ virtualServer: this.serviceName(e.service), aliveWeight: e.aliveWeight, quorum: e.quorum }, e.up ? 'quorum regained' : 'quorum lost');
      this.emit({ type: 'quorum.change', service: e.service, up: e.up });
      this.healthChanged();
    });
    this.health.on('removed', (e) => {
      this.healthViews.delete(e.id);
    });
  }

  /**
   * Health changed the desired table. Not while stopping: omega's "servers go down at shutdown" runs
   * the down hooks, but the table stays in place on SIGTERM like every other entry.
   */
  private healthChanged(): void {
    if (!this.stopping) void this.loop?.request();
  }

  /**
   * Hands the health monitor the checks of `config`; a bad check keeps its old definition. Returns what
   * it refused ("id: why"), so a reload can fail on it.
   */
  private reconcileHealth(config: Config): string[] {
    const plan = healthPlan(config);
    const r = this.health.reconcile(plan.services, plan.targets);
    for (const e of r.errors) this.log.error({ realServer: e.id }, `health check not changed: ${e.message}`);
    // A new target that starts down (alpha) has had no transition: take its state from the monitor,
    // or the director would count it up until it first fails.
    for (const t of plan.targets) {
      if (!this.healthViews.has(t.id) && this.health.state(t.id) === 'down') this.healthViews.set(t.id, { up: false });
    }
    return r.errors.map((e) => `${e.id}: ${e.message}`);
  }

  private serviceName(id: string): string {
    return this.config.virtualServers.find((v) => v.id === id)?.name ?? id;
  }

  private desired() {
    return desiredTable({
      services: this.config.virtualServers.map(servicePlan),
      health: this.healthViews,
      overrides: this.overrides,
      quorumLost: this.quorumLost,
    });
  }

  private async pollStats(): Promise<void> {
    const dp = this.dataplane.dataplane;
    if (dp === null) return;
    try {
      this.observed = await dp.observe();
    } catch (e) {
      this.log.warn({ err: e }, 'reading dataplane counters failed');
    }
  }

  // ---- VRRP ------------------------------------------------------------------------------------

  /** Starts the engine for `config`; returns why it could not (lvsd then serves the rest without VRRP). */
  private async startVrrpEngine(config: Config): Promise<string | null> {
    if (config.vrrp.instances.length === 0) return null;
    const start = this.opts.startVrrp ?? realStartVrrp;
    const onTransition = (t: VrrpTransitionEvent): void => {
      const history = this.transitions.get(t.instance) ?? [];
      history.push({ at: new Date(t.at).toISOString(), from: t.from, to: t.to, reason: t.reason });
      if (history.length > HISTORY) history.splice(0, history.length - HISTORY);
      this.transitions.set(t.instance, history);
      this.emit({ type: 'vrrp.transition', instance: t.instance, from: t.from, to: t.to, reason: t.reason });
      void this.updateSyncRole();
    };
    try {
      // Transitions made while starting (INIT → BACKUP) arrive through the third argument.
      this.vrrp = await start(vrrpOptions(config), this.log.child({ component: 'vrrp' }), { transition: onTransition });
      this.vrrpError = null;
    } catch (e) {
      // No raw sockets (no CAP_NET_RAW), a missing interface…: say so plainly and keep serving the rest.
      this.vrrpError = e instanceof Error ? e.message : String(e);
      this.log.error({ err: e }, `VRRP not running: ${this.vrrpError}`);
      return this.vrrpError;
    }
    const engine = this.vrrp;
    const startedAt = Date.now();
    engine.on('error', (e) => {
      if (this.vrrp !== engine) return;
      this.vrrpError = e.message;
      this.log.error({ err: e }, `VRRP engine failed: ${e.message}`);
      this.scheduleVrrpRespawn(Date.now() - startedAt >= VRRP_STABLE_MS);
    });
    await this.updateSyncRole();
    return null;
  }

  /** The engine object is still held but its process died (its 'error' set vrrpError). */
  private vrrpEngineDead(): boolean {
    return this.vrrp !== null && this.vrrpError !== null;
  }

  /**
   * keepalived's parent restarts a VRRP child that died; so does lvsd, without waiting for systemd's
   * watchdog (which may not be there). The backup takes over meanwhile; the new engine clears VIPs the
   * dead one left behind and runs the election again. Repeated deaths back off up to `maxMs`.
   */
  private scheduleVrrpRespawn(stable: boolean): void {
    if (this.stopping) return;
    const first = this.opts.vrrpRespawn?.firstMs ?? 1000;
    if (stable) this.vrrpRespawnDelayMs = first;
    const delay = this.vrrpRespawnDelayMs;
    this.vrrpRespawnDelayMs = Math.min(delay * 2, this.opts.vrrpRespawn?.maxMs ?? 30_000);
    this.log.warn({ inMs: delay }, `restarting the VRRP engine in ${delay} ms`);
    if (this.vrrpRespawnTimer !== null) clearTimeout(this.vrrpRespawnTimer);
    this.vrrpRespawnTimer = setTimeout(() => {
      this.vrrpRespawnTimer = null;
      // After any reload in progress, which may have brought the engine back already.
      this.reloading = this.reloading.then(() => this.respawnVrrp()).catch((e: unknown) => {
        this.log.error({ err: e }, 'restarting the VRRP engine failed');
      });
    }, delay);
  }

  private async respawnVrrp(): Promise<void> {
    // Nothing to do when a reload brought it back; still down (dead, or a reload's start failed): try.
    if (this.stopping || this.vrrpError === null || this.config.vrrp.instances.length === 0) return;
    this.vrrp = null;
    const problem = await this.startVrrpEngine(this.config);
    if (problem === null) this.log.info('VRRP engine restarted');
    else this.scheduleVrrpRespawn(false);
  }

  /**
   * A reload's VRRP part: the running engine applies only the difference (instances that did not change
   * keep their state, timers and VIPs; see VrrpEngine.reconfigure). It starts when there was none and
   * stops when no instance is left. Throws when `config` could not be applied — except when VRRP was
   * already down for a reason a reload cannot fix (no raw sockets): that stays a logged condition.
   */
  private async applyVrrp(config: Config): Promise<void> {
    if (config.vrrp.instances.length === 0) {
      if (this.vrrp !== null) this.log.info('no VRRP instance left: stopping the VRRP engine');
      await this.vrrp?.stop();
      this.vrrp = null;
      this.vrrpError = null;
      await this.updateSyncRole();
      return;
    }
    if (this.vrrp === null || this.vrrpEngineDead()) {
      const wasDown = this.vrrpError !== null;
      this.vrrp = null;
      const problem = await this.startVrrpEngine(config);
      if (problem !== null && !wasDown) throw new Error(`VRRP engine did not start: ${problem}`);
      return;
    }
    try {
      const s = await this.vrrp.reconfigure(vrrpOptions(config));
      this.log.info({ added: s.added, removed: s.removed, updated: s.updated, restarted: s.restarted }, 'VRRP configuration applied');
      this.vrrpError = null;
    } finally {
      await this.updateSyncRole();
    }
  }

  /** The IPVS sync daemon follows the VRRP role: master while any instance is MASTER, else backup. */
  private async updateSyncRole(): Promise<void> {
    const dp = this.dataplane.dataplane;
    const sd = this.config.ipvs.syncDaemon;
    if (!hasSync(dp) || sd === undefined) return;
    const master = (this.vrrp?.snapshot().instances ?? []).some((i) => i.state === 'MASTER');
    const role = master ? 'master' : 'backup';
    if (role === this.syncRole) return;
    try {
      await dp.setSyncRole(role, { interface: sd.interface, syncId: sd.syncId, mcastGroup: sd.mcastGroup, mcastPort: sd.port, mcastTtl: sd.ttl, syncMaxLen: sd.maxLen });
      this.syncRole = role;
      this.log.info({ role }, `IPVS sync daemon: ${role}`);
    } catch (e) {
      this.log.error({ err: e }, 'IPVS sync daemon role change failed');
    }
  }

  // ---- events and snapshot ---------------------------------------------------------------------

  private emit(e: DistributiveOmit<DirectorEvent, 'at'>): void {
    this.bus.emit('event', { ...e, at: nowIso() });
  }

  subscribe(fn: (e: DirectorEvent) => void): () => void {
    this.bus.on('event', fn);
    return () => this.bus.off('event', fn);
  }

  snapshot(): DirectorSnapshot {
    const vrrp: VrrpSnapshot | null = this.vrrp?.snapshot() ?? null;
    const reason = this.dataplane.reason;
    return buildSnapshot({
      node: this.config.node.name,
      version: this.opts.version,
      startedAt: this.startedAt,
      now: new Date(),
      dataplane: { kind: this.dataplane.kind, reason },
      config: this.config,
      configInfo: {
        path: this.config.source,
        hash: sha256(this.configText),
        loadedAt: this.loadedAt,
        reloads: this.reloads,
        lastReload: this.lastReload,
      },
      vrrp,
      vrrpProblem: this.vrrpError,
      transitions: this.transitions,
      forced: this.forced,
      health: this.health.snapshot(),
      observed: this.observed,
      overrides: this.overrides,
      quorumLost: this.quorumLost,
    });
  }

  /**
   * For the systemd watchdog: null while every part answers, else what does not — the VRRP engine process has
   * died, or did not answer a snapshot request within `timeoutMs` (a hung worker holds VIPs it no
   * longer defends; a restart is the cure).
   */
  async liveness(timeoutMs: number): Promise<string | null> {
    const vrrp = this.vrrp;
    if (vrrp === null) return null;
    if (this.vrrpError !== null) return `VRRP engine failed: ${this.vrrpError}`;
    const answered = await Promise.race([
      vrrp.refresh().then(() => true),
      new Promise<false>((r) => setTimeout(() => { r(false); }, timeoutMs)),
    ]);
    return answered ? null : `the VRRP engine process did not answer within ${timeoutMs} ms`;
  }

  /** Why VRRP is not running, when it is not. */
  get vrrpProblem(): string | null {
    return this.vrrpError;
  }

  // ---- operator actions ------------------------------------------------------------------------

  private checkTarget(t: OverrideTarget): void {
    const vs = this.config.virtualServers.find((v) => v.id === t.service || v.name === t.service);
    if (vs === undefined) throw new DirectorRejection(404, `unknown virtual service "${t.service}"`);
    if (t.realServer !== undefined && !vs.realServers.some((r) => r.id === t.realServer)) {
      throw new DirectorRejection(404, `virtual service ${vs.id} has no real server "${t.realServer}"`);
    }
  }

  async setOverride(target: OverrideTarget, override: Override, by: string): Promise<void> {
    this.checkTarget(target);
    if (override.weight !== undefined && (!Number.isInteger(override.weight) || override.weight < 0 || override.weight > 65535)) {
      throw new DirectorRejection(400, `weight must be an integer 0..65535, got ${override.weight}`);
    }
    // Applied from memory at once; the API then persists it in the store (and undoes this if it cannot).
    this.overrides.set(overrideKey(target), override);
    this.emit({ type: 'override', target, override, by });
    await this.loop?.request();
  }

  async clearOverride(target: OverrideTarget, by: string): Promise<void> {
    this.checkTarget(target);
    this.overrides.delete(overrideKey(target));
    this.emit({ type: 'override', target, override: null, by });
    await this.loop?.request();
  }

  async forceFailover(instance: string, how: FailoverHow, by: string): Promise<void> {
    const vrrp = this.vrrp;
    if (vrrp === null) throw new DirectorRejection(409, `VRRP is not running${this.vrrpError === null ? '' : `: ${this.vrrpError}`}`);
    const inst = vrrp.snapshot().instances.find((i) => i.name === instance);
    if (inst === undefined) throw new DirectorRejection(404, `unknown VRRP instance "${instance}"`);
    if (how === 'lower-priority') {
      vrrp.forceFault(instance, false);
      vrrp.setPriorityOffset(instance, 1 - inst.basePriority);
      this.forced.set(instance, how);
    } else if (how === 'maintenance') {
      vrrp.forceFault(instance, true);
      this.forced.set(instance, how);
    } else {
      vrrp.forceFault(instance, false);
      vrrp.setPriorityOffset(instance, 0);
      this.forced.delete(instance);
    }
    this.log.warn({ instance, how, by }, `operator failover: ${how}`);
    this.emit({ type: 'failover', instance, how, by });
    await Promise.resolve();
  }

  // ---- configuration ---------------------------------------------------------------------------

  private check(text: string): { config: Config | null; check: ConfigCheck } {
    const r = loadConfigText(text, this.config.source);
    if (r.ok) return { config: r.config, check: { ok: true, errors: [] } };
    return {
      config: null,
      check: { ok: false, errors: r.errors.map((e) => ({ message: formatError(e), line: e.line, column: e.col, path: e.path })) },
    };
  }

  validateConfig(text: string): Promise<ConfigCheck> {
    return Promise.resolve(this.check(text).check);
  }

  diffConfig(text: string): Promise<ConfigDiff> {
    const { config, check } = this.check(text);
    const changes = config === null ? [] : configChanges(diffConfig(this.config, config));
    return Promise.resolve({ ...check, changes });
  }

  async applyConfig(text: string, by: string): Promise<ApplyResult> {
    const { config, check } = this.check(text);
    if (config === null) return { ok: false, errors: check.errors, hash: sha256(this.configText), changes: [] };
    this.opts.applyNotices?.begin(by);
    try {
      return await this.applyChecked(config, text, by);
    } finally {
      this.opts.applyNotices?.end();
    }
  }

  private async applyChecked(config: Config, text: string, by: string): Promise<ApplyResult> {
    // The file on disk is the source of truth for restarts: write it (atomically) before reloading —
    // unless it already says this (`lvsd reload` sends the file's own text), so its mode stays the operator's.
    const onDisk = await readFile(this.config.source, 'utf8').catch(() => null);
    if (onDisk !== text) await writeAtomically(this.config.source, text);
    const previous = this.configText;
    const { diff, outcome } = await this.reloadWith(config, text, by);
    if (!outcome.ok) {
      // Rolled back: the file says what runs again, so a restart does not bring the failing config up.
      if (onDisk !== text) await writeAtomically(this.config.source, onDisk ?? previous);
      return { ok: false, errors: [{ message: describeOutcome(outcome, []) }], hash: sha256(this.configText), changes: configChanges(diff), failure: failureOf(outcome) };
    }
    this.previousTexts.push(previous);
    return { ok: true, errors: [], hash: sha256(text), changes: configChanges(diff) };
  }

  async rollbackConfig(by: string): Promise<ApplyResult> {
    const previous = this.previousTexts.pop();
    if (previous === undefined) throw new DirectorRejection(409, 'no earlier config to roll back to');
    const r = await this.applyConfig(previous, by);
    // applyConfig pushed the config we rolled back from; a rollback is not itself something to undo.
    if (r.ok) this.previousTexts.pop();
    else this.previousTexts.push(previous);
    return r;
  }

  runningConfig(): Promise<RunningConfig> {
    return Promise.resolve({ path: this.config.source, hash: sha256(this.configText), text: this.configText, canRollback: this.previousTexts.length > 0 });
  }

  /**
   * SIGHUP (the CLI validated and diffed already): applies the difference, or rolls back to the running
   * config and says why. Never throws for a part that failed; the outcome tells.
   */
  async reload(next: Config, text: string, by: string): Promise<ReloadOutcome> {
    const previous = this.configText;
    const { outcome } = await this.reloadWith(next, text, by);
    if (outcome.ok && previous !== text) this.previousTexts.push(previous);
    return outcome;
  }

  /** A reload refused before it reached the director (an invalid file on SIGHUP): recorded, nothing changes. */
  reloadRefused(message: string, by: string): void {
    this.lastReload = { at: nowIso(), ok: false, message, by };
    this.emit({ type: 'config.reload', ok: false, hash: sha256(this.configText), by, message });
  }

  /**
   * Applies only what changed (unchanged instances, services and checkers keep their state), part by
   * part; when a part fails, every part already changed goes back to the running config (see
   * reload-transaction.ts) and the failure is logged, published and kept in lastReload.
   */
  private reloadWith(next: Config, text: string, by: string): Promise<{ diff: ConfigModelDiff; outcome: ReloadOutcome }> {
    const run = this.reloading.then(async () => {
      const diff = diffConfig(this.config, next);
      const lines = describeDiff(diff);
      if (diff.settings.includes('dataplane')) {
        this.log.warn('the dataplane choice changed: it takes effect at the next restart');
      }
      const from = { config: this.config, text: this.configText };
      const known = new Set(this.dataplaneFailures);
      const outcome = await runReload(partsToReload(diff), from, { config: next, text }, {
        adopt: (c) => {
          this.config = c.config;
          this.configText = c.text;
        },
        apply: (part, c) => this.applyPart(part, c.config, known),
      });
      const message = describeOutcome(outcome, lines);
      this.lastReload = { at: nowIso(), ok: outcome.ok, message, by };
      if (outcome.ok) {
        this.loadedAt = nowIso();
        this.reloads++;
        this.log.info({ changes: lines, by }, `reloaded: ${message}`);
      } else {
        this.log.error({ changes: lines, by, failedPart: outcome.failed.part, rolledBack: outcome.rolledBack, rollbackFailures: outcome.rollbackFailures }, message);
      }
      this.emit({ type: 'config.reload', ok: outcome.ok, hash: sha256(this.configText), by, message });
      return { diff, outcome };
    });
    this.reloading = run.catch(() => undefined);
    return run;
  }

  /** One part of a reload (or of its rollback); `known` are dataplane refusals that predate the reload. */
  private async applyPart(part: ReloadPart, config: Config, known: ReadonlySet<string>): Promise<void> {
    switch (part) {
      case 'health': {
        const refused = this.reconcileHealth(config);
        if (refused.length > 0) throw new Error(`health checks refused: ${refused.join('; ')}`);
        return;
      }
      case 'vrrp':
        return this.applyVrrp(config);
      case 'dataplane': {
        if (this.loop === null) return;
        const r = await this.loop.settle();
        if (!r.ok) throw r.error;
        const refused = (r.report.failures ?? []).filter((f) => !known.has(f));
        if (refused.length > 0) throw new Error(`${this.dataplane.kind} refused: ${refused.join('; ')}`);
        return;
      }
    }
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Graceful stop: priority-0 adverts and VIPs released; the dataplane keeps its entries. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.vrrpRespawnTimer !== null) clearTimeout(this.vrrpRespawnTimer);
    // A reload or an engine restart in progress finishes first, so no engine starts after this stop.
    await this.reloading;
    if (this.statsTimer !== null) clearInterval(this.statsTimer);
    this.health.close();
    await this.vrrp?.stop();
    this.vrrp = null;
    await this.loop?.idle();
    await this.dataplane.dataplane?.close();
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode: 0o640 });
  await rename(tmp, path);
}

function failureOf(outcome: Extract<ReloadOutcome, { ok: false }>): ReloadFailure {
  return {
    part: outcome.failed.part,
    error: outcome.failed.error,
    rolledBack: outcome.rolledBack,
    rollbackFailures: outcome.rollbackFailures.map((f) => `${f.part}: ${f.error}`),
  };
}

function splitTarget(id: string): [string, string] {
  const i = id.indexOf('/');
  return i < 0 ? [id, ''] : [id.slice(0, i), id.slice(i + 1)];
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export { overrideKey };
