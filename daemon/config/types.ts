// The normalised configuration every other part of lvsd consumes: defaults filled, durations in
// milliseconds (fields end in `Ms`), addresses parsed, canonical ids. Built by normalise.ts from a
// file that passed the schema and the semantic checks, so consumers need no further validation.
import type { VirtualRouteOptions, VirtualRuleOptions } from '../vrrp/virtual-routes.js';
import type { TrackProcessOptions } from '../vrrp/process-track.js';
import type { ForwardMethod, Protocol, Scheduler, SchedulerFlag, TunnelSpec } from '../dataplane/types.js';
import type { AddressOptions, AddressScope } from '../net/addr-request.js';

export type Family = 4 | 6;
export type DataplaneChoice = 'auto' | 'ipvs' | 'nftables' | 'userspace';

export interface Config {
  /** The file it was loaded from ("<inline>" for text). */
  source: string;
  node: { name: string; startupScript?: LifecycleScriptConfig; shutdownScript?: LifecycleScriptConfig };
  api: ApiConfig;
  stateFile: string;
  dataplane: DataplaneChoice;
  ipvs: IpvsConfig;
  nftables: { table: string; masquerade: boolean };
  userspace: { idleTimeoutMs: number; proxyProtocol: 'none' | 'v1' | 'v2' };
  vrrp: VrrpConfig;
  /** Absent: lvsd announces nothing over BGP. */
  bgp?: BgpConfig;
  /** Absent: lvsd sends no alerts of its own. */
  alerts?: AlertsConfig;
  /** Absent: the Cluster page shows this director alone. */
  cluster?: ClusterConfig;
  virtualServers: VirtualServer[];
}

export interface ClusterConfig {
  name: string;
  timeoutMs: number;
  peers: ClusterPeer[];
}

export interface ClusterPeer {
  name: string;
  /** Without a trailing slash: "https://lb2.example:9180". */
  url: string;
  tokenFile: string;
  acceptTokenSha256?: string;
  /** The peer may forward its operators' drain/enable and failover here (auth plugin, routes marked peerAction). */
  acceptActions: boolean;
  ca?: string;
  /** Upper case, colon-separated, as Node's X509Certificate.fingerprint256 prints it. */
  fingerprint?: string;
}

export interface AlertsConfig {
  email?: EmailAlertsConfig;
}

/** alerts.email, resolved: every switch is explicit, the per-object overrides keyed by instance name and virtual server id. */
export interface EmailAlertsConfig {
  to: string[];
  from: string;
  server: { host: string; port: number };
  connectTimeoutMs: number;
  helo?: string;
  vrrp: boolean;
  realServers: boolean;
  quorum: boolean;
  instances: Record<string, boolean>;
  virtualServers: Record<string, boolean>;
  queueSize: number;
}

export interface BgpConfig {
  speaker: 'bird';
  socket: string;
  configFile: string;
  configureTimeoutMs: number;
  drainOnStopMs: number;
  announce: BgpAnnouncement[];
}

export interface BgpAnnouncement {
  /** With its length always: "192.0.2.10/32". */
  prefix: string;
  /** Virtual server ids (canonical, as VirtualServer.id) that must all have quorum. */
  virtualServers: string[];
  communities: [number, number][];
}

export interface ApiConfig {
  /** As written, "127.0.0.1:9180". */
  listen: string;
  host: string;
  port: number;
  socket: string;
  /** Host header names the panel answers besides localhost and its own address (DNS rebinding guard). */
  allowedHosts: string[];
  tls?: { cert: string; key: string };
  /** The graphs drawn from this Prometheus (api/history-prometheus.ts). */
  prometheus?: { url: string; match: string };
}

export interface IpvsConfig {
  removal: 'graceful' | 'immediate';
  drainTimeoutMs: number;
  /** Absent = leave the kernel's value. */
  timeouts: { tcpMs?: number; tcpFinMs?: number; udpMs?: number };
  syncDaemon?: SyncDaemon;
}

