// A master's gratuitous ARPs / unsolicited NAs (keepalived's vrrp_garp_*): the first burst once its VIPs
// are up, the second after garp_master_delay, the periodic refresh, the answers to lower-priority adverts
// and garp_extra_if; each goes through its link's GARP queue (garp_group, garp-queue-timer.ts). The
// per-instance timers live on the instance (inst.garpTimers) so a leaving master cancels them at once.
import { familyOf, parseIP } from '../net/addr.js';
import type { GarpGroupOptions } from './garp-queue.js';
import { GarpQueueTimer } from './garp-queue-timer.js';
import { held, type Inst } from './instance.js';
import type { NormalizedInstance, NormalizedVip } from './options.js';
import type { LogLevel } from './protocol.js';

export interface AnnouncerIo {
  /** One GARP (IPv4) / unsolicited NA (IPv6) for `vip` on the interface. */
  announce(ifname: string, ifindex: number, vip: Buffer): void;
  /** The index of a link by name (0: none). */
  indexOf(ifname: string): number;
  logLimited(level: LogLevel, inst: Inst, msg: string, reason: string, peer: Uint8Array): void;
  /** The instance's first burst is out (its VIPs up before it). */
  announced(instance: string): void;
}

export class Announcer {
  private readonly queue: GarpQueueTimer;
  /** Configuration order of the instances (the queue sends pending addresses in it). */
  private rank = new Map<string, number>();
  /**
   * The first bursts, in the order the instances became master: keepalived adds an instance's VIPs and
   * sends its burst before the next instance's transition, so one with more VIPs to add does not let a
   * later one take the GARP queue first.
   */
  private burstChain: Promise<void> = Promise.resolve();

  constructor(
    groups: readonly GarpGroupOptions[],
    instances: readonly NormalizedInstance[],
    private readonly io: AnnouncerIo,
    now: () => number,
  ) {
    this.queue = new GarpQueueTimer(groups, now);
    this.rank = new Map(instances.map((o, i) => [o.name, i]));
  }

  /** New options: the instances' order and the garp_group queues. */
  reconfigure(groups: readonly GarpGroupOptions[], instances: readonly NormalizedInstance[]): void {
    this.rank = new Map(instances.map((o, i) => [o.name, i]));
    this.queue.regroup(groups);
  }

  close(): void {
    this.queue.close();
  }

  /** Every pending announcement of the instance dropped (it leaves MASTER, stops or is set up again). */
  cancel(inst: Inst): void {
    for (const t of inst.garpTimers) clearTimeout(t);
    inst.garpTimers = [];
    this.queue.drop(inst.o.name);
  }

  /** First burst right after the VIPs are up, a second after masterDelay, then refreshes (keepalived's vrrp_garp_*). */
  becameMaster(inst: Inst): void {
    const g = inst.o.garp;
    const vipsUp = inst.vipChain;
    this.burstChain = this.burstChain.then(() => vipsUp).then(() => {
      // It may have left MASTER while earlier bursts went: its timers were cancelled then, arm none.
      if (inst.m.state !== 'MASTER') return;
      this.burst(inst, g.masterRepeat);
      this.io.announced(inst.o.name);
      if (g.masterDelayMs > 0) this.later(inst, g.masterDelayMs, () => { this.burst(inst, g.masterRepeat); });
      this.refresh(inst);
    }).catch(() => undefined); // a failed VIP change is logged where it happens; the next burst must not wait on it
  }

  /** vrrp_garp_lower_prio_repeat GARPs now and again after vrrp_garp_lower_prio_delay (each answer arms its own). */
  lowerPriority(inst: Inst): void {
    const g = inst.o.garp;
    if (g.lowerPrioRepeat === 0 || !inst.vipsHeld) return;
    this.burst(inst, g.lowerPrioRepeat);
    if (g.lowerPrioDelayMs > 0) this.later(inst, g.lowerPrioDelayMs, () => { this.burst(inst, g.lowerPrioRepeat); });
  }

