// The part of the lvsd.yaml shape the importer writes (CONFIG-SHAPE.md / daemon/config/schema.ts).
// Kept local so the importer compiles on its own; test/unit/keepalived-roundtrip.test.ts checks every
// corpus result against the real schema and loader.
import type { VirtualRouteOptions, VirtualRuleOptions } from '../../vrrp/virtual-routes.js';

export type Duration = string;

export interface GarpOut {
  masterDelay?: Duration;
  masterRepeat?: number;
  masterRefresh?: Duration;
  masterRefreshRepeat?: number;
  interval?: Duration;
  naInterval?: Duration;
  extraIf?: Duration;
  lowerPrioRepeat?: number;
  lowerPrioDelay?: Duration;
}

/** vrrp.garpGroups[]: keepalived garp_group, or (no interfaces) vrrp_garp_interval / vrrp_gna_interval. */
export interface GarpGroupOut {
  interfaces?: string[];
  interval?: Duration;
  naInterval?: Duration;
}

export interface ScriptOut {
  command: string;
  interval?: Duration;
  timeout?: Duration;
  rise?: number;
  fall?: number;
  weight?: number;
  user?: string;
}

export interface ProcessOut {
  process: string;
  parameters?: string[];
  paramMatch?: 'exact' | 'partial' | 'initial';
  fullCommand?: boolean;
  quorum?: number;
  quorumMax?: number;
  weight?: number;
  reverse?: boolean;
  forkDelay?: Duration;
  terminateDelay?: Duration;
}

export interface NotifyOut {
  master?: string;
  backup?: string;
  fault?: string;
  stop?: string;
  deleted?: string;
  any?: string;
  masterRxLowerPri?: string;
  users?: Partial<Record<'master' | 'backup' | 'fault' | 'stop' | 'deleted' | 'any' | 'masterRxLowerPri', string>>;
}

export type VipOut =
  | string
  | { address: string; dev?: string; label?: string; scope?: string; broadcast?: string; peer?: string; home?: boolean; dad?: boolean; noPrefixRoute?: boolean; preferredLft?: number | 'forever' };

export interface InstanceOut {
  name: string;
  interface: string;
  virtualRouterId: number;
  priority?: number;
  state?: 'MASTER' | 'BACKUP';
  version: 2 | 3;
  advertInterval: Duration;
  preempt?: boolean;
  preemptDelay?: Duration;
  accept?: boolean;
  authentication?: { type: 'PASS'; password: string };
  unicastSrcIp?: string;
  unicastPeers?: string[];
  unicastTtl?: number;
  dontTrackPrimary?: boolean;
  promoteSecondaries?: boolean;
  multicastGroup?: string;
  trackSrcIp?: boolean;
  virtualIpaddresses?: VipOut[];
  virtualIpaddressesExcluded?: VipOut[];
  trackInterfaces?: { name: string; weight?: number }[];
  trackScripts?: { name: string; weight?: number }[];
  trackFiles?: { path: string; weight?: number }[];
  trackProcesses?: { name: string; weight?: number; reverse?: boolean }[];
  notify?: NotifyOut;
  garp?: GarpOut;
  lowerPrioNoAdvert?: boolean;
  higherPrioSendAdvert?: boolean;
  downTimerAdverts?: number;
  notifyDeleted?: boolean;
  oldUnicastChecksum?: 'always' | 'never';
  vmac?: { name?: string; xmitBase?: boolean };
  ipvlan?: { name?: string; address?: string; type?: 'bridge' | 'private' | 'vepa' };
  virtualRoutes?: VirtualRouteOut[];
  virtualRules?: VirtualRuleOut[];
}

/** The engine's own option shapes, written as they are (one definition: vrrp/virtual-routes.ts). */
export type VirtualRouteOut = VirtualRouteOptions;
export type VirtualRuleOut = VirtualRuleOptions;

export interface SyncGroupOut {
  name: string;
  instances: string[];
  notify?: NotifyOut;
}

/** One page of an http check (keepalived url block). */
export interface UrlOut {
  path?: string;
  status?: (number | string)[];
  bodyRegex?: string;
  bodyRegexFlags?: string;
  bodyRegexNoMatch?: boolean;
  bodyRegexMinOffset?: number;
  bodyRegexMaxOffset?: number;
  digest?: string;
}