/** ipvs.syncDaemon with its defaults (normalise.ts); the sysctls are net.ipv4.vs.sync_*. */
export interface SyncDaemon {
  interface: string;
  syncId: number;
  maxLen: number;
  mcastGroup: string;
  port: number;
  ttl: number;
  role: 'follow-vrrp' | 'both';
  /** sync_threshold: [threshold, thresholdPeriod]. */
  threshold: number;
  thresholdPeriod: number;
  /** sync_refresh_period, in ms (the kernel takes whole seconds). */
  refreshPeriodMs: number;
  persistMode: 'all' | 'templates';
  ports: number;
}

export interface Garp {
  masterDelayMs: number;
  masterRepeat: number;
  /** 0 = no periodic refresh. */
  masterRefreshMs: number;
  masterRefreshRepeat: number;
  intervalMs: number;
  /** Gap between unsolicited NAs (IPv6) of one burst. */
  naIntervalMs: number;
  /** keepalived garp_extra_if all: periodic GARP/NA on the other interfaces of the VIPs (0 = never). */
  extraIfMs: number;
  /** A master that hears a lower-priority master: GARPs now, and again lowerPrioDelayMs later (0 = none). */
  lowerPrioRepeat: number;
  lowerPrioDelayMs: number;
}

export interface VrrpScript {
  name: string;
  command: string;
  intervalMs: number;
  timeoutMs: number;
  rise: number;
  fall: number;
  weight: number;
  user?: string;
}

export interface Notify {
  master?: string;
  backup?: string;
  fault?: string;
  stop?: string;
  /** keepalived notify_deleted's script: run when a reload removes the instance (instances only). */
  deleted?: string;
  any?: string;
  /** keepalived notify_master_rx_lower_pri: run, without arguments, when a MASTER hears a lower-priority advert. */
  masterRxLowerPri?: string;
  /** Who runs each hook ("user" or "user:group"); absent: vrrp.scriptUser. */
  users?: Partial<Record<'master' | 'backup' | 'fault' | 'stop' | 'deleted' | 'any' | 'masterRxLowerPri', string>>;
}

/** keepalived's virtual_ipaddress options (label, broadcast, peer, …) are daemon/net/addr-request.ts's, which applies them. */
export interface Vip extends Omit<AddressOptions, 'scope'> {
  /** "192.0.2.10/24" — canonical CIDR (a bare address got its host prefix). */
  cidr: string;
  address: string;
  prefix: number;
  family: Family;
  /** The interface it goes on (the instance's unless overridden). */
  dev: string;
  scope: AddressScope;
}