  /**
   * garp_extra_if all: at a master's advert once extraIfMs has passed, one announcement on each interface
   * other than the instance's that holds a VIP, for the first VIP there (keepalived vrrp_send_vmac_update).
   */
  extraIf(inst: Inst, now: number): void {
    const ms = inst.o.garp.extraIfMs;
    if (ms <= 0 || inst.m.state !== 'MASTER' || !inst.vipsHeld || inst.extraIfAt === null || now < inst.extraIfAt) return;
    inst.extraIfAt = now + ms;
    const done = new Set([inst.o.interface, inst.o.vmac?.name]);
    for (const v of held(inst.o)) {
      if (done.has(v.dev)) continue;
      done.add(v.dev);
      this.announce(inst, v);
    }
  }

  /** vrrp_garp_master_refresh: re-announce every masterRefreshMs while master. */
  refresh(inst: Inst): void {
    const g = inst.o.garp;
    if (g.masterRefreshMs <= 0) return;
    const again = (): void => {
      this.burst(inst, g.masterRefreshRepeat);
      this.later(inst, g.masterRefreshMs, again);
    };
    this.later(inst, g.masterRefreshMs, again);
  }

  /** A GARP timer that leaves inst.garpTimers when it fires (a master answering adverts for hours arms many). */
  private later(inst: Inst, ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      const i = inst.garpTimers.indexOf(t);
      if (i >= 0) inst.garpTimers.splice(i, 1);
      fn();
    }, ms);
    inst.garpTimers.push(t);
  }

  private burst(inst: Inst, count: number): void {
    if (inst.m.state !== 'MASTER') return;
    const g = inst.o.garp;
    // GARPs (IPv4) are spaced by garp_interval, unsolicited NAs (IPv6) by gna_interval: two trains.
    const all = held(inst.o);
    // One gap for both: one train, each round walking every address in order (keepalived alike).
    if (g.intervalMs === g.naIntervalMs) {
      this.train(inst, all, count, g.intervalMs);
      return;
    }
    for (const [family, gap] of [[4, g.intervalMs], [6, g.naIntervalMs]] as const) {
      const list = all.filter((v) => (familyOf(v.address) ?? inst.o.family) === family);
      if (list.length > 0) this.train(inst, list, count, gap);
    }
  }

  private train(inst: Inst, list: NormalizedVip[], count: number, gapMs: number): void {
    const once = (): void => {
      if (inst.m.state !== 'MASTER') return;
      // keepalived announces the excluded addresses too (vrrp_send_link_update walks vip and evip).
      for (const v of list) this.announce(inst, v);
    };
    for (let i = 0; i < count; i++) {
      if (i === 0 || gapMs === 0) once();
      else this.later(inst, i * gapMs, once);
    }
  }

  /** One GARP / NA through the link's GARP queue (sent at once when it has none or it is free). */
  private announce(inst: Inst, v: NormalizedVip): void {
    const send = (): void => {
      if (inst.m.state !== 'MASTER') return;
      const dev = v.dev === inst.o.interface ? inst.ifindex : this.io.indexOf(v.dev);
      try {
        this.io.announce(v.dev, dev, parseIP(v.address));
      } catch (e) {
        this.io.logLimited('warn', inst, `gratuitous ARP/NA failed: ${e instanceof Error ? e.message : String(e)}`, 'garp', parseIP(v.address));
      }
    };
    // Its queue is its interface's, a VMAC's parent's for a VMAC (keepalived's base interface).
    const ifname = v.dev === inst.o.vmac?.name ? inst.o.vmac.parent : v.dev;
    const order = (this.rank.get(inst.o.name) ?? 0) * 65536 + held(inst.o).indexOf(v);
    this.queue.announce({ owner: inst.o.name, order, ifname, family: familyOf(v.address) ?? inst.o.family, id: `${v.dev} ${v.cidr}`, item: send });
  }
}
