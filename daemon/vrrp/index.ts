// The main-process facade of the VRRP engine. The engine itself runs in its own child process
// (engine-process.ts, reached through channel.ts), as keepalived's VRRP child does, so that a busy
// main process (API, health checks, their GC) cannot delay adverts or Master_Down_Timer; this side
// runs what may block — notify hooks, track scripts and files — and relays logs to pino.
//
//   const vrrp = await startVrrp(options, logger);
//   vrrp.on('transition', (e) => …);      // every state change of every instance
//   vrrp.snapshot();                       // latest state (refreshed on transitions and every second)
//   await vrrp.reconfigure(newOptions);    // reload: only the instances that changed are touched
//   await vrrp.stop();                     // graceful: priority-0 adverts, VIPs released
import { EventEmitter } from 'node:events';
import { forkEngine, type EngineChannel } from './channel.js';
import { normalizeOptions, type NormalizedOptions, type VrrpOptions } from './options.js';
import { NotifyRunner, removalNotify, splitCommand, type NotifyResult, type NotifyState } from './notify.js';
import { FileTracker, ScriptTracker, unrunnable } from './track.js';
import { ProcessMonitor } from './process-monitor.js';
import { gateScript } from './script-security.js';
import { NotifyFifo, fifoLine } from './notify-fifo.js';
import { coalesced } from './coalesce.js';
import type { FromWorker, ReconfigureSummary, ToWorker, TransitionEvent, VrrpSnapshot } from './protocol.js';
import type { VrrpState } from './machine.js';

export type { VrrpOptions, VrrpInstanceOptions, SyncGroupOptions, TrackScriptOptions, TrackProcessOptions, GarpOptions, NotifyOptions, VipOptions } from './options.js';
export type { GarpGroupOptions } from './garp-queue.js';
export { VrrpOptionsError } from './options.js';
export type { TransitionEvent, VrrpSnapshot, InstanceSnapshot, ReconfigureSummary } from './protocol.js';
export type { VrrpState } from './machine.js';

type LogFn = (obj: Record<string, unknown>, msg: string) => void;
/** What the engine needs of a logger; a pino Logger fits. */
export interface VrrpLogger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

export interface NotifyEvent {
  /** Instance or group name. */
  object: string;
  result: NotifyResult;
}

/** What startVrrp's caller hears from the start on (later events arrive on the engine's emitter too). */
export interface EngineEvents {
  transition?: (e: TransitionEvent) => void;
  /** A new MASTER's VIPs are up and its first gratuitous ARPs / NAs sent. */
  announced?: (instance: string) => void;
}

export interface VrrpEngine {
  on(event: 'transition', fn: (e: TransitionEvent) => void): this;
  on(event: 'notify', fn: (e: NotifyEvent) => void): this;
  /** The engine process died unexpectedly (VIPs may still be configured). */
  on(event: 'error', fn: (e: Error) => void): this;
  off(event: 'transition', fn: (e: TransitionEvent) => void): this;
  off(event: 'notify', fn: (e: NotifyEvent) => void): this;
  off(event: 'error', fn: (e: Error) => void): this;
  /** Latest snapshot (refreshed on every transition and once a second). */
  snapshot(): VrrpSnapshot;
  /** A fresh snapshot from the engine process. */
  refresh(): Promise<VrrpSnapshot>;
  /** Operator override added to the tracked priority (keepalived has none; lvsd's panel/CLI use it). */
  setPriorityOffset(instance: string, offset: number): void;
  /** Operator-forced FAULT (maintenance): the instance gives up MASTER with a priority-0 advert. */
  forceFault(instance: string, fault: boolean): void;
  /**
   * Applies new options to the running engine: unchanged instances keep running untouched, removed ones
   * stop as on shutdown, added ones start, a change of priority / tracking weights / notify / garp / sync
   * group is applied in place, any other change restarts that instance alone. Track scripts and files
   * follow. Invalid options reject with VrrpOptionsError and change nothing.
   */
  reconfigure(options: VrrpOptions): Promise<ReconfigureSummary>;
  /** Graceful stop: priority-0 adverts, VIPs released, notify `stop` hooks run. */
  stop(): Promise<void>;
}

const toNotify = (s: VrrpState): NotifyState => (s === 'INIT' ? 'STOP' : s);

