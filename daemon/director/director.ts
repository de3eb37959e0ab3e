// The Director: the core that ties lvsd together, in the main lvsd process.
//   desired state = config ⊕ health ⊕ operator overrides  →  dataplane (on master and backup alike)
//   VRRP role  →  VIPs (the engine moves them) + the IPVS sync daemon's role   (vrrp-supervisor.ts)
//   everything  →  events (subscribe) and one snapshot (snapshot())
// It wires its peers (the health monitor, the VRRP supervisor, the dataplane's apply loop, the config file),
// decides the desired table (desired.ts), answers the DirectorPort the API, the panel, /metrics and
// `lvsd status` read, and runs every reload — SIGHUP, `lvsd reload` and the API alike — through one queue.
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { diffConfig, describeDiff } from '../config/diff.js';
import { emptiesDirector } from '../config/empty-reload.js';
import type { Config } from '../config/types.js';
import { HealthMonitor } from '../health/monitor.js';
import type { StateStore } from '../state/store.js';
import { targetKey, type OverrideTarget } from '../state/target-key.js';
import type { Override } from '../state/schema.js';
import { BgpSupervisor } from './bgp-supervisor.js';
import { configChanges } from './config-changes.js';
import { ConfigFile, type LoadedConfig } from './config-file.js';
import { DesiredMemo } from './desired-memo.js';
import { followHaSuspend } from './ha-suspend.js';
import { publishHealth } from './health-events.js';
import { DataplaneSupervisor } from './dataplane-supervisor.js';
import type { OpenedDataplane } from './open-dataplane.js';
import { MailSupervisor } from './mail-supervisor.js';
import { healthPlan } from './plan.js';
import { DirectorRejection, type ApplyOptions, type ApplyResult, type ConfigCheck, type ConfigDiff, type ConfigProblem, type DirectorPort, type RunningConfig } from './port.js';
import { partsToReload, restartSettings, type ReloadPart } from './reload-parts.js';
import { describeOutcome, describeRefusal, failureOf, runReload } from './reload-transaction.js';
import { buildSnapshot } from './snapshot-builder.js';
import type { BgpForceHow, DirectorEvent, DirectorEventInput, DirectorSnapshot, FailoverHow } from './snapshot.js';
import { VrrpSupervisor, type VrrpSupervisorOptions } from './vrrp-supervisor.js';

export interface DirectorOptions {
  /** The config that runs first, with the text it was read from. */
  loaded: LoadedConfig;
  logger: Logger;
  store: StateStore;
  version: string;
  openDataplane(config: Config): Promise<OpenedDataplane>;
  startVrrp?: VrrpSupervisorOptions['startVrrp'];
  /** Restart delays after the VRRP engine process dies (default 1 s, doubling up to 30 s). */
  vrrpRespawn?: VrrpSupervisorOptions['respawn'];
  /** How often connection counts and rates are read from the dataplane (default 2 s). */
  statsIntervalMs?: number;
  /** Around every reload (SIGHUP, `lvsd reload`, the panel): the service manager hears RELOADING … READY. */
  reloadNotices?: { begin(why: string): void; end(): void };
}

const nowIso = (): string => new Date().toISOString();

export class Director implements DirectorPort {
  private readonly file: ConfigFile;
  private loadedAt = nowIso();
  private reloads = 0;
  private lastReload: DirectorSnapshot['config']['lastReload'] = null;
  private readonly startedAt = nowIso();
  private readonly bus = new EventEmitter();
  private readonly health: HealthMonitor;
  private readonly vrrp: VrrpSupervisor;
  private readonly bgp: BgpSupervisor;
  private readonly mail: MailSupervisor;
  /** Operator overrides by target key (state/target-key.ts): loaded from the store at start. */
  private readonly overrides: Map<string, Override>;
  /** The desired table's specs from pass to pass: touched here on every event that changes a service. */
  private readonly desiredMemo = new DesiredMemo();
  /** Set by init(), which Director.start awaits before anyone holds the director. */
  private dataplane!: DataplaneSupervisor;
  /** init() has made the dataplane supervisor (health events can come before). */
  private dataplaneOpen = false;
  /** The one queue every reload and config change waits in. */
  private queue: Promise<unknown> = Promise.resolve();
  private stopping = false;
  private readonly log: Logger;

