// HealthMonitor: the imperative shell around the pure rise/fall and quorum cores. It owns the targets,
// runs their probes on one timer (a heap keyed by due time), bounds the checks in flight, enforces
// every timeout itself (a hung target costs one slot for `timeout`, never more), and turns results
// into events: 'transition', 'weight', 'quorum', 'removed'.
//
// Scheduling: a new target's first check lands at a random point of its warmup (or first interval),
// which spreads 10,000 targets evenly; afterwards it keeps its phase (slot += interval), re-phasing
// only when it fell behind. A running check sits in the same heap keyed by its deadline, so the
// timeout needs no timer of its own.
import { EventEmitter } from 'node:events';
import { pino, type Logger } from 'pino';
import { AdmissionLimit } from './admission.js';
import { checkLabel, combinedState, settle, type ServerHealth } from './all-checks.js';
import { scaledWeight } from './checkers/agent-line.js';
import { buildProbe, type Probe } from './checkers/index.js';
import { shellNotifier, type Notifier } from './notify.js';
import { realClock } from './monitor-api.js';
import type {
  HealthView,
  HealthMonitorOptions, HealthService, HealthTarget, MonitorClock, MonitorEvents, MonitorStats, QuorumEvent, ReconcileResult,
  ServiceSnapshot, TargetSnapshot, TransitionEvent, WeightEvent,
} from './monitor-api.js';
import { initialQuorum, nextQuorum } from './quorum.js';
import { applyResult, firstDelayMs, forceDown, newHealth, nextDelayMs, type TargetHealth, type Transition } from './rise-fall.js';
import { NativeProbeEngine, nativeSpecFor, probeAddon } from './native-probe.js';
import { HealthOptionError, type CheckOptions } from './options.js';
import { TimerHeap } from './timer-heap.js';
import { fail, type CheckVerdict, type HealthState, type Reason } from './types.js';

export * from './monitor-api.js';

/** One checker of one real server. The timer heap, the queue and the native engine deal in these. */
interface Rec {
  server: Server;
  /** Its place among the server's checkers (0 = `target.check`, then `moreChecks`). */
  index: number;
  check: CheckOptions;
  /** checkLabel(check), for logs and events when the server has several checkers. */
  label: string;
  probe: Probe;
  health: TargetHealth;
  due: number;
  heapIndex: number;
  /** Planned time of the current interval's check (phase keeper). */
  slot: number;
  running: boolean;
  queued: boolean;
  /** Bumped to disown a check in flight (timeout, reconfigure, removal). */
  gen: number;
  startedAt: number;
  ac: AbortController;
  /** Spec id in the native probe engine, or -1: the JS probe runs the check. */
  native: number;
  /** This checker's number in the native engine's results. */
  token: number;
  /** Its last check got an answer (or it has had none): a timeout now may be congestion, not a dead server. */
  answered: boolean;
  /** Its usual answer time, ms (0: none yet): follows faster answers at once, slower ones slowly. */
  baselineMs: number;
  /** Stops the probe's watch (Probe.watch), if it has one. */
  unwatch: (() => void) | undefined;
}

/** One real server: its checkers and the state they add up to (up while every one is up). */
interface Server extends ServerHealth {
  target: HealthTarget;
  key: string;
  name: string;
  checkers: Rec[];
}

interface Svc {
  spec: Required<Pick<HealthService, 'name' | 'quorum' | 'hysteresis'>> & HealthService;
  members: Set<Server>;
  quorumUp: boolean | undefined;
  sinceMs: number;
  /** keepalived ha_suspend: its checkers are not probed (suspend()). */
  suspended: boolean;
}

const LATE_MS = 50;
/**
 * Checks started per timer turn at most; the rest wait one loop iteration (I/O runs in between). The
 * time budget below is what usually ends a turn: a native start costs microseconds, and on a loaded
 * machine every extra turn waits for the CPU again (64 per turn capped 10,000 targets at ~6,500/s).
 */
const MAX_STARTS_PER_TURN = 1024;
const TURN_BUDGET_MS = 8;
/**
 * Checks due within this many ms start together, a little early: the timer wakes the loop at most
 * ~100 times a second however many targets there are (one wake-up per check cost more than the
 * check itself in the QEMU guest). Deadlines of running checks are never judged early.
 */
const START_QUANTUM_MS = 10;
/**
 * The native engine enforces a check's timeout itself; the monitor's own deadline is only a backstop
 * against a lost result, late enough never to race the engine's verdict.
 */
const NATIVE_BACKSTOP_MS = 2000;

/** JSON with sorted keys: equal configs give equal keys whatever order the loader built them in. */
function stableKey(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val !== null && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : val,
  );
}

