// The director's state as everyone outside it sees it: the API, the panel, /metrics and `lvsd status`.
// One source for operators (DESIGN.md): the Director builds a DirectorSnapshot on demand and publishes
// DirectorEvents on its bus. Plain JSON data only (no Maps, no Dates) so it crosses worker threads,
// sockets and JSON serialisers unchanged. Times are ISO-8601 strings in UTC.
import type { Counters, DataplaneKind, Protocol, ForwardMethod, Scheduler } from '../dataplane/types.js';
import type { Override } from '../state/schema.js';
import type { OverrideTarget } from '../state/target-key.js';
import { VRRP_STATES, type VrrpState } from '../vrrp/state.js';

export type { Override, OverrideTarget, VrrpState };
export { VRRP_STATES };

export interface VrrpTransition {
  at: string;
  from: VrrpState;
  to: VrrpState;
  /** Why, in keepalived's words where they exist: "master down timer", "higher priority advert from 10.0.0.2", … */
  reason: string;
}

export interface AdvertCounters {
  sent: number;
  received: number;
  /** Dropped adverts by reason: "auth", "ttl", "vrid", "checksum", "version", "interval", "addresses", … */
  dropped: Record<string, number>;
}

/**
 * One VRRP instance as operators see it (the API, the panel, `lvsd status`). The engine's own report of it is
 * vrrp/protocol.ts InstanceSnapshot, its internal shape; snapshot-builder.ts is the one translator between them.
 */
export interface VrrpInstanceSnapshot {
  name: string;
  interface: string;
  vrid: number;
  version: 2 | 3;
  family: 4 | 6;
  state: VrrpState;
  /** Configured priority. */
  basePriority: number;
  /** After tracking weights and operator failover. */
  effectivePriority: number;
  /** Address of the current master as last heard (ours when MASTER), null when unknown. */
  masterAddress: string | null;
  vips: string[];
  /** Peers heard on this instance (address and last advertised priority). */
  peers: { address: string; priority: number; lastSeen: string }[];
  /** Newest last, bounded (the director keeps the last 50 or so). */
  transitions: VrrpTransition[];
  adverts: AdvertCounters;
  /** Operator-forced failover in effect, if any. */
  forced: 'lower-priority' | 'maintenance' | null;
  syncGroup: string | null;
}

/** The dataplane's counters and rates, as the dataplane reports them. */
export type RateCounters = Counters;

export interface HealthSnapshot {
  /** 'unknown' before the first result, or when health checking is off. */
  status: 'up' | 'down' | 'unknown';
  checker: string;
  /** Since when the status holds. */
  since: string | null;
  lastCheck: {
    at: string;
    ok: boolean;
    latencyMs: number;
    /** Human text of the last result: "HTTP 200", "connect ECONNREFUSED", … */
    result: string;
    error: string | null;
  } | null;
}

export interface RealServerSnapshot {
  /** Canonical "address:port" (see dataplane/types.ts). */
  id: string;
  address: string;
  port: number;
  method: ForwardMethod;
  weight: {
    configured: number;
    /** What the dataplane holds now; null when the server is out of the table. */
    effective: number | null;
  };
  health: HealthSnapshot;
  override: Override | null;
  connections: { active: number; inactive: number };
  counters: RateCounters | null;
}

export interface VirtualServerSnapshot {
  /** Canonical key "tcp:10.0.0.1:80", "fwmark:4:7". */
  id: string;
  name: string;
  protocol: Protocol;
  address: string | null;
  port: number | null;
  fwmark: number | null;
  method: ForwardMethod;
  scheduler: Scheduler;
  quorum: { required: number; liveWeight: number; up: boolean; sorryServerActive: boolean };
  /** haSuspend and this director does not hold the address: the real servers keep their last verdicts, unprobed. */
  checksSuspended: boolean;
  override: Override | null;
  counters: RateCounters | null;
  realServers: RealServerSnapshot[];
}