class Engine extends EventEmitter implements VrrpEngine {
  private latest: VrrpSnapshot;
  private readonly pending = new Map<number, (s: VrrpSnapshot) => void>();
  private seq = 0;
  /** Running track scripts (by name, with the options they run with) and files (by path). */
  private readonly scriptTrackers = new Map<string, { spec: string; t: ScriptTracker }>();
  private readonly fileTrackers = new Map<string, FileTracker>();
  /** track_process: one monitor for every tracked vrrp_track_process (with the options it runs with). */
  private processMonitor: { spec: string; m: ProcessMonitor } | null = null;
  /** While a reconfigure runs: the options before it (transitions of removed instances still find their notify). */
  private previous: NormalizedOptions | null = null;
  private reconfiguring: Promise<unknown> = Promise.resolve();
  private readonly notify: NotifyRunner;
  private readonly groupState = new Map<string, VrrpState>();
  private readonly memberState = new Map<string, VrrpState>();
  private readonly refresher: NodeJS.Timeout;
  private stopped: Promise<void> | null = null;
  private exited = false;
  /** keepalived's notify FIFO, when configured. */
  private fifo: NotifyFifo | null = null;

  /** Settles when the engine has started every instance (or failed to). */
  readonly ready: Promise<void>;

  constructor(
    private readonly child: EngineChannel,
    private opts: NormalizedOptions,
    private readonly log: VrrpLogger,
  ) {
    super();
    this.latest = { instances: [], loopDelayMs: { p99: 0, max: 0 }, at: Date.now() };
    this.ready = new Promise((resolve, reject) => {
      this.once('ready', resolve);
      this.once('fatal', reject);
    });
    // Node treats an unhandled 'error' event as fatal; the director subscribes, this keeps a crash logged only.
    this.on('error', () => undefined);
    child.on('exit', (how) => {
      this.markExited();
      const err = new Error(`VRRP engine process exited (${how})`);
      this.emit('fatal', err);
      // Not asked to stop: the director must know its VRRP engine is gone (VIPs may still be up).
      if (this.stopped === null) {
        this.log.error({ how, pid: child.pid }, 'VRRP engine process exited unexpectedly');
        this.emit('error', err);
      }
    });
    this.notify = new NotifyRunner(
      (object, result) => {
        const fields = { instance: object, command: result.command, args: result.args, code: result.code };
        if (result.error === undefined) this.log.info(fields, 'notify hook ran');
        else this.log.warn({ ...fields, err: result.error }, 'notify hook failed');
        this.emit('notify', { object, result });
      },
      30_000,
      (program, user) => this.gate(program, user),
    );
    child.on('message', (m: FromWorker) => {
      this.onMessage(m);
    });
    this.refresher = setInterval(() => {
      void this.refresh().catch(() => undefined);
    }, 1000);
    this.refresher.unref();
    // Open before the engine starts: its first transitions (INIT → BACKUP) are the FIFO's first lines.
    this.openFifo();
  }

  /** Opens the configured notify FIFO (and starts its reader script, as script_user); a failure is logged, VRRP runs on. */
  private openFifo(): void {
    const f = this.opts.notifyFifo;
    if (f === undefined) return;
    let runAs: { uid: number; gid: number } | undefined;
    let script = f.script;
    if (script !== undefined) {
      const g = this.gate(splitCommand(script)[0] ?? '', undefined);
      if ('refused' in g) {
        this.log.error({ path: f.path, reason: g.refused }, `notify FIFO script not run: ${g.refused}`);
        script = undefined;
      } else runAs = g;
    }
    const fifo = new NotifyFifo({ path: f.path, ...(script !== undefined ? { script } : {}) }, (msg, fields) => {
      this.log.warn(fields, msg);
    }, runAs);
    try {
      fifo.open();
      this.fifo = fifo;
    } catch (e) {
      this.log.error({ path: f.path, err: e instanceof Error ? e.message : String(e) }, `cannot open the notify FIFO ${f.path}; events are not written to it`);
    }
  }

  /**
   * Who runs a script (its own user, else script_user, else ours) and whether it may run at all
   * (enable_script_security, script-security.ts); an unsafe script that still runs is logged once per check.
   */
  private gate(program: string, user: string | undefined): { uid: number; gid: number; unsafe?: string } | { refused: string } {
    const g = gateScript(program, user ?? this.opts.scriptUser, this.opts.scriptSecurity);
    if (g.who === null || !g.verdict.run) return { refused: g.verdict.run ? '' : g.verdict.reason };
    if (g.verdict.unsafe !== undefined) {
      this.log.warn({ script: program, unsafe: g.verdict.unsafe }, `SECURITY VIOLATION - ${program} runs as root from an unsafe path (${g.verdict.unsafe}) and script security is not enabled (vrrp.scriptSecurity)`);
      return { uid: g.who.uid, gid: g.who.gid, unsafe: g.verdict.unsafe };
    }
    return { uid: g.who.uid, gid: g.who.gid };
  }

