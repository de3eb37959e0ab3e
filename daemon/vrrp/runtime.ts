// The VRRP runtime: drives one pure machine per instance with real sockets, timers and addresses.
// It runs inside the VRRP engine process (engine-process.ts) so nothing else in lvsd can delay its timers;
// everything that may block (notify hooks, track scripts, logging I/O) stays on the main thread.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { MachineEvent } from './machine.js';
import { receiveAdvert, type InstLimitedLog, type InstLog } from './adverts.js';
import { trackedFor, type TrackedState, type TrackResult } from './tracking.js';
import { startupDelayFor, type NormalizedInstance, type NormalizedOptions } from './options.js';
import type { LogLevel, ReconfigureSummary, VrrpSnapshot } from './protocol.js';
import { formatIP } from '../net/addr.js';
import type { LinkInfo } from '../net/rtnl.js';
import type { ReceivedPacket } from '../net/vrrp-socket.js';
import { remakeVmac, setUpInstance } from './instance-setup.js';
import { planReload } from './reload-plan.js';
import { LocalIgmpReports } from './local-igmp.js';
import { LinkTable } from './link-table.js';
import { Rebinder } from './rebind.js';
import { applyStaticDelta, NO_STATICS, staticDelta } from './static-apply.js';
import { Announcer } from './announcer.js';
import { Driver } from './driver.js';
import { effectiveState, instanceSnapshot, type Inst } from './instance.js';
import { logGate } from './log-gate.js';
import type { RuntimeHooks, RuntimeIo } from './runtime-io.js';

export type { RuntimeHooks, RuntimeIo } from './runtime-io.js';

