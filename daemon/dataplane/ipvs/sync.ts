// The connection sync daemon, decided in one place (pure): which kernel sync daemons a role asks for, what to
// stop and start to get there from what runs, and the net.ipv4.vs.sync_* sysctls that decide what the master
// sends and when. The backend (backend.ts) does the netlink and /proc I/O.
//
// Kernel facts (net/netfilter/ipvs/ip_vs_sync.c, ip_vs_ctl.c; see docs/ipvs.md):
// - one master and one backup daemon may run at once in a network namespace, each started and stopped alone
//   (IPVS_CMD_NEW_DAEMON / DEL_DAEMON with state MASTER or BACKUP);
// - a backup with syncid 0 accepts messages of every sync id; another id drops what does not match;
// - the master does not hear its own multicast (loopback is off on its socket), so 'both' does not echo;
// - sync_ports is read when a daemon starts: a change needs the daemons restarted to take effect.
import type { IpvsDaemon, SyncRole } from '../../ipvs/codec.js';
import { SYNC_DEFAULT_GROUP, SYNC_DEFAULT_PORT } from '../../ipvs/constants.js';

/** What the director asks for: follow the VRRP role (master or backup), both at once, or none. */
export type SyncDaemonRole = SyncRole | 'both' | 'none';

/** The net.ipv4.vs.* sysctls of the sync daemon. */
export interface SyncTuning {
  /** sync_threshold: "threshold period". */
  threshold: number;
  thresholdPeriod: number;
  /** sync_refresh_period, whole seconds (0 = off). */
  refreshPeriodS: number;
  /** sync_persist_mode: 0 every connection, 1 only persistence templates for persistent services. */
  persistMode: 0 | 1;
  /** sync_ports: threads (and UDP ports from the base port up). */
  ports: number;
}

export interface SyncDaemonConfig {
  /** Interface the sync messages go out of / come in on (keepalived's lvs_sync_daemon_interface). */
  interface: string;
  syncId: number;
  mcastGroup?: string;
  mcastPort?: number;
  mcastTtl?: number;
  syncMaxLen?: number;
  /** The sysctls to write before the daemons start; absent = leave the kernel's. */
  tuning?: SyncTuning;
}

/** The daemons a role asks for. 'both': the master with the configured id, the backup with id 0 (any id). */
export function wantedDaemons(role: SyncDaemonRole, cfg: SyncDaemonConfig | undefined): IpvsDaemon[] {
  if (role === 'none') return [];
  if (cfg === undefined) throw new Error(`sync daemon role ${role} needs the sync daemon configuration`);
  const one = (r: SyncRole, syncId: number): IpvsDaemon => {
    const d: IpvsDaemon = { role: r, ifname: cfg.interface, syncId, mcastGroup: cfg.mcastGroup ?? SYNC_DEFAULT_GROUP, mcastPort: cfg.mcastPort ?? SYNC_DEFAULT_PORT, mcastTtl: cfg.mcastTtl ?? 1 };
    if (cfg.syncMaxLen !== undefined) d.syncMaxLen = cfg.syncMaxLen;
    return d;
  };
  if (role === 'both') return [one('master', cfg.syncId), one('backup', 0)];
  return [one(role, cfg.syncId)];
}

/** The kernel reports what it holds; attributes an older kernel leaves out count as matching. */
function sameDaemon(a: IpvsDaemon, b: IpvsDaemon): boolean {
  return a.role === b.role && a.ifname === b.ifname && a.syncId === b.syncId &&
    (a.mcastGroup === undefined || a.mcastGroup === b.mcastGroup) &&
    (a.mcastPort === undefined || a.mcastPort === b.mcastPort) &&
    (a.mcastTtl === undefined || a.mcastTtl === b.mcastTtl) &&
    (a.syncMaxLen === undefined || b.syncMaxLen === undefined || a.syncMaxLen === b.syncMaxLen);
}

export interface SyncPlan {
  stop: SyncRole[];
  start: IpvsDaemon[];
}

/**
 * From the daemons running to the ones wanted: an identical daemon is left alone (its connections keep flowing),
 * a different one is stopped and started again; `restartAll` (sync_ports changed) restarts every one wanted.
 * Stops come first: the kernel holds one daemon per state.
 */
export function planSync(running: readonly IpvsDaemon[], wanted: readonly IpvsDaemon[], restartAll = false): SyncPlan {
  const stop: SyncRole[] = [];
  const start: IpvsDaemon[] = [];
  for (const d of running) {
    const w = wanted.find((x) => x.role === d.role);
    if (w === undefined || restartAll || !sameDaemon(d, w)) stop.push(d.role);
  }
  for (const w of wanted) {
    const r = running.find((x) => x.role === w.role);
    if (r === undefined || stop.includes(w.role)) start.push(w);
  }
  return { stop, start };
}

/** The sysctl files (under /proc/sys/net/ipv4/vs) and the text written to each. */
export function syncSysctls(t: SyncTuning): [name: string, value: string][] {
  return [
    ['sync_threshold', `${t.threshold} ${t.thresholdPeriod}`],
    ['sync_refresh_period', String(t.refreshPeriodS)],
    ['sync_persist_mode', String(t.persistMode)],
    ['sync_ports', String(t.ports)],
  ];
}

/** The kernel prints vectors with tabs; compare what it holds with what we would write, whitespace aside. */
export function sysctlEquals(held: string, want: string): boolean {
  return held.trim().split(/\s+/).join(' ') === want.trim().split(/\s+/).join(' ');
}