/** The parts of one checker that need a new probe and a fresh check history when they change. */
function probeKey(t: HealthTarget, check: CheckOptions): string {
  return stableKey({ a: t.address, p: t.port, c: check });
}

/** `check` first, then `moreChecks`: every checker of a target, in its order. */
function checksOf(t: HealthTarget): readonly CheckOptions[] {
  return t.moreChecks === undefined || t.moreChecks.length === 0 ? [t.check] : [t.check, ...t.moreChecks];
}

export class HealthMonitor extends EventEmitter<MonitorEvents> {
  private readonly log: Logger;
  /** Checks allowed in flight: adapts between a floor and the configured `concurrency`. */
  private readonly admission: AdmissionLimit;
  private readonly clock: MonitorClock;
  private readonly random: () => number;
  private readonly notifier: Notifier;
  private readonly probeFactory: (t: HealthTarget) => Probe;
  private readonly servers = new Map<string, Server>();
  private readonly services = new Map<string, Svc>();
  private readonly heap = new TimerHeap<Rec>();
  private readonly queue: Rec[] = [];
  private queueHead = 0;
  private running = 0;
  private timer: unknown = undefined;
  private armedFor = Infinity;
  private closed = false;
  private readonly counters = { checksCompleted: 0, timeouts: 0, lateStarts: 0, maxLateMs: 0 };
  private readonly engine: NativeProbeEngine | undefined;
  private readonly byToken = new Map<number, Rec>();
  private nextToken = 1;

  constructor(opts: HealthMonitorOptions = {}) {
    super();
    this.log = opts.logger ?? pino({ level: 'silent' });
    this.admission = new AdmissionLimit({ ceiling: Math.max(1, opts.concurrency ?? 1000) });
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.notifier = opts.notifier ?? shellNotifier(this.log);
    this.probeFactory = opts.probeFactory ?? ((t) => buildProbe(t.id, t.address, t.port, t.check));
    const lib = (opts.nativeProbes ?? opts.probeFactory === undefined) ? probeAddon() : null;
    this.engine = lib === null ? undefined : new NativeProbeEngine(lib, this.onNativeVerdict);
  }

  /** Adds or updates a virtual server's quorum settings. */
  upsertService(s: HealthService): void {
    const spec = { ...s, quorum: s.quorum ?? 1, hysteresis: s.hysteresis ?? 0 };
    const svc = this.services.get(s.name);
    if (svc === undefined) {
      this.services.set(s.name, { spec, members: new Set(), quorumUp: undefined, sinceMs: this.clock.now(), suspended: false });
      return;
    }
    const changed = svc.spec.quorum !== spec.quorum || svc.spec.hysteresis !== spec.hysteresis;
    svc.spec = spec;
    if (changed) this.evaluateQuorum(svc);
  }

  /**
   * keepalived ha_suspend: while suspended, a service's checkers are not probed (a check in flight is
   * disowned) and its real servers keep their state and rise/fall counts, so the table does not move.
   * Resumed, each checker goes on from that state with its next check within one interval (keepalived's
   * checker thread keeps ticking and simply skips the probe while disabled). Targets added meanwhile wait too.
   */
  suspend(service: string, suspended: boolean): void {
    // Resuming a service the monitor does not know (it left the config) must not create it.
    if (!suspended && !this.services.has(service)) return;
    const svc = this.svc(service);
    if (svc.suspended === suspended) return;
    svc.suspended = suspended;
    this.log.info({ service, suspended }, suspended ? 'health checks suspended (ha_suspend: virtual address not held)' : 'health checks resumed (ha_suspend: virtual address held)');
    const now = this.clock.now();
    for (const srv of svc.members) for (const r of srv.checkers) this.scheduleFirst(r, now);
  }

  /** Whether a service's checkers are suspended now (suspend()). */
  suspended(service: string): boolean {
    return this.services.get(service)?.suspended === true;
  }

  /** Forgets a service with no targets left (targets keep an implicit default service otherwise). */
  removeService(name: string): void {
    const svc = this.services.get(name);
    if (svc?.members.size === 0) this.services.delete(name);
  }