  private constructor(private readonly opts: DirectorOptions) {
    this.log = opts.logger;
    this.file = new ConfigFile(opts.loaded);
    this.overrides = opts.store.overrideMap();
    this.bus.setMaxListeners(0);
    this.health = new HealthMonitor({ logger: opts.logger.child({ component: 'health' }) });
    const vrrpHooks = { ...(opts.startVrrp === undefined ? {} : { startVrrp: opts.startVrrp }), ...(opts.vrrpRespawn === undefined ? {} : { respawn: opts.vrrpRespawn }) };
    this.vrrp = new VrrpSupervisor({ logger: opts.logger, emit: (e) => { this.emit(e); }, ...vrrpHooks });
    this.mail = new MailSupervisor({ logger: opts.logger.child({ component: 'alerts' }), config: () => this.config, subscribe: (fn) => this.subscribe(fn), emit: (e) => { this.emit(e); } });
    this.bgp = new BgpSupervisor({ logger: opts.logger.child({ component: 'bgp' }), emit: (e) => { this.emit(e); }, quorumLost: { has: (id) => this.health.quorumLost(id) }, kept: opts.store });
  }

  static async start(opts: DirectorOptions): Promise<Director> {
    const d = new Director(opts);
    await d.init();
    return d;
  }

  /** The running config (the daemon reads its shutdown script from it after the stop). */
  get config(): Config {
    return this.file.running.config;
  }

  private async init(): Promise<void> {
    publishHealth(this.health, (e) => { this.emit(e); }, (service) => { this.healthChanged(service); });
    this.reconcileHealth(this.config);
    followHaSuspend({ config: () => this.config, roles: () => this.vrrp.roles(), health: this.health, subscribe: (fn) => this.subscribe(fn) });
    const opened = await this.opts.openDataplane(this.config);
    this.log.info({ dataplane: opened.kind, reason: opened.reason }, `dataplane: ${opened.kind} (${opened.reason})`);
    this.dataplane = new DataplaneSupervisor(opened, {
      logger: this.log,
      emit: (e) => { this.emit(e); },
      desired: () => this.desired(),
      changed: () => this.desiredMemo.changed,
      ...(this.opts.statsIntervalMs === undefined ? {} : { statsIntervalMs: this.opts.statsIntervalMs }),
    });
    this.dataplaneOpen = true;
    this.vrrp.attachSyncDaemon(opened.sync);
    await this.dataplane.start(this.config);
    await this.vrrp.start(this.config);
    await this.bgp.start(this.config);
  }

  // ---- health -------------------------------------------------------------------------------------------

  /** Not while stopping: omega's "servers go down at shutdown" runs the down hooks, but the table stays on SIGTERM. */
  private healthChanged(service: string): void {
    this.desiredMemo.touch(service);
    // A check can finish while init() still opens the dataplane (seconds in a slow guest): its first apply,
    // made once it is open, reads the health as it is by then, so there is nothing to ask for yet.
    if (!this.stopping && this.dataplaneOpen) void this.dataplane.request().then(() => { this.bgp.refresh(); });
  }

  /** Hands the monitor the checks of `config`; a bad check keeps its old definition. Returns what it refused. */
  private reconcileHealth(config: Config): string[] {
    const plan = healthPlan(config);
    const r = this.health.reconcile(plan.services, plan.targets);
    for (const e of r.errors) this.log.error({ realServer: e.id }, `health check not changed: ${e.message}`);
    return r.errors.map((e) => `${e.id}: ${e.message}`);
  }

  private desired() {
    return this.desiredMemo.table(this.config.virtualServers, {
      health: { get: (key) => this.health.view(key) },
      overrides: this.overrides,
      quorumLost: { has: (id) => this.health.quorumLost(id) },
    });
  }

  // ---- events, snapshot, liveness -------------------------------------------------------------------------

  private emit(e: DirectorEventInput): void {
    this.bus.emit('event', { ...e, at: nowIso() });
  }

  subscribe(fn: (e: DirectorEvent) => void): () => void {
    this.bus.on('event', fn);
    return () => this.bus.off('event', fn);
  }

  snapshot(): DirectorSnapshot {
    const v = this.vrrp.view();
    return buildSnapshot({
      node: this.config.node.name,
      version: this.opts.version,
      startedAt: this.startedAt,
      now: new Date(),
      dataplane: { kind: this.dataplane.opened.kind, reason: this.dataplane.opened.reason },
      config: this.config,
      configInfo: { path: this.file.path, hash: this.file.hash, loadedAt: this.loadedAt, reloads: this.reloads, lastReload: this.lastReload },
      vrrp: v.vrrp,
      vrrpProblem: v.problem,
      transitions: v.transitions,
      forced: v.forced,
      health: this.health.snapshot(),
      observed: this.dataplane.observed,
      overrides: this.overrides,
      quorumLost: { has: (id) => this.health.quorumLost(id) },
      bgp: this.bgp.view(),
    });
  }

