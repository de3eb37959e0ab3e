// The contract between the director and every dataplane backend (ipvs, nftables, userspace).
// Desired types hold identity + configuration only; Observed types add what the dataplane reports
// (connections, counters). Reconcilers compare identity + configuration, never counters.

export type Family = 4 | 6;
export type Protocol = 'tcp' | 'udp' | 'sctp';
export type ForwardMethod = 'nat' | 'dr' | 'tun';
export type Scheduler =
  | 'rr' | 'wrr' | 'lc' | 'wlc' | 'lblc' | 'lblcr' | 'dh' | 'sh' | 'sed' | 'nq' | 'fo' | 'ovf' | 'mh' | 'twos';
export const SCHEDULERS: readonly Scheduler[] = [
  'rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh', 'twos',
];
/** sh-port/mh-port = IP_VS_SVC_F_SCHED2, sh-fallback/mh-fallback = IP_VS_SVC_F_SCHED1. */
export type SchedulerFlag = 'sh-port' | 'sh-fallback' | 'mh-port' | 'mh-fallback';
export type TunnelType = 'ipip' | 'gue' | 'gre';
export type TunnelChecksum = 'none' | 'csum' | 'remcsum';

export interface TunnelSpec {
  type: TunnelType;
  /** UDP port for gue. */
  port?: number;
  checksum?: TunnelChecksum;
}

export interface RealServerSpec {
  /** Canonical "address:port" ("[v6]:port" for IPv6). */
  id: string;
  address: string;
  port: number;
  /** 0 quiesces the server: no new connections, existing ones continue. */
  weight: number;
  method: ForwardMethod;
  tunnel?: TunnelSpec;
  /** Connection thresholds (0 = none), IPVS's -x / -y. */
  upperThreshold?: number;
  lowerThreshold?: number;
}

export interface PersistenceSpec {
  timeoutSec: number;
  /** IPv4 dotted netmask, or an IPv6 prefix length as a number string ("128"). */
  netmask: string;
  /** IPVS persistence engine (keepalived persistence_engine), e.g. "sip": persistence by SIP Call-ID. */
  engine?: string;
}

export interface ServiceSpec {
  /** Canonical key: "tcp:10.0.0.1:80", "udp:[fd00::1]:53", "fwmark:4:7". */
  id: string;
  family: Family;
  /** For fwmark services the kernel treats the protocol as tcp. */
  protocol: Protocol;
  address?: string;
  port?: number;
  fwmark?: number;
  scheduler: Scheduler;
  schedulerFlags?: SchedulerFlag[];
  persistence?: PersistenceSpec;
  onePacket?: boolean;
  realServers: RealServerSpec[];
  /**
   * The dataplane may already hold this service, created by something else (keepalived, an operator).
   * lvsd leaves such a service alone unless this is true; then it adopts it and owns it from then on.
   */
  takeOver?: boolean;
}

export interface DesiredTable {
  services: ServiceSpec[];
}

export interface Counters {
  conns: number;
  inPackets: number;
  outPackets: number;
  inBytes: number;
  outBytes: number;
  /** Rates as the dataplane estimates them (per second). */
  cps: number;
  inPps: number;
  outPps: number;
  inBps: number;
  outBps: number;
}

export interface ObservedRealServer extends RealServerSpec {
  activeConns: number;
  inactiveConns: number;
  persistConns: number;
  counters?: Counters;
}

export interface ObservedService extends Omit<ServiceSpec, 'realServers'> {
  realServers: ObservedRealServer[];
  counters?: Counters;
}

export interface ObservedTable {
  services: ObservedService[];
}

export interface ApplyReport {
  /** How many add/change/delete operations reached the dataplane. */
  operations: number;
  /** Entries found changed or missing behind lvsd's back, restored by this apply. */
  drift: string[];
  durationMs: number;
  /** Desired services the dataplane already holds but lvsd does not own (left alone; see ServiceSpec.takeOver). */
  conflicts?: string[];
  /** Operations the dataplane refused, with the reason (the rest of the apply still went through). */
  failures?: string[];
}

/**
 * The changed services: which services of a desired table may differ from `since`, the table handed to
 * the previous apply() — by id, with the new spec (undefined: the service left). Every service not named
 * is in both tables as the very same ServiceSpec object. A backend whose last apply was of `since` may plan
 * from these services alone instead of walking the table; without it, or when `since` is not the table the
 * backend last applied (a failed apply, a resync, a caller that does not know), it walks the whole table.
 * Either way the dataplane ends up the same: this says where to look, never what to hold.
 */
export interface ChangedServices {
  since: DesiredTable;
  services: ReadonlyMap<string, ServiceSpec | undefined>;
}

export type DataplaneKind = 'ipvs' | 'nftables' | 'userspace';

export interface Dataplane {
  readonly kind: DataplaneKind;
  /**
   * Makes the dataplane hold exactly `desired` (for what it owns), changing only what differs.
   * A ServiceSpec handed to apply() is immutable from then on (treat it as frozen, its realServers too):
   * a backend may keep the object and take the same object in a later table as the same service without
   * comparing it. A changed service is a new object; handing the unchanged ones again as the very same
   * objects is what makes a change cost what it changes rather than what the table holds.
   */
  apply(desired: DesiredTable, changed?: ChangedServices): Promise<ApplyReport>;
  /** What the dataplane holds now, with connection counts and counters where it has them. */
  observe(): Promise<ObservedTable>;
  /** Releases sockets and processes; leaves the programmed state in place (reconcile, never flush). */
  close(): Promise<void>;
}

/** Thrown when a backend cannot do what the desired table asks (e.g. DR on nftables). */
export class UnsupportedByDataplane extends Error {
  constructor(
    readonly dataplane: DataplaneKind,
    readonly object: string,
    reason: string,
  ) {
    super(`${dataplane}: ${object}: ${reason}`);
    this.name = 'UnsupportedByDataplane';
  }
}