  /**
   * Adds or updates a target. An identical target is a no-op ('unchanged'); a change of weight, name,
   * service or hooks keeps the history ('updated'); a change of address, port or a checker's options
   * keeps the current state but restarts that checker's rise/fall counting with a new probe
   * ('reconfigured'); checkers that did not change keep theirs.
   * Throws HealthOptionError (naming target and field) on bad check options, leaving the old target.
   */
  upsert(t: HealthTarget): 'added' | 'unchanged' | 'updated' | 'reconfigured' {
    if (this.closed) throw new Error('HealthMonitor is closed');
    const key = stableKey(t);
    const srv = this.servers.get(t.id);
    if (srv?.key === key) return 'unchanged';
    const now = this.clock.now();
    const checks = checksOf(t);
    if (srv === undefined) {
      // Every probe is built before anything changes: a bad option throws and leaves nothing behind.
      const probes = checks.map((c, i) => this.probeFor(t, c, i));
      const s: Server = { target: t, key, name: t.name ?? t.id, checkers: [], state: 'up', sinceMs: now };
      checks.forEach((c, i) => s.checkers.push(this.newChecker(s, i, c, probes[i] ?? this.probeFor(t, c, i), now)));
      s.state = combinedState(s.checkers);
      this.servers.set(t.id, s);
      this.join(s, t.service);
      for (const r of s.checkers) this.scheduleFirst(r, now);
      this.evaluateQuorum(this.svc(t.service));
      return 'added';
    }
    // A checker whose address, port and options are unchanged keeps its probe and history (undefined here).
    const probes = checks.map((c, i) => {
      const r = srv.checkers[i];
      return r !== undefined && probeKey(srv.target, r.check) === probeKey(t, c) ? undefined : this.probeFor(t, c, i);
    });
    const oldLive = this.liveWeight(srv);
    const oldService = srv.target.service;
    srv.target = t;
    srv.key = key;
    srv.name = t.name ?? t.id;
    if (oldService !== t.service) {
      this.leave(srv, oldService);
      this.join(srv, t.service);
      if (this.suspended(oldService) !== this.suspended(t.service)) for (const r of srv.checkers) this.scheduleFirst(r, now);
    }
    let reprobed = srv.checkers.length !== checks.length;
    for (const r of srv.checkers.splice(checks.length)) this.retire(r);
    let disabled = false;
    for (const [i, c] of checks.entries()) {
      const probe = probes[i];
      const r = srv.checkers[i];
      if (probe === undefined && r !== undefined) {
        r.check = c;
        continue;
      }
      reprobed = true;
      const p = probe ?? this.probeFor(t, c, i);
      if (r === undefined) {
        const fresh = this.newChecker(srv, i, c, p, now);
        srv.checkers.push(fresh);
        this.scheduleFirst(fresh, now);
        continue;
      }
      r.check = c;
      r.label = checkLabel(c);
      r.probe = p;
      this.watch(r);
      this.disown(r);
      this.detachNative(r);
      this.attachNative(r);
      const h = r.health;
      h.okStreak = 0;
      h.failStreak = 0;
      h.retriesUsed = 0;
      h.dynamicWeight = undefined;
      h.weightPercent = undefined;
      h.weightOffset = undefined;
      this.scheduleFirst(r, now);
      if (c.type === 'none' && h.state === 'down') {
        // Checking switched off: nothing will ever prove this checker up, so it is up now.
        applyResult(h, { ...c, rise: 1 }, { ok: true, reason: 'ok', detail: 'health check disabled (type none)', latencyMs: 0 }, now);
        disabled = true;
      }
    }
    if (reprobed) {
      // A checker switched off, removed or added (alpha: down until proven) can move the server.
      const tr = settle(srv, srv.checkers, disabled ? 'ok' : 'initial', disabled ? 'health check disabled (type none)' : 'checkers changed', now);
      if (tr !== null) this.onTransition(srv, tr, 0);
    }
    const newLive = this.liveWeight(srv);
    if (newLive !== oldLive && srv.state === 'up') {
      this.log.info({ ...this.logFields(srv), weight: newLive, previous: oldLive }, `real server weight ${oldLive} → ${newLive}: configuration changed`);
      this.emit('weight', { id: t.id, service: t.service, name: srv.name, weight: newLive, previous: oldLive, at: this.clock.wall(), detail: 'configuration changed' });
    }
    if (oldService !== t.service) this.evaluateQuorum(this.svc(oldService));
    this.evaluateQuorum(this.svc(t.service));
    return reprobed ? 'reconfigured' : 'updated';
  }

  /** Removes a target; with omega an up target first goes down (reason "removed") and its down hook runs. */
  remove(id: string): boolean {
    const srv = this.servers.get(id);
    if (srv === undefined) return false;
    if (srv.target.omega === true) this.lifecycleDown(srv, 'removed', 'removed from the configuration');
    for (const r of srv.checkers) this.retire(r);
    this.servers.delete(id);
    this.leave(srv, srv.target.service);
    this.emit('removed', { id, service: srv.target.service, name: srv.name });
    this.evaluateQuorum(this.svc(srv.target.service));
    this.arm();
    return true;
  }

