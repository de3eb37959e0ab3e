// The VRRP state machine of one virtual router, as a pure step function:
//   step(machine, event, now) → { machine, actions }
// Timers are data (absolute deadlines in ms on the caller's monotonic clock); the runtime arms one
// OS timer for nextDeadline() and feeds { type: 'timer' } when it fires. Every rule below names the
// paragraph of RFC 5798 §6.4 it implements (RFC 3768 §6.4 says the same for v2).

import type { VrrpState } from './state.js';

export type { VrrpState };

/** Priority of the address owner, and the one a master sends when it stops (RFC 5798 §5.2.4). */
export const PRIORITY_OWNER = 255;
export const PRIORITY_STOP = 0;

export interface MachineConfig {
  version: 2 | 3;
  /** Our Advertisement_Interval in centiseconds (v2: a multiple of 100). */
  intervalCs: number;
  /** false = keepalived's nopreempt. */
  preempt: boolean;
  /** keepalived's preempt_delay: a lower-priority master is tolerated this long before we preempt it. */
  preemptDelayMs: number;
  /** Our primary address (the source of our adverts), for the equal-priority tie-break. */
  primaryAddress: Uint8Array;
  /**
   * keepalived's lower_prio_no_advert: a master that hears a lower-priority advert does not answer it
   * with an advert of its own (and keeps its advert cadence). Default false: it answers at once.
   */
  lowerPrioNoAdvert?: boolean;
  /** keepalived's higher_prio_send_advert: a master that hears a better advert sends one of its own before it steps down. Default false. */
  higherPrioSendAdvert?: boolean;
  /** keepalived's down_timer_adverts: adverts missed before Master_Down (default 3, the RFC's). */
  downTimerAdverts?: number;
}

export interface Machine {
  readonly config: MachineConfig;
  readonly state: VrrpState;
  /** Effective priority (configured ± tracking), 1..255. */
  readonly priority: number;
  /** Master_Adver_Interval in cs: ours until a v3 master teaches us theirs. */
  readonly masterAdverIntervalCs: number;
  /** Deadlines (ms) or null when the timer is not running. */
  readonly adverTimer: number | null;
  readonly masterDownTimer: number | null;
  /** When a lower-priority master may be preempted (preempt_delay running), else null. */
  readonly preemptAt: number | null;
  /** Tracking asks for FAULT. */
  readonly fault: boolean;
  /** The master we last heard (address bytes, priority), for status and logs. */
  readonly master: { address: Uint8Array; priority: number } | null;
  /**
   * keepalived's vrrp_startup_delay: until then a Backup's Master_Down_Timer counts from this time
   * instead of now (adverts are still heard), and an address owner waits in INIT. null = no delay.
   */
  readonly holdUntil: number | null;
}

export type MachineEvent =
  /** holdUntil: the end of the start-up delay (vrrp_startup_delay), if any. */
  | { type: 'startup'; holdUntil?: number }
  | { type: 'shutdown' }
  | { type: 'timer' }
  | { type: 'advert'; from: Uint8Array; priority: number; intervalCs: number }
  | { type: 'setPriority'; priority: number }
  | { type: 'setFault'; fault: boolean }
  /** A sync group moves this member along with another one. */
  | { type: 'sync'; state: 'MASTER' | 'BACKUP' | 'FAULT' };

export type Action =
  | { type: 'sendAdvert'; priority: number }
  | { type: 'addVips' }
  | { type: 'removeVips' }
  /** Gratuitous ARP / unsolicited NA for every VIP (first burst; the runtime repeats per garp settings). */
  | { type: 'garp' }
  /**
   * We are master and heard a master of lower priority (the other side of a healed partition):
   * refresh every ARP cache / neighbour table (keepalived's garp_lower_prio_repeat now and again after
   * garp_lower_prio_delay; the runtime owns those counts and delays) and say who it was.
   */
  | { type: 'lowerPriorityAdvert'; from: Uint8Array; priority: number }
  | { type: 'transition'; from: VrrpState; to: VrrpState; reason: string };

export interface StepResult {
  machine: Machine;
  actions: Action[];
}

export function createMachine(config: MachineConfig, priority: number): Machine {
  if (priority < 1 || priority > 255) throw new RangeError(`priority ${priority} not in 1..255`);
  return {
    config,
    state: 'INIT',
    priority,
    masterAdverIntervalCs: config.intervalCs,
    adverTimer: null,
    masterDownTimer: null,
    preemptAt: null,
    fault: false,
    master: null,
    holdUntil: null,
  };
}

/** Skew_Time = ((256 − Priority) × Master_Adver_Interval) / 256, in ms. */
export function skewTimeMs(priority: number, masterAdverIntervalCs: number): number {
  return ((256 - priority) * masterAdverIntervalCs * 10) / 256;
}

/** Master_Down_Interval = 3 × Master_Adver_Interval + Skew_Time, in ms (keepalived's down_timer_adverts replaces the 3). */
export function masterDownIntervalMs(priority: number, masterAdverIntervalCs: number, adverts = 3): number {
  return adverts * masterAdverIntervalCs * 10 + skewTimeMs(priority, masterAdverIntervalCs);
}