  /** Track scripts and files run for what the instances track (at start, and again after a reconfigure). */
  startTrackers(): void {
    const opts = this.opts;
    const scripts = new Map<string, string>();
    for (const [name, s] of Object.entries(opts.scripts)) {
      if (opts.instances.some((i) => i.trackScripts.some((t) => t.name === name))) scripts.set(name, JSON.stringify(s));
    }
    for (const [name, cur] of this.scriptTrackers) {
      if (scripts.get(name) === cur.spec) continue;
      cur.t.stop();
      this.scriptTrackers.delete(name);
    }
    for (const [name, spec] of scripts) {
      const s = opts.scripts[name];
      if (this.scriptTrackers.has(name) || s === undefined) continue;
      const gate = this.gate(splitCommand(s.command)[0] ?? '', s.user === '' ? undefined : s.user);
      const why = unrunnable(s.command) ?? ('refused' in gate ? gate.refused : null);
      if (why !== null || 'refused' in gate) {
        this.log.warn({ script: name, reason: why }, `track script ${name} disabled: ${why ?? ''} (keepalived disables it too; it affects no instance until a reload finds it)`);
        this.post({ type: 'track', kind: 'script', name, ok: false, disabled: true });
        continue;
      }
      const t = new ScriptTracker(
        name,
        s,
        (n, ok, detail) => {
          this.log.info({ script: n, ok, detail }, `track script ${n} is now ${ok ? 'passing' : 'failing'}`);
          this.post({ type: 'track', kind: 'script', name: n, ok });
        },
        gate,
      );
      t.start();
      this.scriptTrackers.set(name, { spec, t });
    }
    const files = new Set(opts.instances.flatMap((i) => i.trackFiles.map((f) => f.path)));
    for (const [path, t] of this.fileTrackers) {
      if (files.has(path)) continue;
      t.stop();
      this.fileTrackers.delete(path);
    }
    for (const path of files) {
      if (this.fileTrackers.has(path)) continue;
      const t = new FileTracker(path, (p, value) => {
        this.log.info({ file: p, value }, `track file ${p} holds ${value}`);
        this.post({ type: 'track', kind: 'file', name: p, ok: true, value });
      });
      t.start();
      this.fileTrackers.set(path, t);
    }
    this.startProcessMonitor();
  }

  /** The process monitor for the vrrp_track_process blocks instances track; restarted (a fresh scan) when they change. */
  private startProcessMonitor(): void {
    const opts = this.opts;
    const tracked = Object.fromEntries(Object.entries(opts.processes).filter(([name]) => opts.instances.some((i) => i.trackProcesses.some((t) => t.name === name))));
    const spec = JSON.stringify(tracked);
    if (this.processMonitor?.spec === spec) return;
    this.processMonitor?.m.stop();
    this.processMonitor = null;
    if (Object.keys(tracked).length === 0) return;
    let warned = false;
    const m = new ProcessMonitor(
      tracked,
      (c) => {
        this.log.info({ process: c.name, ok: c.ok, count: c.count }, `Quorum ${c.ok ? 'gained' : 'lost'} for tracked process ${c.name} (${c.count} running)`);
        this.post({ type: 'track', kind: 'process', name: c.name, ok: c.ok });
      },
      (e) => {
        // ECONNREFUSED: not the initial network namespace, where alone the kernel has the connector.
        const where = e.code === 'ECONNREFUSED' ? ' (the kernel offers process events in the initial network namespace only; track_process sees the start-up scan alone here, as keepalived does)' : '';
        if (e.code === 'ECONNREFUSED' && warned) return;
        warned = true;
        this.log.error({ err: e.message, code: e.code }, `track_process: process events unavailable: ${e.message}${where}`);
      },
    );
    m.start();
    this.processMonitor = { spec, m };
  }

  private stopTrackers(): void {
    for (const { t } of this.scriptTrackers.values()) t.stop();
    for (const t of this.fileTrackers.values()) t.stop();
    this.processMonitor?.m.stop();
    this.processMonitor = null;
    this.scriptTrackers.clear();
    this.fileTrackers.clear();
  }