  /**
   * Makes the monitor hold exactly these services and targets (a reload): upserts each, removes the
   * rest, and evaluates quorum once at the end so a half-applied reload never flaps a service.
   * A target with bad options is reported in `errors` (naming target and field) and keeps its
   * previous definition if it had one; every other target is still applied.
   */
  reconcile(services: readonly HealthService[], targets: readonly HealthTarget[]): ReconcileResult {
    const res: ReconcileResult = { added: 0, unchanged: 0, updated: 0, reconfigured: 0, removed: 0, errors: [] };
    for (const s of services) this.upsertService(s);
    const wanted = new Set(targets.map((t) => t.id));
    this.batch = true;
    try {
      for (const id of [...this.servers.keys()]) {
        if (!wanted.has(id)) {
          this.remove(id);
          res.removed++;
        }
      }
      for (const t of targets) {
        try {
          res[this.upsert(t)]++;
        } catch (e) {
          res.errors.push({ id: t.id, message: (e as Error).message });
          this.log.error({ service: t.service, realServer: t.name ?? t.id, err: (e as Error).message }, 'health check not applied');
        }
      }
    } finally {
      this.batch = false;
    }
    for (const svc of this.services.values()) this.evaluateQuorum(svc);
    const names = new Set(services.map((s) => s.name));
    for (const [name, svc] of this.services) if (!names.has(name) && svc.members.size === 0) this.services.delete(name);
    return res;
  }

  private batch = false;

  /** Targets and services; `concurrencyLimit` is the adaptive limit of checks in flight now. */
  snapshot(): { targets: TargetSnapshot[]; services: ServiceSnapshot[]; concurrencyLimit: number } {
    const now = this.clock.now();
    const toWall = (ms: number): number => this.clock.wall() - (now - ms);
    const lastOf = (r: Rec, labelled: boolean): TargetSnapshot['last'] => {
      const h = r.health;
      if (h.checks === 0) return undefined;
      return { at: toWall(h.lastCheckMs), reason: h.lastReason, detail: labelled ? `${r.label}: ${h.lastDetail}` : h.lastDetail, latencyMs: h.lastLatencyMs };
    };
    const targets = [...this.servers.values()].map((s): TargetSnapshot => {
      const several = s.checkers.length > 1;
      const focus = this.focus(s);
      const h = focus.health;
      let checks = 0;
      let failures = 0;
      for (const r of s.checkers) {
        checks += r.health.checks;
        failures += r.health.failures;
      }
      const snap: TargetSnapshot = {
        id: s.target.id, service: s.target.service, name: s.name, address: s.target.address, port: s.target.port,
        type: s.target.check.type, state: s.state, since: toWall(s.sinceMs), inStateMs: now - s.sinceMs,
        weight: s.target.weight, liveWeight: this.liveWeight(s), checks, failures,
        okStreak: h.okStreak, failStreak: h.failStreak, last: lastOf(focus, several),
      };
      if (several) {
        snap.checkers = s.checkers.map((r) => ({
          label: r.label, type: r.check.type, state: r.health.state, checks: r.health.checks, failures: r.health.failures,
          okStreak: r.health.okStreak, failStreak: r.health.failStreak, last: lastOf(r, false),
        }));
      }
      return snap;
    });
    const services = [...this.services.values()].map((s): ServiceSnapshot => ({
      name: s.spec.name, quorumUp: s.quorumUp ?? true, sorryServer: s.quorumUp === false, aliveWeight: this.aliveWeight(s),
      quorum: s.spec.quorum, hysteresis: s.spec.hysteresis, since: toWall(s.sinceMs), targets: s.members.size, suspended: s.suspended,
    }));
    return { targets, services, concurrencyLimit: this.admission.limit };
  }

  /** One target's state (up only while every checker is up), or undefined. */
  state(id: string): HealthState | undefined {
    return this.servers.get(id)?.state;
  }

  /** What the director reads of one target (undefined: not checked here, so up). Read-only: a view, not a copy. */
  view(id: string): HealthView | undefined {
    const srv = this.servers.get(id);
    if (srv === undefined) return undefined;
    const up = srv.state === 'up';
    const reported = srv.checkers.some((r) => r.health.dynamicWeight !== undefined || r.health.weightPercent !== undefined || r.health.weightOffset !== undefined);
    return reported ? { up, dynamicWeight: this.liveWeight(srv) } : { up };
  }

  /** Whether a virtual server's quorum is lost now (its sorry server serves). */
  quorumLost(service: string): boolean {
    return this.services.get(service)?.quorumUp === false;
  }

  stats(): MonitorStats {
    let nativeTargets = 0;
    for (const s of this.servers.values()) for (const r of s.checkers) if (r.native >= 0) nativeTargets++;
    const a = this.admission;
    return {
      targets: this.servers.size, running: this.running, queued: this.queue.length - this.queueHead, ...this.counters, nativeTargets,
      concurrencyLimit: a.limit, concurrencyCuts: a.cuts, concurrencyRaises: a.raises,
    };
  }