/** The earliest running deadline, or null: the runtime sleeps until then. */
export function nextDeadline(m: Machine): number | null {
  const ts = [m.adverTimer, m.masterDownTimer, m.state === 'INIT' ? m.holdUntil : null].filter((t): t is number => t !== null);
  return ts.length === 0 ? null : Math.min(...ts);
}

function cmpBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

class Step {
  m: Machine;
  readonly actions: Action[] = [];
  constructor(
    m: Machine,
    readonly now: number,
  ) {
    this.m = m;
  }
  set(patch: Partial<Omit<Machine, 'config'>>): void {
    this.m = { ...this.m, ...patch };
  }
  intervalMs(): number {
    return this.m.config.intervalCs * 10;
  }
  mdi(): number {
    return masterDownIntervalMs(this.m.priority, this.m.masterAdverIntervalCs, this.m.config.downTimerAdverts);
  }
  /** A Master_Down_Timer deadline `ms` from now, or from the end of the start-up delay while it runs (keepalived). */
  downAt(ms: number): number {
    const h = this.m.holdUntil;
    return (h !== null && this.now < h ? h : this.now) + ms;
  }
  go(to: VrrpState, reason: string): void {
    if (this.m.state !== to) this.actions.push({ type: 'transition', from: this.m.state, to, reason });
    this.set({ state: to });
  }
  /** §6.4.1/§6.4.2 "transition to Master": advert, VIPs, GARP, Adver_Timer. */
  becomeMaster(reason: string): void {
    this.actions.push({ type: 'sendAdvert', priority: this.m.priority }, { type: 'addVips' }, { type: 'garp' });
    this.set({ adverTimer: this.now + this.intervalMs(), masterDownTimer: null, preemptAt: null, master: null });
    this.go('MASTER', reason);
  }
  /** §6.4.1/§6.4.3 "transition to Backup": Master_Down_Timer = Master_Down_Interval. */
  becomeBackup(reason: string, masterAdverIntervalCs = this.m.masterAdverIntervalCs): void {
    const wasMaster = this.m.state === 'MASTER';
    this.set({ masterAdverIntervalCs, adverTimer: null });
    this.set({ masterDownTimer: this.downAt(this.mdi()) });
    if (wasMaster) this.actions.push({ type: 'removeVips' });
    this.go('BACKUP', reason);
  }
  becomeFault(reason: string): void {
    // Leaving Master for Fault, say so with a priority-0 advert so a backup takes over after Skew_Time
    // instead of Master_Down_Interval (keepalived does the same).
    if (this.m.state === 'MASTER') this.actions.push({ type: 'sendAdvert', priority: PRIORITY_STOP }, { type: 'removeVips' });
    this.set({ adverTimer: null, masterDownTimer: null, preemptAt: null });
    this.go('FAULT', reason);
  }
  /** §6.4.1 Initialize: owner → Master, everyone else → Backup. */
  start(reason: string): void {
    if (this.m.fault) this.becomeFault('tracking reports a fault');
    else if (this.m.priority === PRIORITY_OWNER) this.becomeMaster(`${reason}, priority 255 (address owner)`);
    else this.becomeBackup(reason, this.m.config.intervalCs);
  }
}