  reconfigure(options: VrrpOptions): Promise<ReconfigureSummary> {
    // Validate first: invalid options change nothing.
    let next: NormalizedOptions;
    try {
      next = normalizeOptions(options);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const run = this.reconfiguring.then(() => this.reconfigureNow(options, next));
    this.reconfiguring = run.catch(() => undefined);
    return run;
  }

  private async reconfigureNow(options: VrrpOptions, next: NormalizedOptions): Promise<ReconfigureSummary> {
    if (this.stopped !== null || this.exited) throw new Error('the VRRP engine is stopped');
    if (next.realtimePriority !== this.opts.realtimePriority) this.log.warn({}, 'realtimePriority changed: it takes effect at the next restart');
    const id = ++this.seq;
    const reply = new Promise<Extract<FromWorker, { type: 'reconfigured' }>>((resolve, reject) => {
      const onMsg = (m: FromWorker): void => {
        if (m.type !== 'reconfigured' || m.id !== id) return;
        this.child.off('message', onMsg);
        this.child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (): void => {
        this.child.off('message', onMsg);
        reject(new Error('the VRRP engine process exited during a reconfigure'));
      };
      this.child.on('message', onMsg);
      this.child.once('exit', onExit);
    });
    this.previous = this.opts;
    this.opts = next;
    if (JSON.stringify(next.notifyFifo) !== JSON.stringify(this.previous.notifyFifo)) {
      this.fifo?.close();
      this.fifo = null;
      this.openFifo();
    }
    try {
      this.post({ type: 'reconfigure', id, options });
      const r = await reply;
      this.latest = r.snapshot;
      // Forget what removed instances and changed groups last said, so notify follows the new layout.
      const names = new Set(next.instances.map((i) => i.name));
      for (const n of [...this.memberState.keys()]) if (!names.has(n)) this.memberState.delete(n);
      for (const g of [...this.groupState.keys()]) {
        const before = this.previous.syncGroups.find((x) => x.name === g);
        const after = next.syncGroups.find((x) => x.name === g);
        if (after === undefined || JSON.stringify(before?.instances) !== JSON.stringify(after.instances)) this.groupState.delete(g);
      }
      for (const i of r.snapshot.instances) if (!this.memberState.has(i.name)) this.memberState.set(i.name, i.state);
      this.startTrackers();
      if (r.error !== undefined || r.summary === undefined) throw new Error(`VRRP reconfigure failed: ${r.error ?? 'no summary'}`);
      const s = r.summary;
      this.log.info({ added: s.added, removed: s.removed, updated: s.updated, restarted: s.restarted, unchanged: s.unchanged.length }, 'VRRP reconfigured');
      return s;
    } finally {
      this.previous = null;
    }
  }

  private post(m: ToWorker): void {
    if (!this.exited) this.child.post(m);
  }

  private onMessage(m: FromWorker): void {
    switch (m.type) {
      case 'ready':
        this.latest = m.snapshot;
        for (const i of m.snapshot.instances) if (!this.memberState.has(i.name)) this.memberState.set(i.name, i.state);
        this.emit('ready');
        break;
      case 'fatal':
        this.emit('fatal', new Error(`VRRP engine failed to start: ${m.message}`));
        break;
      case 'transition':
        this.onTransition(m.event);
        break;
      case 'rxLowerPri': {
        this.fifo?.write(fifoLine('INSTANCE', m.instance, 'MASTER_RX_LOWER_PRI', m.priority));
        const inst = this.opts.instances.find((i) => i.name === m.instance);
        if (inst?.notify !== undefined) this.notify.runMasterRxLowerPri(m.instance, inst.notify);
        break;
      }
      case 'announced':
        this.emit('announced', m.instance);
        break;
      case 'log':
        this.log[m.level](m.fields, m.msg);
        break;
      case 'snapshot': {
        this.latest = m.snapshot;
        const r = this.pending.get(m.id);
        this.pending.delete(m.id);
        r?.(m.snapshot);
        break;
      }
      default:
        break;
    }
  }

  private onTransition(e: TransitionEvent): void {
    const removedByReload = e.to === 'INIT' && !this.opts.instances.some((i) => i.name === e.instance);
    const gone = removedByReload ? this.previous?.instances.find((i) => i.name === e.instance) : undefined;
    if (gone !== undefined) {
      this.onRemoved(e, gone);
      return;
    }
    this.memberState.set(e.instance, e.to);
    const inst = this.opts.instances.find((i) => i.name === e.instance) ?? this.previous?.instances.find((i) => i.name === e.instance);
    // A group changes state when all of its members agree on the new one.
    const g = this.opts.syncGroups.find((x) => x.name === e.group) ?? this.previous?.syncGroups.find((x) => x.name === e.group);
    const groupMoves = g !== undefined && g.instances.every((n) => this.memberState.get(n) === e.to) && this.groupState.get(g.name) !== e.to;
    // FIFO order as keepalived 2.2.7's (measured): at start-up the group's line comes before its instance's, later after it.
    const instanceLine = fifoLine('INSTANCE', e.instance, toNotify(e.to), e.priority);
    if (!(groupMoves && e.from === 'INIT')) this.fifo?.write(instanceLine);
    if (inst !== undefined) this.notify.run('INSTANCE', e.instance, toNotify(e.to), e.priority, inst.notify);
    if (g !== undefined && groupMoves) {
      this.groupState.set(g.name, e.to);
      this.fifo?.write(fifoLine('GROUP', g.name, toNotify(e.to), 0));
      if (e.from === 'INIT') this.fifo?.write(instanceLine);
      this.notify.run('GROUP', g.name, toNotify(e.to), 0, g.notify ?? {});
    }
    this.emit('transition', e);
    void this.refresh().catch(() => undefined);
  }

  /** An instance a reload removed: FAULT or DELETED (removalNotify), and no group notify, as keepalived. */
  private onRemoved(e: TransitionEvent, inst: NormalizedOptions['instances'][number]): void {
    this.memberState.set(e.instance, e.to);
    const said = removalNotify(e.from, inst.notifyDeleted, inst.notify);
    if (said !== null) {
      this.fifo?.write(fifoLine('INSTANCE', e.instance, said.state, e.priority));
      this.notify.run('INSTANCE', e.instance, said.state, e.priority, said.hooks);
    }
    this.emit('transition', e);
    void this.refresh().catch(() => undefined);
  }

  snapshot(): VrrpSnapshot {
    return this.latest;
  }

  refresh(): Promise<VrrpSnapshot> {
    return this.exited ? Promise.resolve(this.latest) : this.coalescedRefresh();
  }

  /** Snapshot requests, coalesced (coalesce.ts): a burst of transitions asks for one or two, not one each. */
  private readonly coalescedRefresh = coalesced(() => this.request());

  private request(): Promise<VrrpSnapshot> {
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.post({ type: 'snapshot', id });
    });
  }