  /**
   * Stops every check. With omega, up targets go down (reason "shutdown") and their down hooks run,
   * and services that had quorum run their quorumDown hook.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    for (const srv of this.servers.values()) {
      if (srv.target.omega === true) this.lifecycleDown(srv, 'shutdown', 'lvsd stopping');
      for (const r of srv.checkers) {
        this.disown(r);
        r.unwatch?.();
      }
    }
    for (const svc of this.services.values()) {
      if (svc.spec.omega === true && svc.quorumUp === true && svc.spec.notify?.quorumDown !== undefined) {
        this.notifier(svc.spec.notify.quorumDown, { LVSD_EVENT: 'quorum-down', LVSD_SERVICE: svc.spec.name, LVSD_REASON: 'shutdown' });
      }
    }
    this.servers.clear();
    this.byToken.clear();
    this.engine?.close();
    this.queue.length = 0;
    this.queueHead = 0;
  }

  // ——— checkers ———

  /** The probe of checker `index` of `t`; an option error names the checker's place in the config. */
  private probeFor(t: HealthTarget, check: CheckOptions, index: number): Probe {
    try {
      const probe = index === 0 ? this.probeFactory(t) : this.probeFactory({ ...t, check });
      if (check.type === 'ping') this.mayPing(t, check);
      if (check.fwmark !== undefined) this.mayMark(t, check);
      return probe;
    } catch (e) {
      if (index === 0) throw e;
      if (e instanceof HealthOptionError) throw new HealthOptionError(e.target, e.field, e.problem, `moreChecks[${index - 1}]`);
      throw e;
    }
  }

  /**
   * A ping check runs on the native engine only (Node has no raw sockets): without it, or without an
   * ICMP socket, the check is refused when it is applied, never left to pass or fail silently.
   */
  private mayPing(t: HealthTarget, check: CheckOptions): void {
    const family = (check.connectIp ?? t.address).includes(':') ? 6 : 4;
    const why = this.engine === undefined
      ? `ping checks need the native probe engine (build/Release/lvsd_probe.node${process.env.LVSD_HEALTH_NATIVE === '0' ? ', switched off by LVSD_HEALTH_NATIVE=0' : ', not built or not loaded'}): Node.js has no raw ICMP sockets`
      : this.engine.pingRefusal(family);
    if (why !== undefined) throw new HealthOptionError(t.id, 'type', why);
  }

  /**
   * A marked check (keepalived checker fwmark) runs on the native engine only: Node.js cannot set SO_MARK
   * before connect(). Without the engine, or for a check it does not run, it is refused, never run unmarked.
   */
  private mayMark(t: HealthTarget, check: CheckOptions): void {
    const why = this.engine === undefined
      ? 'fwmark needs the native probe engine (build/Release/lvsd_probe.node, not built, not loaded or switched off by LVSD_HEALTH_NATIVE=0): Node.js cannot mark a socket'
      : nativeSpecFor(t.id, t.address, t.port, check) === undefined ? `fwmark is set by the native probe engine, which does not run this ${check.type} check` : undefined;
    if (why !== undefined) throw new HealthOptionError(t.id, 'fwmark', why);
  }

  private newChecker(server: Server, index: number, check: CheckOptions, probe: Probe, now: number): Rec {
    const r: Rec = {
      server, index, check, label: checkLabel(check), probe,
      health: newHealth(check.type === 'none' ? { alpha: false } : check, now), due: 0, heapIndex: -1,
      slot: 0, running: false, queued: false, gen: 0, startedAt: 0, ac: new AbortController(), native: -1, token: this.nextToken++, answered: true, baselineMs: 0,
      unwatch: undefined,
    };
    this.watch(r);
    this.attachNative(r);
    this.byToken.set(r.token, r);
    return r;
  }

  /** Stops a checker for good (its server was removed, or it left the server's list). */
  private retire(r: Rec): void {
    r.unwatch?.();
    r.unwatch = undefined;
    this.disown(r);
    this.detachNative(r);
    this.heap.remove(r);
    this.byToken.delete(r.token);
  }

  /** Follows the probe's watch, if it has one: a change it reports brings the next check forward to now. */
  private watch(r: Rec): void {
    r.unwatch?.();
    r.unwatch = r.probe.watch?.(() => {
      if (this.closed || r.running || r.queued || this.byToken.get(r.token) !== r || r.heapIndex < 0) return;
      const now = this.clock.now();
      if (r.due <= now) return;
      r.due = now;
      this.heap.update(r, now);
      this.arm();
    });
  }

  /** The checker whose result explains the server's state: the first one down, else the newest result. */
  private focus(s: Server): Rec {
    const first = s.checkers[0] as Rec;
    if (s.checkers.length === 1) return first;
    let newest = first;
    for (const r of s.checkers) {
      if (s.state === 'down' && r.health.state === 'down') return r;
      if (r.health.lastCheckMs > newest.health.lastCheckMs) newest = r;
    }
    return newest;
  }