export function step(machine: Machine, ev: MachineEvent, now: number): StepResult {
  const s = new Step(machine, now);
  const m = (): Machine => s.m;
  switch (ev.type) {
    case 'startup':
      if (m().state !== 'INIT') break;
      if (ev.holdUntil !== undefined && ev.holdUntil > now) s.set({ holdUntil: ev.holdUntil });
      // vrrp_startup_delay holds an address owner in INIT (measured: keepalived's owner enters MASTER
      // when the delay ends); everyone else starts as Backup at once and only its timer is held.
      if (m().priority === PRIORITY_OWNER && !m().fault && m().holdUntil !== null) break;
      s.start('startup');
      break;

    case 'shutdown':
      // §6.4.2/§6.4.3 Shutdown: cancel timers; a Master sends an advert with priority 0.
      if (m().state === 'MASTER') s.actions.push({ type: 'sendAdvert', priority: PRIORITY_STOP }, { type: 'removeVips' });
      s.set({ adverTimer: null, masterDownTimer: null, preemptAt: null, holdUntil: null });
      s.go('INIT', 'shutdown');
      break;

    case 'timer': {
      const st = m().state;
      if (st === 'INIT' && m().holdUntil !== null && now >= (m().holdUntil ?? 0)) {
        s.start('startup delay over');
      } else if (st === 'BACKUP' && m().masterDownTimer !== null && now >= (m().masterDownTimer ?? 0)) {
        // §6.4.2 (3): Master_Down_Timer fires → Master.
        s.becomeMaster('master down timer expired');
      } else if (st === 'MASTER' && m().adverTimer !== null && now >= (m().adverTimer ?? 0)) {
        // §6.4.3 (3): Adver_Timer fires → advert, reset. Keep the cadence unless we fell a whole interval behind.
        s.actions.push({ type: 'sendAdvert', priority: m().priority });
        const next = (m().adverTimer ?? now) + s.intervalMs();
        s.set({ adverTimer: next > now ? next : now + s.intervalMs() });
      }
      break;
    }

    case 'advert': {
      const st = m().state;
      if (st === 'BACKUP') {
        if (ev.priority === PRIORITY_STOP) {
          // §6.4.2 (5): the master is leaving: Master_Down_Timer = Skew_Time.
          s.set({ masterDownTimer: s.downAt(skewTimeMs(m().priority, m().masterAdverIntervalCs)), master: null });
          break;
        }
        const lower = ev.priority < m().priority;
        let tolerate = !m().config.preempt || !lower;
        if (!tolerate && m().config.preemptDelayMs > 0) {
          // preempt_delay: a lower-priority master keeps its role until the delay has run out.
          const at = m().preemptAt ?? now + m().config.preemptDelayMs;
          s.set({ preemptAt: at });
          tolerate = now < at;
        }
        if (tolerate) {
          // §6.4.2 (6): reset Master_Down_Timer; v3 learns the master's interval (§6.4.2 (6)(ii)(a)).
          const mai = m().config.version === 3 ? ev.intervalCs : m().masterAdverIntervalCs;
          s.set({ masterAdverIntervalCs: mai, master: { address: ev.from, priority: ev.priority } });
          s.set({ masterDownTimer: s.downAt(s.mdi()) });
          if (!lower) s.set({ preemptAt: null });
        }
        // else: §6.4.2 (6)(iii) discard: our Master_Down_Timer will run out and we preempt.
      } else if (st === 'MASTER') {
        if (ev.priority === PRIORITY_STOP) {
          // §6.4.3 (5): another router is stopping: re-assert at once.
          s.actions.push({ type: 'sendAdvert', priority: m().priority });
          s.set({ adverTimer: now + s.intervalMs() });
        } else if (ev.priority > m().priority || (ev.priority === m().priority && cmpBytes(ev.from, m().config.primaryAddress) > 0)) {
          // §6.4.3 (6): higher priority, or equal priority and a higher primary address → Backup.
          // higher_prio_send_advert: say our own priority once more on the way out (keepalived).
          if (m().config.higherPrioSendAdvert === true) s.actions.push({ type: 'sendAdvert', priority: m().priority });
          const mai = m().config.version === 3 ? ev.intervalCs : m().masterAdverIntervalCs;
          s.set({ master: { address: ev.from, priority: ev.priority } });
          s.becomeBackup(ev.priority > m().priority ? `higher priority ${ev.priority} advert` : 'equal priority advert from a higher address', mai);
        } else if (ev.priority < m().priority || cmpBytes(ev.from, m().config.primaryAddress) < 0) {
          // Lower priority, or equal priority from a lower address. §6.4.3 (7) says discard; keepalived
          // (and so lvsd) answers instead: a lower-priority master is the other half of a split brain.
          // Our advert at once makes it step down now rather than at our next tick, and the GARPs move
          // every ARP cache back to us. The answer restarts our Adver_Timer, as keepalived's does
          // (measured: its next advert comes one interval after the answer).
          if (m().config.lowerPrioNoAdvert !== true) {
            s.actions.push({ type: 'sendAdvert', priority: m().priority });
            s.set({ adverTimer: now + s.intervalMs() });
          }
          s.actions.push({ type: 'lowerPriorityAdvert', from: ev.from, priority: ev.priority });
        }
        // else: equal priority from our own address (a looped-back copy): discard.
      }
      break;
    }

    case 'setPriority': {
      const p = Math.max(1, Math.min(255, Math.round(ev.priority)));
      if (p === m().priority) break;
      s.set({ priority: p });
      // A master tells the others its new priority right away so a better backup can preempt now.
      if (m().state === 'MASTER') {
        s.actions.push({ type: 'sendAdvert', priority: p });
        s.set({ adverTimer: now + s.intervalMs() });
      }
      break;
    }

    case 'setFault':
      if (ev.fault === m().fault) break;
      s.set({ fault: ev.fault });
      if (ev.fault && (m().state === 'MASTER' || m().state === 'BACKUP')) s.becomeFault('tracking reports a fault');
      else if (!ev.fault && m().state === 'FAULT') s.start('fault cleared');
      break;

    case 'sync':
      if (m().state === 'INIT') break;
      if (ev.state === 'FAULT') {
        if (m().state !== 'FAULT') s.becomeFault('sync group member in FAULT');
      } else if (m().state === 'FAULT') {
        if (!m().fault) s.start('sync group member left FAULT');
      } else if (ev.state === 'MASTER' && m().state === 'BACKUP') {
        s.becomeMaster('sync group member became MASTER');
      } else if (ev.state === 'BACKUP' && m().state === 'MASTER') {
        s.becomeBackup('sync group member became BACKUP');
      }
      break;
  }
  return { machine: s.m, actions: s.actions };
}