export interface VrrpInstance {
  name: string;
  interface: string;
  virtualRouterId: number;
  priority: number;
  initialState: 'MASTER' | 'BACKUP';
  version: 2 | 3;
  /** The family of its VIPs (all VIPs of one instance share it). */
  family: Family;
  advertIntervalMs: number;
  preempt: boolean;
  preemptDelayMs: number;
  accept: boolean;
  authentication?: { type: 'PASS'; password: string };
  unicastSrcIp?: string;
  /** Empty = multicast (224.0.0.18 / ff02::12). */
  unicastPeers: string[];
  /** keepalived unicast_ttl: TTL / hop limit of unicast adverts (absent: 255 for IPv4, the system's for IPv6). */
  unicastTtl?: number;
  /** keepalived down_timer_adverts: adverts missed before a backup takes over (absent: 3, the RFC's). */
  downTimerAdverts?: number;
  /** keepalived old_unicast_checksum (absent: auto, keepalived's default). */
  oldUnicastChecksum?: 'auto' | 'always' | 'never';
  /** keepalived notify_deleted: a reload that removes the instance says DELETED, not FAULT (notify.deleted implies it: vrrp/options.ts). */
  notifyDeleted: boolean;
  /** keepalived dont_track_primary: the own interface going down is no FAULT. */
  dontTrackPrimary: boolean;
  /** keepalived promote_secondaries: promote_secondaries 1 on the interface while the instance runs. */
  promoteSecondaries: boolean;
  /** keepalived mcast_dst_ip: the instance's own multicast group. */
  multicastGroup?: string;
  /** keepalived track_src_ip: FAULT while unicastSrcIp is not on the interface. */
  trackSrcIp: boolean;
  /** Advertised; empty only for version 2. */
  virtualIpaddresses: Vip[];
  /** keepalived virtual_ipaddress_excluded: held with the state, not advertised; either family. */
  virtualIpaddressesExcluded: Vip[];
  /** weight 0 = FAULT while down. */
  trackInterfaces: { name: string; weight: number }[];
  /** weight already resolved: the instance's override, else the script's. */
  trackScripts: { name: string; weight: number }[];
  /** weight and reverse resolved: the instance's, else the tracker's (weight default 1). */
  trackProcesses: { name: string; weight: number; reverse: boolean }[];
  trackFiles: { path: string; weight: number }[];
  notify: Notify;
  /** vrrp.garp with the instance's overrides applied. */
  garp: Garp;
  /** keepalived lower_prio_no_advert / higher_prio_send_advert, vrrp.* defaults applied. */
  lowerPrioNoAdvert: boolean;
  higherPrioSendAdvert: boolean;
  /** Name of the sync group it belongs to, if any. */
  syncGroup?: string;
  /** keepalived use_vmac (name default vrrp.<VRID>) and vmac_xmit_base. */
  vmac?: { name: string; xmitBase: boolean };
  /** keepalived use_ipvlan [NAME] [ADDRESS] [bridge|private|vepa]. */
  ipvlan?: { name: string; address?: string; type: 'bridge' | 'private' | 'vepa' };
  /** keepalived virtual_routes / virtual_rules, as written (the engine checks and fills them). */
  virtualRoutes: VirtualRouteOptions[];
  virtualRules: VirtualRuleOptions[];
}

export interface SyncGroup {
  name: string;
  instances: string[];
  notify: Notify;
}

export interface VrrpConfig {
  garp: Garp;
  /** keepalived garp_group / vrrp_garp_interval / vrrp_gna_interval (vrrp/garp-queue.ts). */
  garpGroups: { interfaces?: string[]; intervalMs: number; naIntervalMs: number }[];
  lowerPrioNoAdvert: boolean;
  higherPrioSendAdvert: boolean;
  /** keepalived script_user / enable_script_security. */
  scriptUser?: string;
  scriptSecurity: boolean;
  /** keepalived vrrp_notify_fifo / notify_fifo (+ _script). */
  notifyFifo?: { path: string; script?: string };
  /** keepalived vrrp_mcast_group4 / vrrp_mcast_group6. */
  multicastGroup4: string;
  multicastGroup6: string;
  /** keepalived vrrp_startup_delay / vrrp_delay_after_boot; 0 = none. */
  startupDelayMs: number;
  delayAfterBootMs: number;
  /** keepalived static_ipaddress / static_routes / static_rules: held while lvsd runs, whatever the VRRP states. */
  staticIpaddresses: Vip[];
  staticRoutes: VirtualRouteOptions[];
  staticRules: VirtualRuleOptions[];
  /** keepalived interface_up_down_delays, by interface name. */
  interfaceUpDownDelays: Record<string, { downMs: number; upMs: number }>;
  /** keepalived disable_local_igmp. */
  disableLocalIgmp: boolean;
  /** keepalived nftables NAME, nftables_priority, nftables_counters: the VMAC IGMP/MLD table (vrrp/vmac-igmp.ts). */
  nftables: { table: string; priority: number; counters: boolean };
  scripts: Record<string, VrrpScript>;
  /** keepalived vrrp_track_process, by name, as the engine takes them (durations in ms). */
  processes: Record<string, TrackProcessOptions>;
  instances: VrrpInstance[];
  syncGroups: SyncGroup[];
  /** SCHED_RR priority of the VRRP thread (keepalived vrrp_rt_priority); absent = normal scheduling. */
  realtimePriority?: number;
}

export type CheckType = 'tcp' | 'http' | 'https' | 'udp' | 'dns' | 'smtp' | 'ping' | 'file' | 'exec' | 'agent' | 'none';

