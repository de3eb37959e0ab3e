// Drives one instance's pure machine (machine.ts): an event stepped at the runtime's clock, the actions
// carried out (adverts, VIPs, GARPs, transitions reported), its one timer armed for the next deadline,
// and the other members of its sync group made to follow its transitions (keepalived vrrp_sync_group).
import { nextDeadline, step, type Action, type MachineEvent } from './machine.js';
import { sendAdvert, type InstLimitedLog, type InstLog } from './adverts.js';
import type { Announcer } from './announcer.js';
import type { Inst } from './instance.js';
import type { TransitionEvent } from './protocol.js';
import type { RuntimeHooks } from './runtime-io.js';
import { changeVips, type VipIo } from './vip-apply.js';

export interface DriverHost {
  instances(): Iterable<Inst>;
  /** False while the runtime stops and while instances added by a reload start: no sync group follows then. */
  syncFollows(): boolean;
  /** The index of a link by name (0: none). */
  indexOf(ifname: string): number;
  log: InstLog;
  logLimited: InstLimitedLog;
}

export class Driver {
  constructor(
    private readonly io: VipIo,
    private readonly hooks: RuntimeHooks,
    private readonly announcer: Announcer,
    private readonly host: DriverHost,
    private readonly now: () => number,
  ) {}

  /** `now`: one clock reading shared by events that happen together (the instances' start, due timers). */
  feed(inst: Inst, ev: MachineEvent, now = this.now()): void {
    const r = step(inst.m, ev, now);
    inst.m = r.machine;
    this.execute(inst, r.actions, now);
    this.arm(inst);
  }

  private arm(inst: Inst): void {
    if (inst.timer !== null) clearTimeout(inst.timer);
    inst.timer = null;
    const d = nextDeadline(inst.m);
    if (d === null) return;
    inst.timer = setTimeout(() => {
      inst.timer = null;
      this.fireDue(inst);
    }, Math.max(0, d - this.now()));
  }

  /**
   * Every instance whose deadline has come, stepped at one clock reading in configuration order, as
   * keepalived's timer thread does with its one time_now: instances started together that become master
   * together add their VIPs and send their first GARPs in the order they are written, whichever OS timer
   * the event loop ran first.
   */
  private fireDue(fired: Inst): void {
    const now = this.now();
    for (const inst of this.host.instances()) {
      const d = nextDeadline(inst.m);
      if ((inst !== fired && inst.timer === null) || d === null || d > now) continue;
      if (inst.timer !== null) clearTimeout(inst.timer);
      inst.timer = null;
      const late = now - d;
      inst.timerLateMs = Math.max(inst.timerLateMs, late);
      this.feed(inst, { type: 'timer' }, now);
      if (inst.m.state === 'MASTER' && late > 5) this.host.log('debug', inst, 'timer fired late', { lateMs: Math.round(late * 10) / 10 });
    }
    // The OS timer can come a fraction of a millisecond before our clock's deadline: wait out the rest.
    if (fired.timer === null) this.arm(fired);
  }

  /** `now`: the time the machine stepped at (its advert deadlines count from it). */
  private execute(inst: Inst, actions: Action[], now: number): void {
    const synced: ('MASTER' | 'BACKUP' | 'FAULT')[] = [];
    for (const a of actions) {
      switch (a.type) {
        case 'sendAdvert':
          sendAdvert(inst, a.priority, this.host.logLimited);
          this.announcer.extraIf(inst, now);
          break;
        case 'addVips':
          changeVips(this.io, inst, true, (n) => this.host.indexOf(n), (level, msg, fields) => { this.host.log(level, inst, msg, fields); });
          break;
        case 'removeVips':
          inst.extraIfAt = null;
          this.announcer.cancel(inst);
          changeVips(this.io, inst, false, (n) => this.host.indexOf(n), (level, msg, fields) => { this.host.log(level, inst, msg, fields); });
          break;
        case 'garp':
          // keepalived arms garp_extra_if when the instance becomes master: the Nth advert after is due then.
          inst.extraIfAt = now + inst.o.garp.extraIfMs;
          this.announcer.becameMaster(inst);
          break;
        case 'lowerPriorityAdvert':
          inst.lowerPriorityAdverts++;
          this.host.logLimited('info', inst, `received advert with lower priority ${a.priority}, ours ${inst.m.priority}${inst.o.lowerPrioNoAdvert ? '' : ', forcing new election'}`, 'lower-priority', a.from);
          this.announcer.lowerPriority(inst);
          this.hooks.masterRxLowerPri?.(inst.o.name, inst.m.priority);
          // keepalived refreshes the other members of the sync group too: they hold VIPs the same
          // split brain moved.
          if (inst.o.group !== undefined) {
            for (const other of this.host.instances()) if (other !== inst && other.o.group === inst.o.group) this.announcer.lowerPriority(other);
          }
          break;
        case 'transition': {
          const e: TransitionEvent = { instance: inst.o.name, from: a.from, to: a.to, priority: inst.m.priority, reason: a.reason, at: Date.now() };
          if (inst.o.group !== undefined) e.group = inst.o.group;
          inst.last = e;
          this.host.log(a.to === 'FAULT' ? 'warn' : 'info', inst, `Entering ${a.to} STATE (${a.reason})`, { from: a.from, priority: e.priority, ...(a.to === 'FAULT' ? { faultReasons: inst.faultReasons } : {}) });
          this.hooks.transition(e);
          if (a.to !== 'INIT') synced.push(a.to);
          break;
        }
      }
    }
    // Sync group: the other members follow (keepalived vrrp_sync_group).
    if (inst.o.group !== undefined && this.host.syncFollows()) {
      for (const s of synced) {
        for (const other of this.host.instances()) {
          if (other !== inst && other.o.group === inst.o.group && other.m.state !== s) this.feed(other, { type: 'sync', state: s });
        }
      }
    }
  }
}