  /** For the systemd watchdog: null while every part answers, else what does not. */
  liveness(timeoutMs: number): Promise<string | null> {
    return this.vrrp.liveness(timeoutMs);
  }

  // ---- operator actions -----------------------------------------------------------------------------------

  /** The id of the virtual server `t` names, or a 404. */
  private checkTarget(t: OverrideTarget): string {
    const vs = this.config.virtualServers.find((v) => v.id === t.service || v.name === t.service);
    if (vs === undefined) throw new DirectorRejection(404, `unknown virtual server "${t.service}"`);
    if (t.realServer !== undefined && !vs.realServers.some((r) => r.id === t.realServer)) {
      throw new DirectorRejection(404, `virtual server ${vs.id} has no real server "${t.realServer}"`);
    }
    return vs.id;
  }

  async setOverride(target: OverrideTarget, override: Override, by: string): Promise<void> {
    const service = this.checkTarget(target);
    if (override.weight !== undefined && (!Number.isInteger(override.weight) || override.weight < 0 || override.weight > 65535)) {
      throw new DirectorRejection(400, `weight must be an integer 0..65535, got ${override.weight}`);
    }
    // Applied from memory at once; the API then persists it in the store (and undoes this if it cannot).
    this.overrides.set(targetKey(target), override);
    this.desiredMemo.touch(service);
    this.emit({ type: 'override', target, override, by });
    await this.dataplane.request();
  }

  async clearOverride(target: OverrideTarget, by: string): Promise<void> {
    this.desiredMemo.touch(this.checkTarget(target));
    this.overrides.delete(targetKey(target));
    this.emit({ type: 'override', target, override: null, by });
    await this.dataplane.request();
  }

  forceFailover(instance: string, how: FailoverHow, by: string): Promise<void> { return this.vrrp.forceFailover(instance, how, by); }
  forceBgp(prefix: string, how: BgpForceHow, by: string): Promise<void> { return this.bgp.force(prefix, how, by); }

  // ---- configuration: one path, one queue -----------------------------------------------------------------

  async validateConfig(text: string): Promise<ConfigCheck> {
    const p = await this.file.parse(text);
    return p.ok ? { ok: true, errors: [] } : { ok: false, errors: p.errors };
  }

  async diffConfig(text: string): Promise<ConfigDiff> {
    const p = await this.file.parse(text);
    if (!p.ok) return { ok: false, errors: p.errors, changes: [] };
    const diff = diffConfig(this.config, p.loaded.config);
    return { ok: true, errors: [], changes: configChanges(diff), restartNeeded: restartSettings(diff.settings) };
  }

  /** SIGHUP and `lvsd reload`: the file is read once, and what was read is what runs. */
  reloadFile(by: string, opts: Pick<ApplyOptions, 'allowEmpty'> = {}): Promise<ApplyResult> {
    return this.queued(`reloading ${this.file.path}`, async () => {
      const read = await this.file.read();
      if (!read.ok) return this.refuse(read.errors, by);
      for (const w of read.warnings) this.log.warn({ line: w.line, col: w.column, path: w.path }, w.message);
      return this.commit(read.loaded, by, false, opts.allowEmpty === true);
    });
  }

  /** The API's apply: validated, written to the file (atomically), then reloaded like a SIGHUP. */
  applyConfig(text: string, by: string, opts: ApplyOptions = {}): Promise<ApplyResult> {
    return this.queued(`applying a config from ${by}`, async () => {
      if (opts.expectedHash !== undefined && opts.expectedHash !== this.file.hash) {
        throw new DirectorRejection(409, 'the running config changed since you loaded it; reload the page and apply again');
      }
      const p = await this.file.parse(text);
      return p.ok ? this.commit(p.loaded, by, true, opts.allowEmpty === true) : this.answer(false, p.errors, []);
    });
  }

  rollbackConfig(by: string): Promise<ApplyResult> {
    return this.queued(`rolling back the config for ${by}`, async () => {
      const previous = this.file.takePrevious();
      if (previous === undefined) throw new DirectorRejection(409, 'no earlier config to roll back to');
      const p = await this.file.parse(previous);
      const r = p.ok ? await this.commit(p.loaded, by, true, true) : this.answer(false, p.errors, []);
      // The config rolled back from is not one to go back to; a failed rollback keeps its target.
      if (r.ok) this.file.forgetNewest();
      else this.file.restoreHistory(previous);
      return r;
    });
  }