export class VrrpRuntime {
  private readonly insts = new Map<string, Inst>();
  private readonly limited = logGate((level, instance, msg, fields) => { this.hooks.log(level, msg, { instance, ...fields }); });
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 1 });
  private stopping = false;
  /** Set while instances added by reconfigure start: their startup transitions do not move their sync group. */
  private quietSync = false;
  /** Latest result of every track script and file, so an instance added by reconfigure starts from it. */
  private readonly trackResults = new Map<string, TrackResult>();
  /** End of the start-up delay (vrrp_startup_delay / vrrp_delay_after_boot) on our clock, if any. */
  private holdUntil: number | undefined;
  /** The masters' GARPs / NAs, paced per interface by keepalived's garp_group queues. */
  private readonly announcer: Announcer;
  /** Steps the instances' machines and carries out what they decide. */
  private readonly driver: Driver;

  constructor(
    private opts: NormalizedOptions,
    private readonly io: RuntimeIo,
    private readonly hooks: RuntimeHooks,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.announcer = new Announcer(opts.garpGroups, opts.instances, {
      announce: (ifname, ifindex, vip) => { this.io.announce(ifname, ifindex, vip); },
      indexOf: (ifname) => this.byName(ifname)?.index ?? 0,
      logLimited: (level, inst, msg, reason, peer) => { this.logLimited(level, inst, msg, reason, peer); },
      announced: (name) => { this.hooks.announced?.(name); },
    }, now);
    this.driver = new Driver(io, hooks, this.announcer, {
      instances: () => this.insts.values(),
      syncFollows: () => !this.stopping && !this.quietSync,
      indexOf: (ifname) => this.indexOf(ifname),
      log: this.instLog,
      logLimited: this.instLimited,
    }, now);
  }

  /** disableLocalIgmp's switch (set up by start()). */
  private igmp: LocalIgmpReports | null = null;

  /** The links, debounced by interface_up_down_delays. */
  private readonly links = new LinkTable({
    appeared: (l) => { this.rebinder.linkAppeared(l); },
    changed: (name, up) => { this.linkChanged(name, up); },
    log: (level, msg, fields) => { this.hooks.log(level, msg, fields); },
  }, () => this.now(), () => !this.stopping);

  /** Instances set up again when their link (or an address on it) appears: dynamic_interfaces. */
  private readonly rebinder = new Rebinder({
    instances: () => this.insts.values(),
    current: (name) => this.insts.get(name),
    stopping: () => this.stopping,
    byName: (n) => this.byName(n),
    setUpAgain: async (inst, why) => {
      this.log('info', inst, `setting up again: ${why}`, {});
      this.announcer.cancel(inst);
      await this.release(inst);
      const o = await remakeVmac(this.io, inst.o, async () => { this.links.learn(await this.io.links()); }, (level, msg, fields) => { this.hooks.log(level, msg, fields); });
      const fresh = await this.addInstance(o);
      this.retrack(fresh);
      this.feed(fresh, this.startupEvent());
    },
  });

  /** static_ipaddress / static_routes / static_rules as last set. */
  private statics = NO_STATICS;

  private async setStatics(next: NormalizedOptions['statics']): Promise<void> {
    const delta = staticDelta(this.statics, next);
    this.statics = next;
    await applyStaticDelta(this.io, delta, (n) => this.byName(n)?.index ?? 0, (level, msg, fields) => { this.hooks.log(level, msg, fields); });
  }

  async start(): Promise<void> {
    this.loopDelay.enable();
    const delay = startupDelayFor(this.opts, this.io.uptimeMs?.() ?? null);
    if (delay > 0) {
      this.holdUntil = this.now() + delay;
      this.hooks.log('info', `Delaying startup for ${delay / 1000} seconds: no instance becomes MASTER by its timer before then`, { startupDelayMs: delay });
    }
    const igmp = this.io.localIgmpReports;
    this.igmp = igmp === undefined ? null : new LocalIgmpReports(igmp, (msg) => { this.hooks.log('warn', msg, {}); });
    this.igmp?.want(this.opts.disableLocalIgmp);
    this.links.setDelays(this.opts);
    this.links.learn(await this.io.links());
    await this.setStatics(this.opts.statics);
    for (const o of this.opts.instances) await this.addInstance(o);
    this.io.watchLinks((l, deleted) => {
      this.links.event(l, deleted);
    });
    this.io.watchAddresses?.((ifindex, address, deleted) => {
      this.onAddress(ifindex, address, deleted);
    });
    // One clock reading for every instance: equal deadlines, so their timers come due together (fireDue).
    const now = this.now();
    for (const inst of this.insts.values()) {
      this.retrack(inst);
      this.feed(inst, this.startupEvent(), now);
    }
  }

  private startupEvent(): MachineEvent {
    return this.holdUntil === undefined ? { type: 'startup' } : { type: 'startup', holdUntil: this.holdUntil };
  }

  private byName(n: string): LinkInfo | undefined {
    return this.links.byName(n);
  }

  private readonly indexOf = (ifname: string): number => this.byName(ifname)?.index ?? 0;

  /** Sets one instance up (addresses, socket, tracking) in INIT; the caller feeds it `startup`. */
  private addInstance(o: NormalizedInstance): Promise<Inst> {
    return setUpInstance(this.io, o, {
      indexOf: this.indexOf,
      register: (inst) => {
        inst.tracked = this.trackedFor(o);
        this.insts.set(o.name, inst);
      },
      receive: (inst, p) => { this.receive(inst, p); },
      log: this.instLog,
    });
  }

  /** Tracking results from the main thread (scripts, files). */
  track(kind: 'script' | 'file' | 'process', name: string, ok: boolean, value?: number, disabled = false): void {
    const key = `${kind}:${name}`;
    this.trackResults.set(key, { ok, ...(value === undefined ? {} : { value }), ...(disabled ? { disabled } : {}) });
    for (const inst of this.insts.values()) {
      // A disabled script leaves the instances (keepalived alike); one that runs again (after a reload) joins.
      if (kind === 'script' && inst.o.trackScripts.some((t) => t.name === name) && inst.tracked.has(key) === disabled) {
        inst.tracked = this.trackedFor(inst.o, inst.tracked);
        this.retrack(inst);
        continue;
      }
      const t = inst.tracked.get(key);
      if (t === undefined) continue;
      t.ok = ok;
      if (value !== undefined) t.value = value;
      this.retrack(inst);
    }
  }

  private trackedFor(o: NormalizedInstance, previous?: Map<string, TrackedState>): Map<string, TrackedState> {
    return trackedFor(o, (n) => this.byName(n)?.up ?? false, this.trackResults, previous);
  }

  /**
   * Applies new options with as little disturbance as possible: an instance whose options are the same
   * keeps running untouched; a removed one stops as on shutdown (priority-0 advert, VIPs released); an
   * added one starts as at startup; one whose change is only priority, tracking weights, notify, garp
   * or sync group is updated in place (a priority change is an ordinary RFC 5798 event: a master
   * re-advertises at once and a better backup preempts); any other change restarts that instance alone.
   */
  async reconfigure(next: NormalizedOptions): Promise<ReconfigureSummary> {
    if (this.stopping) throw new Error('the VRRP runtime is stopping');
    // Links made just before (a new virtual MAC interface) may not have come as events yet.
    this.links.learn(await this.io.links());
    this.links.setDelays(next);
    const { summary, stop: toStop, inPlace } = planReload([...this.insts.values()].map((i) => i.o), next.instances);
    this.opts = next;
    this.announcer.reconfigure(next.garpGroups, next.instances);
    this.igmp?.want(next.disableLocalIgmp);
    await this.setStatics(next.statics);
    for (const name of toStop) await this.stopInstance(this.get(name), summary.removed.includes(name) ? 'removed by reload' : 'restarted by reload');
    for (const [name, o] of inPlace) {
      const inst = this.get(name);
      const garpChanged = JSON.stringify(o.garp) !== JSON.stringify(inst.o.garp);
      inst.tracked = this.trackedFor(o, inst.tracked);
      inst.o = o;
      inst.m = { ...inst.m, config: { ...inst.m.config, lowerPrioNoAdvert: o.lowerPrioNoAdvert, higherPrioSendAdvert: o.higherPrioSendAdvert } };
      this.log('info', inst, 'options changed: applied in place', { priority: o.priority });
      this.retrack(inst);
      // A running refresh uses the settings it started with: re-arm it with the new ones (no extra burst).
      if (garpChanged && inst.m.state === 'MASTER') {
        this.announcer.cancel(inst);
        this.announcer.refresh(inst);
      }
      summary.updated.push(o.name);
    }
    const started: Inst[] = [];
    for (const o of next.instances) {
      if (this.insts.has(o.name)) continue;
      started.push(await this.addInstance(o));
      if (!summary.restarted.includes(o.name)) summary.added.push(o.name);
    }
    // A new member of a sync group must not drag the running members to BACKUP as it starts: it starts
    // on its own and then follows the group (a FAULT of its own still takes the group to FAULT).
    this.quietSync = true;
    try {
      for (const inst of started) {
        this.retrack(inst);
        // Like keepalived's one global delayed-start time: an instance added during the delay is held too.
        this.feed(inst, this.startupEvent());
      }
    } finally {
      this.quietSync = false;
    }
    for (const inst of started) {
      const g = inst.o.group;
      if (g === undefined) continue;
      const others = [...this.insts.values()].filter((x) => x !== inst && x.o.group === g && !started.includes(x));
      if (inst.m.state === 'FAULT') for (const x of others) this.feed(x, { type: 'sync', state: 'FAULT' });
      else if (others.some((x) => x.m.state === 'MASTER')) this.feed(inst, { type: 'sync', state: 'MASTER' });
    }
    // Results of scripts and files nobody tracks any more are forgotten (a re-added one starts afresh).
    const tracked = new Set(next.instances.flatMap((o) => [...o.trackScripts.map((t) => `script:${t.name}`), ...o.trackFiles.map((t) => `file:${t.path}`), ...o.trackProcesses.map((t) => `process:${t.name}`)]));
    for (const k of this.trackResults.keys()) if (!tracked.has(k)) this.trackResults.delete(k);
    return summary;
  }

  /** Stops one instance as on shutdown (priority-0 advert from a master, VIPs released) and forgets it. */
  private async stopInstance(inst: Inst, why: string): Promise<void> {
    this.log('info', inst, `stopping: ${why}`, {});
    this.announcer.cancel(inst);
    this.feed(inst, { type: 'shutdown' });
    await this.release(inst);
  }

  /** Its address changes done, the instance lets go of its timer and socket and leaves the table. */
  private async release(inst: Inst): Promise<void> {
    await inst.vipChain;
    if (inst.timer !== null) clearTimeout(inst.timer);
    inst.timer = null;
    inst.socket?.close();
    inst.socket = null;
    this.insts.delete(inst.o.name);
  }

  setPriorityOffset(name: string, offset: number): void {
    const inst = this.get(name);
    inst.offset = offset;
    this.retrack(inst);
  }

  forceFault(name: string, fault: boolean): void {
    const inst = this.get(name);
    inst.forcedFault = fault;
    this.retrack(inst);
  }

  private get(name: string): Inst {
    const i = this.insts.get(name);
    if (i === undefined) throw new Error(`no VRRP instance named ${name}`);
    return i;
  }

  private linkChanged(name: string, up: boolean): void {
    for (const inst of this.insts.values()) {
      const t = inst.tracked.get(`interface:${name}`);
      const own = name === inst.o.interface;
      if (t !== undefined) t.ok = up;
      if (t !== undefined || own) {
        this.log(up ? 'info' : 'warn', inst, `interface ${name} is ${up ? 'up' : 'down'}`, {});
        this.retrack(inst);
      }
    }
  }

  /** track_src_ip: the configured source address coming and going on the instance's interface. */
  private onAddress(ifindex: number, address: Buffer, deleted: boolean): void {
    const link = this.links.get(ifindex);
    if (!deleted && link !== undefined) this.rebinder.linkAppeared(link);
    for (const inst of this.insts.values()) {
      if (!inst.o.trackSrcIp || inst.src === null || inst.ifindex !== ifindex || !inst.src.equals(address) || inst.srcMissing === deleted) continue;
      inst.srcMissing = deleted;
      this.log(deleted ? 'warn' : 'info', inst, `source address ${formatIP(address)} ${deleted ? 'removed from' : 'back on'} ${inst.o.interface}`, {});
      this.retrack(inst);
    }
  }

  /** Recomputes priority and fault from tracking, operator overrides and the instance's own interface. */
  private retrack(inst: Inst): void {
    const { priority, reasons } = effectiveState(inst, inst.ifindex === 0 ? undefined : this.links.get(inst.ifindex));
    inst.faultReasons = reasons;
    this.feed(inst, { type: 'setPriority', priority });
    this.feed(inst, { type: 'setFault', fault: reasons.length > 0 });
  }

  private receive(inst: Inst, p: ReceivedPacket): void {
    if (this.stopping) return;
    const ev = receiveAdvert(inst, p, this.instLog, this.instLimited);
    if (ev !== null) this.feed(inst, ev);
  }

  private feed(inst: Inst, ev: MachineEvent, now?: number): void {
    this.driver.feed(inst, ev, now);
  }

  /** Graceful stop: priority-0 advert from masters, VIPs released, sockets closed. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const inst of this.insts.values()) {
      this.announcer.cancel(inst);
      this.feed(inst, { type: 'shutdown' });
    }
    await Promise.all([...this.insts.values()].map((i) => i.vipChain));
    for (const inst of this.insts.values()) {
      if (inst.timer !== null) clearTimeout(inst.timer);
      inst.socket?.close();
      inst.socket = null;
    }
    await this.setStatics(NO_STATICS);
    this.links.stop();
    this.announcer.close();
    this.loopDelay.disable();
    this.igmp?.want(false);
    this.io.close();
  }

  snapshot(): VrrpSnapshot {
    const instances = [...this.insts.values()].map(instanceSnapshot);
    const ns = (x: number): number => Math.round(x / 1e4) / 100;
    return { instances, loopDelayMs: { p99: ns(this.loopDelay.percentile(99)), max: ns(this.loopDelay.max) }, at: Date.now() };
  }

  private log(level: LogLevel, inst: Inst, msg: string, fields: Record<string, unknown>): void {
    this.hooks.log(level, msg, { instance: inst.o.name, ...fields });
  }

  private logLimited(level: LogLevel, inst: Inst, msg: string, reason: string, peer: Uint8Array): void {
    this.limited(level, inst.o.name, msg, reason, peer);
  }

  private readonly instLog: InstLog = (level, inst, msg, fields) => { this.log(level, inst, msg, fields); };
  private readonly instLimited: InstLimitedLog = (level, inst, msg, reason, peer) => { this.logLimited(level, inst, msg, reason, peer); };
}