export interface HealthCheck {
  type: CheckType;
  intervalMs: number;
  timeoutMs: number;
  rise: number;
  fall: number;
  retry: number;
  delayBeforeRetryMs: number;
  warmupMs: number;
  connectIp?: string;
  connectPort?: number;
  bindTo?: string;
  bindInterface?: string;
  /** keepalived bind_port. */
  bindPort?: number;
  /** keepalived checker fwmark: SO_MARK on the check's socket. */
  fwmark?: number;
  /** keepalived log_all_failures: log every failed try while up. */
  logAllFailures: boolean;
  http?: {
    path: string;
    /** Accepted status codes as inclusive ranges; 200 → { min: 200, max: 200 }. */
    status: { min: number; max: number }[];
    host?: string;
    bodyRegex?: string;
    /** How bodyRegex applies: its JavaScript flags, inverted, where the match may start (bytes into the body). */
    bodyRegexFlags?: string;
    bodyRegexNoMatch?: boolean;
    bodyRegexMinOffset?: number;
    bodyRegexMaxOffset?: number;
    /** Lower-case MD5 hex. */
    digest?: string;
    /** keepalived http_protocol: the request line's version and whether Connection: close is sent. */
    protocol: '1.0' | '1.0C' | '1.1';
    headers: Record<string, string>;
    tlsVerify: boolean;
    sni?: string;
    ca?: string;
    clientCertificate?: { certificate: string; key: string; password?: string };
  };
  udp?: { payload: string; expect?: string; minReplyLength?: number; maxReplyLength?: number };
  dns?: { name: string; type: string; expectRcode: string; expectAnswer?: string; protocol: 'udp' | 'tcp'; tcpOnTruncation: boolean };
  /** helo absent: the director's host name. */
  smtp?: { helo?: string };
  file?: { path: string; weight: number; reverse: boolean };
  exec?: { command: string; dynamicWeight: boolean };
  agent?: { port?: number; send?: string };
}

export interface RealServer {
  /** "10.0.1.11:80", "[2001:db8::11]:80" (port 0 = fwmark service without port mapping). */
  id: string;
  address: string;
  port: number;
  family: Family;
  weight: number;
  method: ForwardMethod;
  tunnel?: TunnelSpec;
  upperThreshold: number;
  lowerThreshold: number;
  /** The virtual server's check with this server's overrides merged over it. */
  healthCheck: HealthCheck;
  /**
   * Its further checkers (its own moreChecks, else the virtual server's), and one per url after the
   * first of an http check with several urls. Up only while healthCheck and every one of these is up.
   */
  moreChecks: HealthCheck[];
  notify: { up?: string; down?: string };
}

export interface VirtualServer {
  /** "tcp:192.0.2.10:80", "udp:[2001:db8::10]:53", "fwmark:4:7". */
  id: string;
  /** The configured name, else the id. */
  name: string;
  family: Family;
  protocol: Protocol;
  address?: string;
  port?: number;
  fwmark?: number;
  scheduler: Scheduler;
  schedulerFlags: SchedulerFlag[];
  method: ForwardMethod;
  persistence?: { timeoutMs: number; netmask: string; engine?: 'sip' };
  onePacket: boolean;
  quorum: number;
  hysteresis: number;
  inhibitOnFailure: boolean;
  alpha: boolean;
  /** keepalived ha_suspend: checks run only while this director holds the address (director/ha-suspend.ts). */
  haSuspend: boolean;
  omega: boolean;
  notify: { quorumUp?: string; quorumDown?: string };
  sorryServer?: { id: string; address: string; port: number; method: ForwardMethod; inhibit: boolean };
  /** The service-level check (the default of its real servers). */
  healthCheck: HealthCheck;
  /** The service-level further checkers (the default of its real servers), urls expanded as on a real server. */
  moreChecks: HealthCheck[];
  realServers: RealServer[];
}

/** keepalived startup_script / shutdown_script. */
export interface LifecycleScriptConfig {
  command: string;
  timeoutMs: number;
  /** "user" or "user:group"; absent: vrrp.scriptUser, else the daemon's user. */
  user?: string;
}