  // ——— scheduling ———

  /** Plans a checker's first check from now; a none check, or one of a suspended service, is taken off the timer. */
  private scheduleFirst(rec: Rec, now: number): void {
    if (rec.check.type === 'none' || this.suspended(rec.server.target.service)) {
      this.disown(rec);
      this.heap.remove(rec);
      return;
    }
    rec.slot = now + firstDelayMs(rec.check, this.random());
    this.heap.update(rec, rec.slot);
    this.arm();
  }

  private arm(): void {
    if (this.closed) return;
    const top = this.heap.peek();
    if (top === undefined) {
      if (this.timer !== undefined) this.clock.clearTimer(this.timer);
      this.timer = undefined;
      this.armedFor = Infinity;
      return;
    }
    if (this.timer !== undefined && this.armedFor <= top.due) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.armedFor = top.due;
    this.timer = this.clock.setTimer(this.onTimer, Math.max(0, top.due - this.clock.now()));
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.armedFor = Infinity;
    if (this.closed) return;
    const now = this.clock.now();
    let started = 0;
    // 1 ms of slack: timers fire on whole milliseconds.
    for (let top = this.heap.peek(); top !== undefined && top.due <= now + START_QUANTUM_MS; top = this.heap.peek()) {
      if (top.running) {
        if (top.due > now + 1) break;
        // Deadline passed. Decide after this loop iteration's I/O has been read (setImmediate runs
        // after the poll phase): a late event loop must not turn an answer already waiting in a
        // socket buffer into a false timeout.
        this.heap.pop();
        this.expired.push(top, top.gen);
        if (!this.expiryPending) {
          this.expiryPending = true;
          setImmediate(this.onExpired);
        }
        continue;
      }
      // Bounded work per turn (a count and a time budget): when far behind, start a batch, let I/O
      // run, come back. On a slow CPU the budget keeps answers flowing instead of timing out unread.
      if (started >= MAX_STARTS_PER_TURN || (started > 0 && this.clock.now() - now > TURN_BUDGET_MS)) {
        this.armNow();
        return;
      }
      this.heap.pop();
      this.dispatch(top, now);
      started++;
    }
    this.arm();
  };

  private readonly expired: (Rec | number)[] = [];
  private expiryPending = false;

  private readonly onExpired = (): void => {
    this.expiryPending = false;
    const list = this.expired.splice(0);
    for (let i = 0; i < list.length; i += 2) {
      const rec = list[i] as Rec;
      const gen = list[i + 1] as number;
      if (rec.running && rec.gen === gen) this.finish(rec, gen, this.timeoutVerdict(rec), true);
    }
  };

  private armNow(): void {
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.armedFor = -Infinity;
    this.timer = this.clock.setTimer(this.onTimer, 0);
  }

  private dispatch(rec: Rec, now: number): void {
    if (this.running < this.admission.limit) {
      this.start(rec, now);
      return;
    }
    rec.queued = true;
    this.queue.push(rec);
  }

  private start(rec: Rec, now: number): void {
    const late = now - rec.due;
    if (late > LATE_MS) {
      this.counters.lateStarts++;
      if (late > this.counters.maxLateMs) this.counters.maxLateMs = late;
    }
    this.running++;
    rec.running = true;
    rec.startedAt = now;
    const gen = rec.gen;
    if (rec.native >= 0 && this.engine !== undefined) {
      // No promise, closure or signal per check: the engine runs it and reports by token.
      this.heap.update(rec, now + rec.check.timeoutMs + NATIVE_BACKSTOP_MS);
      this.engine.start(rec.native, rec.token, gen);
      return;
    }
    if (rec.ac.signal.aborted) rec.ac = new AbortController();
    this.heap.update(rec, now + rec.check.timeoutMs);
    let p: Promise<CheckVerdict>;
    try {
      p = rec.probe(rec.ac.signal);
    } catch (e) {
      p = Promise.resolve(fail('error', (e as Error).message));
    }
    p.then(
      (v) => {
        this.finish(rec, gen, v, false);
      },
      (e: unknown) => {
        this.finish(rec, gen, fail('error', e instanceof Error ? e.message : String(e)), false);
      },
    );
  }