export interface DirectorSnapshot {
  node: string;
  version: string;
  startedAt: string;
  /** When this snapshot was taken. */
  at: string;
  dataplane: { kind: DataplaneKind | 'none'; reason: string };
  vrrp: VrrpInstanceSnapshot[];
  /** Why VRRP is not running (no raw sockets, the engine process died), else null; `vrrp` then holds the last roles it reported. */
  vrrpProblem: string | null;
  virtualServices: VirtualServerSnapshot[];
  /** Present when the config has a bgp section. */
  bgp?: BgpSnapshot;
  config: {
    path: string;
    /** sha256 of the file text, hex. */
    hash: string;
    loadedAt: string;
    reloads: number;
    /** `restartNeeded`: settings that reload changed in the file but take effect at the next restart. */
    lastReload: { at: string; ok: boolean; message: string; by: string; restartNeeded: string[] } | null;
  };
}

/** The BGP speaker lvsd drives (BIRD): its sessions and lvsd's announcements. */
export interface BgpSnapshot {
  speaker: 'bird';
  socket: string;
  /** Why lvsd cannot drive BIRD right now (its socket missing, a command refused), else null. */
  problem: string | null;
  /** BIRD's BGP sessions as `show protocols` lists them. */
  sessions: { name: string; state: string; since: string; info: string }[];
  /** `withdrawnBy`: the operator who withdrew the prefix from this director (until a restore; kept across restarts), else null. */
  announcements: { prefix: string; protocol: string; announced: boolean; reason: string; withdrawnBy: string | null }[];
}

// ---- events -------------------------------------------------------------------------------------

interface EventBase {
  at: string;
}

export type DirectorEvent =
  | (EventBase & { type: 'vrrp.transition'; instance: string; from: VrrpState; to: VrrpState; reason: string })
  | (EventBase & { type: 'vrrp.priority'; instance: string; priority: number; reason: string })
  | (EventBase & {
      type: 'health.result';
      service: string;
      realServer: string;
      ok: boolean;
      latencyMs: number;
      result: string;
      error: string | null;
    })
  | (EventBase & { type: 'health.change'; service: string; realServer: string; status: 'up' | 'down'; reason: string })
  /** A live weight change of an up real server: agent percentage or drain, misc_dynamic exit code, reload. */
  | (EventBase & { type: 'health.weight'; service: string; realServer: string; weight: number; previous: number; reason: string })
  | (EventBase & { type: 'quorum.change'; service: string; up: boolean; aliveWeight?: number })
  | (EventBase & { type: 'override'; target: OverrideTarget; override: Override | null; by: string })
  | (EventBase & { type: 'dataplane.apply'; operations: number; drift: string[]; durationMs: number })
  | (EventBase & { type: 'dataplane.error'; message: string })
  | (EventBase & { type: 'bgp.announcement'; prefix: string; announced: boolean; reason: string })
  | (EventBase & { type: 'bgp.force'; prefix: string; how: BgpForceHow; by: string })
  | (EventBase & { type: 'config.reload'; ok: boolean; hash: string; by: string; message: string })
  | (EventBase & { type: 'failover'; instance: string; how: FailoverHow; by: string })
  /** One e-mail alert: sent, failed at the SMTP server, or dropped because the queue was full (mail-supervisor.ts). */
  | (EventBase & { type: 'alert.mail'; outcome: 'sent' | 'failed' | 'dropped'; subject: string; error?: string });

export type DirectorEventType = DirectorEvent['type'];

/** How an operator forces a failover: lower our priority, go to FAULT-like maintenance, or undo. */
export type FailoverHow = 'lower-priority' | 'maintenance' | 'restore';

/** An operator's withdraw of one announced prefix from this director, or its restore. */
export type BgpForceHow = 'withdraw' | 'restore';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as a part of the director raises it; the bus stamps `at`. */
export type DirectorEventInput = DistributiveOmit<DirectorEvent, 'at'>;