  runningConfig(): Promise<RunningConfig> {
    const { text } = this.file.running;
    return Promise.resolve({ path: this.file.path, hash: this.file.hash, text, canRollback: this.file.canRollback });
  }

  private queued(why: string, job: () => Promise<ApplyResult>): Promise<ApplyResult> {
    const run = this.queue.then(async () => {
      this.opts.reloadNotices?.begin(why);
      try {
        return await job();
      } finally {
        this.opts.reloadNotices?.end();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private answer(ok: boolean, errors: ConfigProblem[], changes: ApplyResult['changes'], extra: Partial<ApplyResult> = {}): ApplyResult {
    return { ok, errors, hash: this.file.hash, changes, restartNeeded: [], ...extra };
  }

  /** A file that does not validate, or would empty the director: recorded where operators look, nothing changes. */
  private refuse(errors: ConfigProblem[], by: string, message = describeRefusal(errors.map((e) => e.message))): ApplyResult {
    for (const e of errors) this.log.error({ line: e.line, col: e.column, path: e.path }, e.message);
    this.log.error({ by, errors: errors.length }, `reload ${message}; keeping the running config`);
    this.lastReload = { at: nowIso(), ok: false, message, by, restartNeeded: [] };
    this.emit({ type: 'config.reload', ok: false, hash: this.file.hash, by, message });
    return this.answer(false, errors, []);
  }

  /**
   * Applies only what changed (unchanged instances, virtual servers and checkers keep their state), part by
   * part; when a part fails, every part goes back to the running config (reload-transaction.ts), and a config
   * written for it is put back on disk too. Settings no part applies are named as waiting for a restart.
   */
  private async commit(next: LoadedConfig, by: string, write: boolean, allowEmpty: boolean): Promise<ApplyResult> {
    const before = this.file.running;
    const empties = allowEmpty ? null : emptiesDirector(before.config, next.config);
    if (empties !== null) return this.refuse([{ message: empties }], by, `refused: ${empties}`);
    const onDisk = write ? await this.file.onDisk() : next.text;
    if (onDisk !== next.text) await this.file.write(next.text);
    const diff = diffConfig(before.config, next.config);
    const lines = describeDiff(diff);
    const restartNeeded = restartSettings(diff.settings);
    const known = this.dataplane.currentRefusals;
    const outcome = await runReload(partsToReload(diff), before, next, {
      adopt: (c) => { this.file.swap(c); },
      apply: (part, c) => this.applyPart(part, c.config, known),
    });
    if (!outcome.ok && onDisk !== next.text) await this.file.write(onDisk ?? before.text);
    const message = describeOutcome(outcome, lines, outcome.ok ? restartNeeded : []);
    this.lastReload = { at: nowIso(), ok: outcome.ok, message, by, restartNeeded: outcome.ok ? restartNeeded : [] };
    if (outcome.ok) {
      this.file.remember(before.text);
      this.loadedAt = nowIso();
      this.reloads++;
      this.log[restartNeeded.length > 0 ? 'warn' : 'info']({ changes: lines, by, restartNeeded }, `reload done: ${message}`);
    } else {
      this.log.error({ changes: lines, by, failedPart: outcome.failed.part, rolledBack: outcome.rolledBack, rollbackFailures: outcome.rollbackFailures }, message);
    }
    this.emit({ type: 'config.reload', ok: outcome.ok, hash: this.file.hash, by, message });
    const changes = configChanges(diff);
    if (outcome.ok) return this.answer(true, [], changes, { restartNeeded });
    return this.answer(false, [{ message: describeOutcome(outcome, []) }], changes, { failure: failureOf(outcome) });
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
        return this.vrrp.apply(config);
      case 'dataplane':
        return this.dataplane.applyReload(config, known);
      case 'bgp':
        return this.bgp.apply(config);
    }
  }

  // ---- lifecycle ------------------------------------------------------------------------------------------

  /** Graceful stop: priority-0 adverts and VIPs released; the dataplane keeps its entries. */
  async stop(): Promise<void> {
    this.stopping = true;
    // A reload in progress finishes first, so nothing starts after this stop.
    await this.queue;
    await this.bgp.stop(); // withdrawn first (after the drain), while the table still serves
    this.mail.stop();
    await this.dataplane.idle(); // a pass asked for before the stop reads health before the monitor forgets it
    this.health.close();
    await this.vrrp.stop();
    await this.dataplane.close();
  }
}
