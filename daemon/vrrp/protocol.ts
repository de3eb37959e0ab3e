// Messages between the facade in lvsd's main process (index.ts) and the VRRP engine process
// (engine-process.ts), over the IPC channel of channel.ts.
import type { VrrpState } from './machine.js';
import type { VrrpOptions } from './options.js';

export interface TransitionEvent {
  instance: string;
  /** The sync group the instance belongs to, if any. */
  group?: string;
  from: VrrpState;
  to: VrrpState;
  /** Effective priority at the transition. */
  priority: number;
  reason: string;
  /** Wall clock, ms since the epoch. */
  at: number;
}

export interface InstanceSnapshot {
  name: string;
  group?: string;
  interface: string;
  vrid: number;
  version: 2 | 3;
  family: 4 | 6;
  state: VrrpState;
  basePriority: number;
  priority: number;
  /** Why it is in FAULT (tracking), empty otherwise. */
  faultReasons: string[];
  advertIntervalMs: number;
  /** The interval learned from the current master (v3), ms. */
  masterAdvertIntervalMs: number;
  /** Source address of our adverts (null when the interface has none: FAULT). */
  sourceAddress: string | null;
  masterAddress: string | null;
  masterPriority: number | null;
  vips: string[];
  /** keepalived virtual_ipaddress_excluded: held with the VIPs, not advertised. */
  excludedVips: string[];
  vipsHeld: boolean;
  counters: {
    advertsSent: number;
    advertsReceived: number;
    sendErrors: number;
    drops: Record<string, number>;
    /** Worst lateness of the instance's timer (advert / master down) since start, ms. */
    maxTimerLateMs: number;
    /** Adverts of a lower-priority master heard while MASTER (each answered, keepalived alike): split brains seen. */
    lowerPriorityAdverts: number;
  };
  lastTransition: TransitionEvent | null;
}

export interface VrrpSnapshot {
  instances: InstanceSnapshot[];
  /** Event-loop delay of the VRRP engine process, ms (p99 and max since start). */
  loopDelayMs: { p99: number; max: number };
  at: number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export type ToWorker =
  /** The first message: the options to run (already validated by the facade). */
  | { type: 'start'; options: VrrpOptions }
  | { type: 'stop' }
  /** Apply new options (already validated by the facade) to the running instances. */
  | { type: 'reconfigure'; id: number; options: VrrpOptions }
  | { type: 'snapshot'; id: number }
  /** `disabled`: the script cannot run at all (keepalived: "Disabling track script … since not found/accessible"). */
  | { type: 'track'; kind: 'script' | 'file' | 'process'; name: string; ok: boolean; value?: number; disabled?: boolean }
  | { type: 'priorityOffset'; instance: string; offset: number }
  | { type: 'forceFault'; instance: string; fault: boolean };

export type FromWorker =
  | { type: 'ready'; snapshot: VrrpSnapshot }
  | { type: 'transition'; event: TransitionEvent }
  /** A MASTER heard a lower-priority advert (keepalived MASTER_RX_LOWER_PRI); `priority` is ours. */
  | { type: 'rxLowerPri'; instance: string; priority: number }
  /** A new MASTER's VIPs are up and its first gratuitous ARPs / NAs sent (keepalived switches its sync daemon then). */
  | { type: 'announced'; instance: string }
  | { type: 'log'; level: LogLevel; msg: string; fields: Record<string, unknown> }
  | { type: 'snapshot'; id: number; snapshot: VrrpSnapshot }
  | { type: 'stopped' }
  | { type: 'reconfigured'; id: number; snapshot: VrrpSnapshot; summary?: ReconfigureSummary; error?: string }
  | { type: 'fatal'; message: string };

/** What a reconfigure did, by instance name. */
export interface ReconfigureSummary {
  unchanged: string[];
  /** Changed in place (priority, tracking weights, notify, garp, sync group). */
  updated: string[];
  /** Stopped and started again (any other change). */
  restarted: string[];
  added: string[];
  removed: string[];
}