  setPriorityOffset(instance: string, offset: number): void {
    this.post({ type: 'priorityOffset', instance, offset });
  }

  forceFault(instance: string, fault: boolean): void {
    this.post({ type: 'forceFault', instance, fault });
  }

  markExited(): void {
    this.exited = true;
    clearInterval(this.refresher);
    for (const r of this.pending.values()) r(this.latest);
    this.pending.clear();
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      await this.reconfiguring;
      // keepalived 2.2.7 closes its FIFO and stops the reader before its instances stop (measured: the reader
      // never sees a STOP line on shutdown); lvsd alike, so a tool sees the same stream.
      this.fifo?.close();
      this.fifo = null;
      this.stopTrackers();
      clearInterval(this.refresher);
      if (!this.exited) {
        // The engine answers `stopped` and exits on its own; only a stuck one is killed.
        const exited = new Promise<void>((resolve) => {
          this.child.once('exit', () => {
            resolve();
          });
        });
        this.post({ type: 'stop' });
        const timeout = new Promise<'timeout'>((r) => setTimeout(() => { r('timeout'); }, 5000).unref());
        if ((await Promise.race([exited, timeout])) === 'timeout') {
          this.log.error({ pid: this.child.pid }, 'VRRP engine process did not stop within 5 s; killing it');
          await this.child.kill();
        }
      }
      await this.notify.idle();
    })();
    return this.stopped;
  }
}

/**
 * Starts the VRRP engine. Rejects on invalid options (VrrpOptionsError naming instance and field) or a
 * failed start. Pass `events.transition` to also see the transitions made while starting (INIT → BACKUP,
 * or → MASTER for an address owner); later ones arrive on 'transition' as well; `events.announced` likewise.
 */
export async function startVrrp(options: VrrpOptions, logger: VrrpLogger, events: EngineEvents = {}): Promise<VrrpEngine> {
  const opts = normalizeOptions(options);
  const worker = forkEngine();
  const engine = new Engine(worker, opts, logger);
  if (events.transition !== undefined) engine.on('transition', events.transition);
  if (events.announced !== undefined) engine.on('announced', events.announced);
  worker.post({ type: 'start', options });
  try {
    await engine.ready;
  } catch (e) {
    await worker.kill();
    throw e;
  }
  engine.startTrackers();
  return engine;
}