  private finish(rec: Rec, gen: number, v: CheckVerdict, timedOut: boolean): void {
    if (rec.gen !== gen || !rec.running || this.closed) return;
    const now = this.clock.now();
    rec.running = false;
    rec.gen++;
    this.running--;
    if (timedOut) {
      this.counters.timeouts++;
      if (rec.native < 0) rec.ac.abort();
    }
    this.heap.remove(rec);
    this.counters.checksCompleted++;
    const check = rec.check;
    const latencyMs = now - rec.startedAt;
    this.admission.record(
      { latencyMs, baselineMs: rec.baselineMs, timeoutMs: check.timeoutMs, timedOut, answeredBefore: rec.answered, saturated: this.queueHead < this.queue.length },
      now,
    );
    rec.answered = !timedOut;
    if (!timedOut) rec.baselineMs = rec.baselineMs === 0 ? latencyMs : Math.min(latencyMs, rec.baselineMs + (latencyMs - rec.baselineMs) / 16);
    const h = rec.health;
    const srv = rec.server;
    const before = this.liveWeight(srv);
    // keepalived log_all_failures: every failed try of a checker that is up, not only the change to down.
    if (!v.ok && check.logAllFailures === true && h.state === 'up') this.log.info({ ...this.logFields(srv), checker: rec.label, reason: v.reason, detail: v.detail, retry: h.retriesUsed }, `check failed: ${v.detail}`);
    const t = applyResult(h, check, { ...v, latencyMs }, now);
    const delay = nextDelayMs(h, check);
    if (h.retriesUsed > 0) {
      rec.due = now + delay;
    } else {
      rec.slot += check.intervalMs;
      // Fell behind (the loop was late, or the check outlasted its interval): re-phase from this
      // check's start instead of firing the missed slots back to back.
      if (rec.slot < now) rec.slot = Math.max(now, rec.startedAt + check.intervalMs);
      rec.due = rec.slot;
    }
    this.heap.update(rec, rec.due);
    let moved = false;
    if (t !== null) {
      const several = srv.checkers.length > 1;
      const st = several ? settle(srv, srv.checkers, t.reason, `${rec.label}: ${t.detail}`, now) : this.single(srv, t);
      if (st !== null) {
        this.onTransition(srv, st, latencyMs);
        moved = true;
      } else if (several) {
        this.log.info({ ...this.logFields(srv), checker: rec.label, to: t.to, reason: t.reason, detail: t.detail, server: srv.state }, `checker ${t.to}`);
      }
    }
    if (!moved && this.liveWeight(srv) !== before && srv.state === 'up') {
      const ev: WeightEvent = { id: srv.target.id, service: srv.target.service, name: srv.name, weight: this.liveWeight(srv), previous: before, at: this.clock.wall(), detail: v.detail };
      this.log.info({ ...this.logFields(srv), weight: ev.weight, previous: ev.previous, detail: v.detail }, `real server weight ${ev.previous} → ${ev.weight}: ${v.detail}`);
      this.emit('weight', ev);
      this.evaluateQuorum(this.svc(srv.target.service));
    }
    while (this.running < this.admission.limit && this.queueHead < this.queue.length) {
      const next = this.queue[this.queueHead++];
      if (next?.queued === true && this.byToken.get(next.token) === next) {
        next.queued = false;
        this.start(next, now);
      }
    }
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    this.arm();
  }

  /** One checker: the server moves with it (no list to walk on the hot path). */
  private single(srv: Server, t: Transition): Transition {
    t.inPreviousStateMs = t.atMs - srv.sinceMs;
    srv.state = t.to;
    srv.sinceMs = t.atMs;
    return t;
  }

  private readonly onNativeVerdict = (token: number, gen: number, v: CheckVerdict | null): void => {
    const rec = this.byToken.get(token);
    if (rec === undefined) return;
    this.finish(rec, gen, v ?? this.timeoutVerdict(rec), v === null);
  };

  private timeoutVerdict(rec: Rec): CheckVerdict {
    return fail('timeout', `no answer within ${rec.check.timeoutMs} ms`);
  }

  /** Puts a TCP or plain-HTTP check on the native engine when there is one. */
  private attachNative(rec: Rec): void {
    if (this.engine === undefined) return;
    const t = rec.server.target;
    const spec = nativeSpecFor(t.id, t.address, t.port, rec.check);
    if (spec !== undefined) rec.native = this.engine.add(spec);
  }

  private detachNative(rec: Rec): void {
    if (rec.native < 0) return;
    this.engine?.remove(rec.native);
    rec.native = -1;
  }

  /** Forgets a check in flight or a queued turn; the probe is aborted and its late verdict ignored. */
  private disown(rec: Rec): void {
    if (rec.running) {
      rec.running = false;
      this.running--;
      if (rec.native < 0) rec.ac.abort();
    }
    rec.queued = false;
    rec.gen++;
  }

  // ——— effects ———

  /** What every log line about a target carries: the owner's names for it, else its service and name. */
  private logFields(srv: Server): Record<string, string> {
    return srv.target.logFields ?? { service: srv.target.service, realServer: srv.name };
  }