export interface HealthCheckOut {
  type: 'tcp' | 'http' | 'https' | 'udp' | 'dns' | 'smtp' | 'ping' | 'file' | 'exec' | 'none';
  interval?: Duration;
  timeout?: Duration;
  rise?: number;
  fall?: number;
  retry?: number;
  delayBeforeRetry?: Duration;
  warmup?: Duration;
  connectIp?: string;
  connectPort?: number;
  bindTo?: string;
  bindInterface?: string;
  bindPort?: number;
  fwmark?: number;
  logAllFailures?: boolean;
  http?: UrlOut & { host?: string; protocol?: '1.0' | '1.0C' | '1.1'; urls?: UrlOut[]; tlsVerify?: boolean; sni?: string; clientCertificate?: { certificate: string; key: string; password?: string } };
  udp?: { payload?: string; expect?: string; minReplyLength?: number; maxReplyLength?: number };
  dns?: { name: string; type?: string };
  smtp?: { helo?: string };
  file?: { path: string; weight?: number; reverse?: boolean };
  exec?: { command: string; dynamicWeight?: boolean };
}

export type Method = 'nat' | 'dr' | 'tun';

export interface TunnelOut {
  type: 'ipip' | 'gue' | 'gre';
  port?: number;
  checksum?: 'none' | 'csum' | 'remcsum';
}

export interface RealServerOut {
  address: string;
  port?: number;
  weight?: number;
  method?: Method;
  tunnel?: TunnelOut;
  upperThreshold?: number;
  lowerThreshold?: number;
  healthCheck?: HealthCheckOut;
  /** The 2nd and later checkers of the real_server (keepalived requires every one to pass). */
  moreChecks?: HealthCheckOut[];
  notify?: { up?: string; down?: string };
}

export interface VirtualServerOut {
  name?: string;
  address?: string;
  port?: number;
  fwmark?: number;
  family?: 'ipv4' | 'ipv6';
  protocol?: 'tcp' | 'udp' | 'sctp';
  scheduler?: string;
  schedulerFlags?: string[];
  method: Method;
  persistence?: { timeout: Duration; netmask?: string; engine?: 'sip' };
  onePacket?: boolean;
  quorum?: number;
  hysteresis?: number;
  inhibitOnFailure?: boolean;
  alpha?: boolean;
  haSuspend?: boolean;
  omega?: boolean;
  notify?: { quorumUp?: string; quorumDown?: string };
  sorryServer?: { address: string; port?: number; method?: Method; inhibit?: boolean };
  healthCheck?: HealthCheckOut;
  moreChecks?: HealthCheckOut[];
  realServers: RealServerOut[];
}

export interface AlertsOut {
  email?: {
    to: string[];
    from: string;
    smtpServer: string;
    smtpPort?: number;
    connectTimeout?: Duration;
    helo?: string;
    vrrp?: boolean;
    realServers?: boolean;
    quorum?: boolean;
    instances?: Record<string, boolean>;
    virtualServers?: Record<string, boolean>;
  };
}

export interface ConfigOut {
  node?: { name?: string; startupScript?: LifecycleScriptOut; shutdownScript?: LifecycleScriptOut };
  alerts?: AlertsOut;
  ipvs?: {
    timeouts?: { tcp?: Duration; tcpFin?: Duration; udp?: Duration };
    syncDaemon?: { interface: string; syncId?: number; maxLen?: number; mcastGroup?: string; port?: number; ttl?: number; role?: 'follow-vrrp' | 'both' };
  };
  vrrp?: {
    garp?: GarpOut;
    garpGroups?: GarpGroupOut[];
    lowerPrioNoAdvert?: boolean;
    higherPrioSendAdvert?: boolean;
    scriptUser?: string;
    scriptSecurity?: boolean;
    notifyFifo?: { path: string; script?: string };
    multicastGroup4?: string;
    multicastGroup6?: string;
    startupDelay?: Duration;
    delayAfterBoot?: Duration;
    interfaceUpDownDelays?: Record<string, { down: Duration; up?: Duration }>;
    staticIpaddresses?: VipOut[];
    staticRoutes?: VirtualRouteOut[];
    staticRules?: VirtualRuleOut[];
    disableLocalIgmp?: boolean;
    nftables?: { table?: string; priority?: number; counters?: boolean };
    scripts?: Record<string, ScriptOut>;
    processes?: Record<string, ProcessOut>;
    instances?: InstanceOut[];
    syncGroups?: SyncGroupOut[];
    realtimePriority?: number;
  };
  virtualServers?: VirtualServerOut[];
}

/** node.startupScript / shutdownScript (keepalived startup_script / shutdown_script). */
export interface LifecycleScriptOut {
  command: string;
  timeout?: Duration;
  user?: string;
}