  /**
   * The weight a server carries while up: a dynamic weight or agent percentage any checker reported,
   * plus what file checks add (keepalived adds them to the weight), bounded to IPVS's 0..65535.
   */
  private liveWeight(srv: Server): number {
    const first = srv.checkers[0] as Rec;
    if (srv.checkers.length === 1) {
      const h = first.health;
      const w = h.dynamicWeight ?? scaledWeight(srv.target.weight, h.weightPercent);
      return h.weightOffset === undefined ? w : boundedWeight(w + h.weightOffset);
    }
    let dynamic: number | undefined;
    let percent: number | undefined;
    let offset: number | undefined;
    for (const r of srv.checkers) {
      dynamic ??= r.health.dynamicWeight;
      percent ??= r.health.weightPercent;
      if (r.health.weightOffset !== undefined) offset = (offset ?? 0) + r.health.weightOffset;
    }
    const w = dynamic ?? scaledWeight(srv.target.weight, percent);
    return offset === undefined ? w : boundedWeight(w + offset);
  }

  private onTransition(srv: Server, t: Transition, latencyMs: number): void {
    const tg = srv.target;
    const ev: TransitionEvent = {
      id: tg.id, service: tg.service, name: srv.name, address: tg.address, port: tg.port, from: t.from, to: t.to,
      reason: t.reason, detail: t.detail, at: this.clock.wall(), inPreviousStateMs: t.inPreviousStateMs, latencyMs,
      weight: t.to === 'up' ? this.liveWeight(srv) : 0,
    };
    const fields = { ...this.logFields(srv), from: t.from, to: t.to, reason: t.reason, detail: t.detail, inPreviousStateMs: Math.round(t.inPreviousStateMs) };
    // The one log line of a transition (the director only publishes it).
    if (t.to === 'down') this.log.warn(fields, `real server down: ${t.detail}`);
    else this.log.info(fields, `real server up: ${t.detail}`);
    this.emit('transition', ev);
    const hook = t.to === 'up' ? tg.notify?.up : tg.notify?.down;
    if (hook !== undefined) {
      this.notifier(hook, {
        LVSD_EVENT: t.to, LVSD_SERVICE: tg.service, LVSD_RS: srv.name, LVSD_RS_ADDRESS: tg.address, LVSD_RS_PORT: String(tg.port),
        LVSD_REASON: t.reason, LVSD_DETAIL: t.detail,
      });
    }
    this.evaluateQuorum(this.svc(tg.service));
  }

  private lifecycleDown(srv: Server, reason: Reason, detail: string): void {
    const t = forceDown(srv, reason, detail, this.clock.now());
    if (t !== null) this.onTransition(srv, t, 0);
  }

  private svc(name: string): Svc {
    let s = this.services.get(name);
    if (s === undefined) {
      s = { spec: { name, quorum: 1, hysteresis: 0 }, members: new Set(), quorumUp: undefined, sinceMs: this.clock.now(), suspended: false };
      this.services.set(name, s);
    }
    return s;
  }

  private join(srv: Server, service: string): void {
    this.svc(service).members.add(srv);
  }

  private leave(srv: Server, service: string): void {
    this.services.get(service)?.members.delete(srv);
  }

  private aliveWeight(s: Svc): number {
    let w = 0;
    for (const srv of s.members) if (srv.state === 'up') w += this.liveWeight(srv);
    return w;
  }

  private evaluateQuorum(s: Svc): void {
    if (this.batch || this.closed) return;
    const alive = this.aliveWeight(s);
    const opts = { quorum: s.spec.quorum, hysteresis: s.spec.hysteresis };
    if (s.quorumUp === undefined) {
      s.quorumUp = initialQuorum(alive, opts);
      s.sinceMs = this.clock.now();
      return;
    }
    const next = nextQuorum(s.quorumUp, alive, opts);
    if (next === s.quorumUp) return;
    const now = this.clock.now();
    const ev: QuorumEvent = {
      service: s.spec.name, up: next, sorryServer: !next, aliveWeight: alive, quorum: s.spec.quorum, hysteresis: s.spec.hysteresis,
      at: this.clock.wall(), inPreviousStateMs: now - s.sinceMs,
    };
    s.quorumUp = next;
    s.sinceMs = now;
    const fields = { service: s.spec.name, aliveWeight: alive, quorum: s.spec.quorum, hysteresis: s.spec.hysteresis };
    if (next) this.log.info(fields, 'quorum reached: sorry server off');
    else this.log.warn(fields, 'quorum lost: sorry server on');
    this.emit('quorum', ev);
    const hook = next ? s.spec.notify?.quorumUp : s.spec.notify?.quorumDown;
    if (hook !== undefined) {
      this.notifier(hook, { LVSD_EVENT: next ? 'quorum-up' : 'quorum-down', LVSD_SERVICE: s.spec.name, LVSD_ALIVE_WEIGHT: String(alive) });
    }
  }
}

function boundedWeight(w: number): number {
  return Math.max(0, Math.min(65535, w));
}
