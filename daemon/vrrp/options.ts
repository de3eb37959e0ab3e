// The VRRP engine's own typed options. The director maps the config file's `vrrp:` section onto
// these (durations already in ms, addresses as text); normalizeOptions() checks what the engine
// relies on and fills keepalived's defaults, naming the instance and field of anything wrong.
import type { GarpGroupOptions } from './garp-queue.js';
import { familyOf, parseCidr, type Family } from '../net/addr.js';
import { addressRequest, type AddressOptions } from '../net/addr-request.js';
import type { TrackProcessOptions } from './process-track.js';
import { DEFAULT_VMAC_NFT, type VmacNftSettings } from './vmac-igmp.js';
import { IPVLAN_FLAGS, type IpvlanFlags } from '../net/link-codec.js';

export type { TrackProcessOptions } from './process-track.js';
import { normalizeRoutes, normalizeRules, type NormalizedRoute, type NormalizedRule, type VirtualRouteOptions, type VirtualRuleOptions } from './virtual-routes.js';

export interface GarpOptions {
  /** keepalived vrrp_garp_master_delay: second burst this long after becoming master (0 = none). Default 5000. */
  masterDelayMs?: number;
  /** vrrp_garp_master_repeat: GARPs per burst. Default 5. */
  masterRepeat?: number;
  /** vrrp_garp_master_refresh: re-announce every … while master (0 = never). Default 0. */
  masterRefreshMs?: number;
  /** vrrp_garp_master_refresh_repeat. Default 1. */
  masterRefreshRepeat?: number;
  /**
   * Gap between the GARPs of one instance's burst. Default 0 (back to back). lvsd's own: keepalived's
   * vrrp_garp_interval paces a whole link instead (VrrpOptions.garpGroups).
   */
  intervalMs?: number;
  /** The same for unsolicited NAs (IPv6 addresses). Default 0. */
  naIntervalMs?: number;
  /**
   * keepalived garp_extra_if all N: while master, every N ms (checked at each advert) one GARP / NA on each
   * other interface that holds one of its VIPs, for the first VIP there, so switches keep that MAC. 0 = never.
   */
  extraIfMs?: number;
  /**
   * vrrp_garp_lower_prio_repeat: GARPs a master sends at once when it hears a lower-priority master
   * (a healed split brain), and again after lowerPrioDelayMs. 0 = none. Default: the global masterRepeat.
   */
  lowerPrioRepeat?: number;
  /** vrrp_garp_lower_prio_delay: the second such burst this long after the first (0 = none). Default: the global masterDelayMs. */
  lowerPrioDelayMs?: number;
}

/** Executables run on transitions, keepalived's notify_master / notify_backup / notify_fault / notify_stop / notify. */
export interface NotifyOptions {
  master?: string;
  backup?: string;
  fault?: string;
  stop?: string;
  /** keepalived notify_deleted's script: run when a reload removes the instance (instances only; see InstanceOptions.notifyDeleted). */
  deleted?: string;
  /** Run after the specific one, with `INSTANCE|GROUP name STATE priority` appended (keepalived `notify`). */
  any?: string;
  /** keepalived notify_master_rx_lower_pri: run (no arguments) each time a MASTER hears a lower-priority advert. */
  masterRxLowerPri?: string;
  /** Who runs each hook, "user" or "user:group" (keepalived `notify_master "/x" user group`). Default: VrrpOptions.scriptUser. */
  users?: Partial<Record<'master' | 'backup' | 'fault' | 'stop' | 'deleted' | 'any' | 'masterRxLowerPri', string>>;
}

/** A VIP with keepalived's virtual_ipaddress options (label, scope, brd, peer, home, -nodad, noprefixroute, preferred_lft). */
export interface VipOptions extends AddressOptions {
  /** CIDR, e.g. "192.168.77.100/24" or "fd00::100/64". */
  address: string;
  /** Interface; default: the instance's. */
  dev?: string;
}

export interface TrackWeight {
  /** 0 (default) = FAULT while failing; > 0 added while OK; < 0 added while failing (keepalived rules). */
  weight?: number;
}

export interface VrrpInstanceOptions {
  name: string;
  interface: string;
  /** virtual_router_id, 1..255. */
  vrid: number;
  /** 1..255; 255 = address owner. */
  priority: number;
  /** Default 3. */
  version?: 2 | 3;
  /** advert_int in ms: v2 whole seconds (1000..255000), v3 10..40950 in 10 ms steps. Default 1000. */
  advertIntervalMs?: number;
  /** Default true (false = nopreempt). */
  preempt?: boolean;
  preemptDelayMs?: number;
  /** v3 accept mode. Linux accepts traffic to addresses it holds, so this is informational. */
  accept?: boolean;
  /** v2 PASS authentication, ≤ 8 bytes. */
  authPass?: string;
  /** Source of our adverts; default: the interface's first address of the VIPs' family (IPv6: link-local). */
  unicastSrcIp?: string;
  /** Unicast peers; empty/absent = multicast. */
  unicastPeers?: string[];
  /** keepalived unicast_ttl: TTL / hop limit of unicast adverts. Default: 255 (IPv4), the system's (IPv6). */
  unicastTtl?: number;
  /** keepalived down_timer_adverts: Master_Down_Interval = this × Master_Adver_Interval + Skew_Time (1..100). Default 3 (RFC 5798). */
  downTimerAdverts?: number;
  /**
   * keepalived old_unicast_checksum, for IPv4 VRRPv3 unicast peers running keepalived ≤ 1.3.6 (whose checksum covers
   * the multicast group, not the peer): 'always' sends and expects that checksum; 'never' only the RFC's. Absent
   * ('auto'): the RFC's until a peer's advert verifies only the old way, then the old one — keepalived 2.2.7's default.
   */
  oldUnicastChecksum?: 'auto' | 'always' | 'never';
  /** keepalived dont_track_primary: the own interface going down is no FAULT (tracked interfaces still are). */
  dontTrackPrimary?: boolean;
  /** keepalived promote_secondaries: promote_secondaries 1 on the interface while the instance runs (promote-secondaries.ts). */
  promoteSecondaries?: boolean;
  /** keepalived mcast_dst_ip: this instance's multicast group, instead of multicastGroup4/6 (ignored with unicastPeers, as keepalived). */
  multicastGroup?: string;
  /** keepalived track_src_ip: FAULT while unicastSrcIp is not on the interface (missing at start, or removed). Needs unicastSrcIp. */
  trackSrcIp?: boolean;
  /** The addresses the adverts carry. VRRPv2 may have none (keepalived 2.2.7 accepts it, and advertises 0 addresses); v3 needs one. */
  vips: (VipOptions | string)[];
  /**
   * keepalived virtual_ipaddress_excluded: added and removed with the state and announced like the
   * VIPs, but not carried in the adverts (nor compared with a received advert's list). Either family.
   */
  excludedVips?: (VipOptions | string)[];
  trackInterfaces?: ({ name: string } & TrackWeight)[];
  trackScripts?: ({ name: string } & TrackWeight)[];
  trackFiles?: ({ path: string } & TrackWeight)[];
  /** keepalived track_process: trackers of VrrpOptions.processes; weight and reverse default to the tracker's. */
  trackProcesses?: ({ name: string; reverse?: boolean } & TrackWeight)[];
  notify?: NotifyOptions;
  /**
   * keepalived notify_deleted: a reload that removes the instance says DELETED to its hooks and the FIFO.
   * Default false: it says FAULT, as keepalived did before the directive (nothing when it was in FAULT already).
   * Implied by notify.deleted.
   */
  notifyDeleted?: boolean;
  garp?: GarpOptions;
  /** keepalived `state`: only a hint, as in keepalived 2.x (everyone starts in BACKUP unless priority 255). */
  initialState?: 'MASTER' | 'BACKUP';
  /** keepalived lower_prio_no_advert: a master does not answer a lower-priority advert with its own. Default: VrrpOptions.lowerPrioNoAdvert, else false. */
  lowerPrioNoAdvert?: boolean;
  /** keepalived higher_prio_send_advert: a master sends one advert of its own before yielding to a better one. Default: VrrpOptions.higherPrioSendAdvert, else false. */
  higherPrioSendAdvert?: boolean;
  /**
   * keepalived use_vmac: the instance runs on a macvlan carrying the RFC 5798 virtual MAC
   * (00:00:5e:00:01:VRID, IPv6 00:00:5e:00:02:VRID) and its VIPs; `name` default vrrp.<VRID>.
   * `xmitBase` (vmac_xmit_base): adverts go out of (and are read on) the parent interface instead.
   */
  vmac?: { name?: string; xmitBase?: boolean };
  /**
   * keepalived use_ipvlan [NAME] [ADDRESS] [bridge|private|vepa]: the instance and its VIPs run on an l2
   * ipvlan of `interface` (it has the parent's MAC: no virtual MAC), default name vrrp.<VRID>, type bridge.
   * `address` goes on the ipvlan and is the adverts' source; IPv4 needs one (keepalived 2.2.7 keeps such an
   * instance in FAULT without). Not with `vmac`.
   */
  ipvlan?: { name?: string; address?: string; type?: IpvlanFlags };
  /** keepalived virtual_routes / virtual_rules: added on becoming MASTER, removed on leaving it. */
  virtualRoutes?: VirtualRouteOptions[];
  virtualRules?: VirtualRuleOptions[];
}

export interface TrackScriptOptions {
  /** Executable and arguments, split on whitespace (no shell), like keepalived's `script`. */
  command: string;
  intervalMs?: number;
  timeoutMs?: number;
  rise?: number;
  fall?: number;
  /** Default weight for instances that track it without one. */
  weight?: number;
  /** Run as "user" or "user:group" (vrrp_script `user`). Default: VrrpOptions.scriptUser, else the daemon's user. */
  user?: string;
}

export interface SyncGroupOptions {
  name: string;
  instances: string[];
  notify?: NotifyOptions;
}

export interface VrrpOptions {
  instances: VrrpInstanceOptions[];
  syncGroups?: SyncGroupOptions[];
  scripts?: Record<string, TrackScriptOptions>;
  /** keepalived vrrp_track_process blocks, by name. */
  processes?: Record<string, TrackProcessOptions>;
  /** Defaults for every instance (each may override). */
  garp?: GarpOptions;
  /** keepalived garp_group / vrrp_garp_interval / vrrp_gna_interval: GARPs / NAs paced per interface, across instances (garp-queue.ts). */
  garpGroups?: GarpGroupOptions[];
  /** keepalived vrrp_rt_priority: run the VRRP engine process (all its threads) SCHED_RR at this priority (1..99); absent = normal. */
  realtimePriority?: number;
  /** Defaults for every instance: keepalived vrrp_lower_prio_no_advert, vrrp_higher_prio_send_advert. */
  lowerPrioNoAdvert?: boolean;
  higherPrioSendAdvert?: boolean;
  /**
   * keepalived vrrp_startup_delay: for this long after the engine starts no backup becomes master by
   * its timer (its Master_Down_Timer counts from the end of the delay) and owners wait. Default 0.
   */
  startupDelayMs?: number;
  /** keepalived vrrp_delay_after_boot (2.4+): the same delay, but until this long after the system booted. Default 0. */
  delayAfterBootMs?: number;
  /**
   * keepalived interface_up_down_delays, by interface name: a link's down (up) counts only once it has
   * lasted downMs (upMs) (link-debounce.ts). 0..255 s each; upMs default 0.
   */
  interfaceUpDownDelays?: Record<string, { downMs: number; upMs?: number }>;
  /**
   * keepalived static_ipaddress / static_routes / static_rules: held while the engine runs, whatever the
   * instances' states (static-apply.ts). An address names its interface.
   */
  staticIpaddresses?: (VipOptions & { dev: string })[];
  staticRoutes?: VirtualRouteOptions[];
  staticRules?: VirtualRuleOptions[];
  /** keepalived disable_local_igmp: igmp_link_local_mcast_reports 0 while the engine runs (local-igmp.ts). */
  disableLocalIgmp?: boolean;
  /**
   * keepalived `nftables NAME`, `nftables_priority`, `nftables_counters`: the table (per family) that sends
   * VMAC interfaces' IGMP/MLD reports from their parent (vmac-igmp.ts). Default lvsd_vrrp, -1, no counters.
   */
  nftables?: Partial<VmacNftSettings>;
  /** keepalived vrrp_mcast_group4 / vrrp_mcast_group6: the multicast groups of the adverts. Default 224.0.0.18 / ff02::12. */
  multicastGroup4?: string;
  multicastGroup6?: string;
  /** keepalived script_user: "user" or "user:group" every script without its own user runs as. Default: the daemon's user. */
  scriptUser?: string;
  /** keepalived enable_script_security: a script that runs as root from a path a non-root user could change is not run. */
  scriptSecurity?: boolean;
  /** keepalived vrrp_notify_fifo (+ notify_fifo_script): every instance and group event as one line (notify-fifo.ts). */
  notifyFifo?: { path: string; script?: string };
}

export interface NormalizedVip extends AddressOptions {
  address: string;
  prefixLength: number;
  cidr: string;
  dev: string;
}

export interface NormalizedInstance {
  name: string;
  interface: string;
  vrid: number;
  priority: number;
  version: 2 | 3;
  family: Family;
  intervalCs: number;
  preempt: boolean;
  preemptDelayMs: number;
  accept: boolean;
  authPass?: string;
  unicastSrcIp?: string;
  unicastPeers: string[];
  /** Where multicast adverts go (and what the socket joins): vrrp_mcast_group4/6 of the instance's family. */
  multicastGroup: string;
  unicastTtl?: number;
  downTimerAdverts: number;
  oldUnicastChecksum: 'auto' | 'always' | 'never';
  dontTrackPrimary: boolean;
  promoteSecondaries: boolean;
  trackSrcIp: boolean;
  vips: NormalizedVip[];
  excludedVips: NormalizedVip[];
  trackInterfaces: { name: string; weight: number }[];
  trackScripts: { name: string; weight: number }[];
  trackFiles: { path: string; weight: number }[];
  trackProcesses: { name: string; weight: number; reverse: boolean }[];
  notify: NotifyOptions;
  notifyDeleted: boolean;
  garp: Required<GarpOptions>;
  lowerPrioNoAdvert: boolean;
  higherPrioSendAdvert: boolean;
  group?: string;
  /** use_vmac: the macvlan's name and the interface it sits on (the configured `interface`). */
  vmac?: { name: string; parent: string; xmitBase: boolean; ipvlan?: { type: IpvlanFlags; address?: string } };
  /** Present only when there are some (an instance without keeps its old shape). */
  virtualRoutes?: NormalizedRoute[];
  virtualRules?: NormalizedRule[];
}

/** What the engine holds whatever the VRRP states (keepalived static_ipaddress, static_routes, static_rules). */
export interface StaticSet {
  addresses: NormalizedVip[];
  routes: NormalizedRoute[];
  rules: NormalizedRule[];
}

/**
 * keepalived static_ipaddress / static_routes / static_rules, checked as the engine needs them: an address
 * names its interface, a route has a via or a dev (no instance interface to fall back on). `err` gets the
 * field (`staticRoutes[1].via`, …): the config check places it at its FILE:LINE:COL.
 */
export function normalizeStatics(o: Pick<VrrpOptions, 'staticIpaddresses' | 'staticRoutes' | 'staticRules'>, err: (field: string, msg: string) => void): StaticSet {
  const renamed = (list: string) => (field: string, msg: string): void => { err(field.replace(/^virtual(Routes|Rules)/, list), msg); };
  const addresses = (o.staticIpaddresses ?? []).flatMap((v, i): NormalizedVip[] => {
    try {
      const c = parseCidr(v.address);
      const { address: _a, dev, ...addrOptions } = v;
      if (typeof dev !== 'string' || dev === '') throw new Error('a static address names its interface (dev)');
      const nv: NormalizedVip = { ...addrOptions, address: c.address, prefixLength: c.prefixLength, cidr: `${c.address}/${c.prefixLength}`, dev };
      addressRequest(0, nv.cidr, addrOptions);
      return [nv];
    } catch (e) {
      err(`staticIpaddresses[${i}]`, e instanceof Error ? e.message : String(e));
      return [];
    }
  });
  (o.staticRoutes ?? []).forEach((r, i) => {
    if ((r.type ?? 'unicast') === 'unicast' && r.via === undefined && r.dev === undefined) err(`staticRoutes[${i}]`, 'a static route has a via or a dev (there is no instance interface to fall back on)');
  });
  return { addresses, routes: normalizeRoutes(o.staticRoutes ?? [], renamed('staticRoutes')), rules: normalizeRules(o.staticRules ?? [], renamed('staticRules')) };
}

/** One interface's interface_up_down_delays, ms (keepalived: `IF DOWN [UP]`, seconds). */
export interface UpDownDelays {
  downMs: number;
  upMs: number;
}

export interface NormalizedOptions {
  instances: NormalizedInstance[];
  syncGroups: SyncGroupOptions[];
  /** `user` resolved: the script's own, else scriptUser, else '' (the daemon's user). */
  scripts: Record<string, Required<TrackScriptOptions>>;
  processes: Record<string, TrackProcessOptions>;
  scriptUser?: string;
  scriptSecurity: boolean;
  notifyFifo?: { path: string; script?: string };
  realtimePriority?: number;
  startupDelayMs: number;
  delayAfterBootMs: number;
  interfaceUpDownDelays: Record<string, UpDownDelays>;
  statics: StaticSet;
  disableLocalIgmp: boolean;
  nftables: VmacNftSettings;
  garpGroups: GarpGroupOptions[];
}

/**
 * The start-up delay of an engine that starts `uptimeMs` after boot: the longer of vrrp_startup_delay
 * and what is left of vrrp_delay_after_boot (keepalived's rule). Unknown uptime: the first alone.
 */
export function startupDelayFor(o: Pick<NormalizedOptions, 'startupDelayMs' | 'delayAfterBootMs'>, uptimeMs: number | null): number {
  const afterBoot = uptimeMs === null ? 0 : o.delayAfterBootMs - uptimeMs;
  return Math.max(0, o.startupDelayMs, afterBoot);
}

export class VrrpOptionsError extends Error {}

/** A group with no gap, an interface in two groups, two groups for every other interface: keepalived warns and drops; lvsd refuses. */
function checkGarpGroups(groups: GarpGroupOptions[], err: (msg: string) => void): void {
  const owner = new Map<string, number>();
  let others: number | undefined;
  for (const [i, g] of groups.entries()) {
    for (const k of ['intervalMs', 'naIntervalMs'] as const) if (!(Number.isFinite(g[k]) && g[k] >= 0)) err(`garpGroups[${i}].${k}: ${g[k]} is not a duration ≥ 0`);
    if (!(g.intervalMs > 0 || g.naIntervalMs > 0)) err(`garpGroups[${i}]: neither intervalMs nor naIntervalMs is set (a group without a gap paces nothing)`);
    if (g.interfaces === undefined) {
      if (others !== undefined) err(`garpGroups[${i}]: garpGroups[${others}] already covers every interface no group lists`);
      others ??= i;
      continue;
    }
    if (g.interfaces.length === 0) err(`garpGroups[${i}].interfaces: empty`);
    for (const n of g.interfaces) {
      const o = owner.get(n);
      if (o !== undefined) err(`garpGroups[${i}].interfaces: ${n} is in garpGroups[${o}] already`);
      else owner.set(n, i);
    }
  }
}

const GARP_DEFAULTS = { masterDelayMs: 5000, masterRepeat: 5, masterRefreshMs: 0, masterRefreshRepeat: 1, intervalMs: 0, naIntervalMs: 0, extraIfMs: 0 };

/**
 * The GARP settings of one instance: its own over the global ones over keepalived's defaults. As in
 * keepalived, the lower-priority burst defaults to the *global* master burst (vrrp_garp_lower_prio_*
 * fall back to vrrp_garp_master_repeat / _delay), not to the instance's own garp_master_*.
 */
export function resolveGarp(global: GarpOptions | undefined, own: GarpOptions | undefined): Required<GarpOptions> {
  const g = { ...GARP_DEFAULTS, ...global };
  return { lowerPrioRepeat: g.masterRepeat, lowerPrioDelayMs: g.masterDelayMs, ...g, ...own };
}

export function normalizeOptions(o: VrrpOptions): NormalizedOptions {
  const errors: string[] = [];
  const seen = new Set<string>();
  const vridKeys = new Map<string, string>();
  const scripts: Record<string, Required<TrackScriptOptions>> = {};
  for (const [name, s] of Object.entries(o.scripts ?? {})) {
    if (s.command.trim() === '') errors.push(`scripts.${name}.command: empty`);
    scripts[name] = { command: s.command, intervalMs: s.intervalMs ?? 1000, timeoutMs: s.timeoutMs ?? s.intervalMs ?? 1000, rise: s.rise ?? 1, fall: s.fall ?? 1, weight: s.weight ?? 0, user: s.user ?? o.scriptUser ?? '' };
  }
  const groupOf = new Map<string, string>();
  for (const g of o.syncGroups ?? []) for (const i of g.instances) groupOf.set(i, g.name);
  const groups = { 4: o.multicastGroup4 ?? '224.0.0.18', 6: o.multicastGroup6 ?? 'ff02::12' } as const;
  if (!/^2(2[4-9]|3\d)\./.test(groups[4]) || familyOf(groups[4]) !== 4) errors.push(`multicastGroup4: ${groups[4]} is not an IPv4 multicast address`);
  if (!/^ff02:/i.test(groups[6]) || familyOf(groups[6]) !== 6) errors.push(`multicastGroup6: ${groups[6]} is not an IPv6 link-local multicast address`);
  const instances: NormalizedInstance[] = [];
  for (const [idx, i] of o.instances.entries()) {
    const where = `instances[${idx}] (${i.name})`;
    const err = (field: string, msg: string): void => {
      errors.push(`${where}.${field}: ${msg}`);
    };
    if (seen.has(i.name)) err('name', 'duplicate instance name');
    seen.add(i.name);
    const version = i.version ?? 3;
    if (!Number.isInteger(i.vrid) || i.vrid < 1 || i.vrid > 255) err('vrid', `${i.vrid} not in 1..255`);
    if (!Number.isInteger(i.priority) || i.priority < 1 || i.priority > 255) err('priority', `${i.priority} not in 1..255`);
    const ms = i.advertIntervalMs ?? 1000;
    if (version === 2 && (ms % 1000 !== 0 || ms < 1000 || ms > 255_000)) err('advertIntervalMs', `VRRPv2 needs whole seconds 1..255, got ${ms} ms`);
    if (version === 3 && (ms % 10 !== 0 || ms < 10 || ms > 40_950)) err('advertIntervalMs', `VRRPv3 needs 10..40950 ms in 10 ms steps, got ${ms} ms`);
    if (i.authPass !== undefined && version !== 2) err('authPass', 'authentication exists only in VRRPv2');
    if (i.authPass !== undefined && Buffer.byteLength(i.authPass) > 8) err('authPass', 'longer than 8 bytes');
    let family: Family | null = null;
    const parseVips = (list: (VipOptions | string)[], field: string, oneFamily: boolean): NormalizedVip[] => {
      const out: NormalizedVip[] = [];
      for (const [vi, v] of list.entries()) {
        const vo = typeof v === 'string' ? { address: v } : v;
        try {
          const c = parseCidr(vo.address);
          if (oneFamily && family !== null && c.family !== family) err(`${field}[${vi}]`, 'IPv4 and IPv6 VIPs cannot share one instance (one advert carries one family)');
          if (oneFamily) family ??= c.family;
          const { address: _a, dev: _d, ...addrOptions } = vo;
          const nv: NormalizedVip = { ...addrOptions, address: c.address, prefixLength: c.prefixLength, cidr: `${c.address}/${c.prefixLength}`, dev: vo.dev ?? i.interface };
          // The options must make a request the kernel can be sent (a peer of the other family, …).
          addressRequest(0, nv.cidr, addrOptions);
          out.push(nv);
        } catch (e) {
          err(`${field}[${vi}]`, e instanceof Error ? e.message : String(e));
        }
      }
      return out;
    };
    const vips = parseVips(i.vips, 'vips', true);
    const excludedVips = parseVips(i.excludedVips ?? [], 'excludedVips', false);
    for (const x of excludedVips) if (vips.some((v) => v.address === x.address)) err('excludedVips', `${x.address} is also in vips`);
    // keepalived 2.2.7 refuses a v3 instance without a VIP ("No VIP specified; at least one is required")
    // and only warns for v2, whose adverts then carry no address: the same here.
    if (vips.length === 0 && version === 3) err('vips', 'VRRPv3 needs at least one virtual address (only VRRPv2 instances may have none)');
    // Without VIPs the instance's family is that of its unicast addresses, else IPv4.
    const unicastAddr = i.unicastSrcIp ?? i.unicastPeers?.[0];
    family ??= unicastAddr !== undefined && familyOf(unicastAddr) === 6 ? 6 : 4;
    if (family === 6 && version === 2) err('version', 'VRRPv2 is IPv4 only');
    for (const p of [...(i.unicastPeers ?? []), ...(i.unicastSrcIp !== undefined ? [i.unicastSrcIp] : [])]) {
      if (familyOf(p) !== family) err('unicastPeers', `${p} is not an IPv${family} address like the VIPs`);
    }
    const group = i.multicastGroup ?? groups[family];
    if (i.multicastGroup !== undefined && (familyOf(i.multicastGroup) !== family || !(family === 4 ? /^2(2[4-9]|3\d)\./ : /^ff02:/i).test(i.multicastGroup))) {
      err('multicastGroup', `${i.multicastGroup} is not an IPv${family} ${family === 6 ? 'link-local ' : ''}multicast address like the VIPs`);
    }
    const key = `${i.interface}/${family}/${i.vrid}`;
    if (vridKeys.has(key)) err('vrid', `VRID ${i.vrid} already used on ${i.interface} by ${vridKeys.get(key) ?? ''}`);
    vridKeys.set(key, i.name);
    for (const t of i.trackScripts ?? []) if (!(t.name in scripts)) err('trackScripts', `no script named ${t.name}`);
    if (i.trackSrcIp === true && i.unicastSrcIp === undefined) err('trackSrcIp', 'needs unicastSrcIp (the address it tracks)');
    for (const t of i.trackProcesses ?? []) if (!(t.name in (o.processes ?? {}))) err('trackProcesses', `no process tracker named ${t.name}`);
    const n: NormalizedInstance = {
      name: i.name,
      interface: i.interface,
      vrid: i.vrid,
      priority: i.priority,
      version,
      family,
      intervalCs: Math.round(ms / 10),
      preempt: i.preempt ?? true,
      preemptDelayMs: i.preemptDelayMs ?? 0,
      accept: i.accept ?? false,
      unicastPeers: i.unicastPeers ?? [],
      multicastGroup: group,
      downTimerAdverts: i.downTimerAdverts ?? 3,
      oldUnicastChecksum: i.oldUnicastChecksum ?? 'auto',
      dontTrackPrimary: i.dontTrackPrimary ?? false,
      promoteSecondaries: i.promoteSecondaries ?? false,
      trackSrcIp: i.trackSrcIp ?? false,
      vips,
      excludedVips,
      trackInterfaces: (i.trackInterfaces ?? []).map((t) => ({ name: t.name, weight: t.weight ?? 0 })),
      trackScripts: (i.trackScripts ?? []).map((t) => ({ name: t.name, weight: t.weight ?? scripts[t.name]?.weight ?? 0 })),
      trackFiles: (i.trackFiles ?? []).map((t) => ({ path: t.path, weight: t.weight ?? 1 })),
      trackProcesses: (i.trackProcesses ?? []).map((t) => ({ name: t.name, weight: t.weight ?? o.processes?.[t.name]?.weight ?? 1, reverse: t.reverse ?? o.processes?.[t.name]?.reverse ?? false })),
      notify: i.notify ?? {},
      notifyDeleted: (i.notifyDeleted ?? false) || i.notify?.deleted !== undefined,
      garp: resolveGarp(o.garp, i.garp),
      lowerPrioNoAdvert: i.lowerPrioNoAdvert ?? o.lowerPrioNoAdvert ?? false,
      higherPrioSendAdvert: i.higherPrioSendAdvert ?? o.higherPrioSendAdvert ?? false,
    };
    for (const k of ['masterRepeat', 'lowerPrioRepeat'] as const) {
      const v = n.garp[k];
      if (!Number.isInteger(v) || v < 0) err(`garp.${k}`, `${v} is not a whole number ≥ 0`);
    }
    if (i.authPass !== undefined) n.authPass = i.authPass;
    if (i.unicastSrcIp !== undefined) n.unicastSrcIp = i.unicastSrcIp;
    if (!Number.isInteger(n.downTimerAdverts) || n.downTimerAdverts < 1 || n.downTimerAdverts > 100) err('downTimerAdverts', `${n.downTimerAdverts} not in 1..100`);
    if (!['auto', 'always', 'never'].includes(n.oldUnicastChecksum)) err('oldUnicastChecksum', `${n.oldUnicastChecksum} is not auto, always or never`);
    if (i.unicastTtl !== undefined) {
      if (!Number.isInteger(i.unicastTtl) || i.unicastTtl < 1 || i.unicastTtl > 255) err('unicastTtl', `${i.unicastTtl} not in 1..255`);
      else if (n.unicastPeers.length === 0) err('unicastTtl', 'needs unicastPeers');
      n.unicastTtl = i.unicastTtl;
    }
    const g = groupOf.get(i.name);
    if (g !== undefined) n.group = g;
    const routes = normalizeRoutes(i.virtualRoutes ?? [], err);
    if (routes.length > 0) n.virtualRoutes = routes;
    const rules = normalizeRules(i.virtualRules ?? [], err);
    if (rules.length > 0) n.virtualRules = rules;
    if (i.vmac !== undefined && i.ipvlan !== undefined) err('ipvlan', 'an instance uses vmac or ipvlan, not both');
    const link = i.vmac ?? i.ipvlan;
    const field = i.vmac !== undefined ? 'vmac' : 'ipvlan';
    if (link !== undefined) {
      const name = link.name ?? `vrrp.${i.vrid}`;
      // IFNAMSIZ: 15 bytes and a NUL; no '/' or blanks (the kernel's dev_valid_name).
      if (name.length > 15 || !/^[^\s/:]+$/.test(name) || name === '.' || name === '..') err(`${field}.name`, `${JSON.stringify(name)} is not a valid interface name (1..15 characters, no blank, '/' or ':')`);
      if (name === i.interface) err(`${field}.name`, `the virtual MAC interface cannot be the instance's own interface ${i.interface}`);
      const other = instances.find((x) => x.vmac?.name === name);
      if (other !== undefined) err(`${field}.name`, `${name} is already the virtual MAC interface of ${other.name}`);
      n.vmac = { name, parent: i.interface, xmitBase: i.vmac?.xmitBase ?? false };
      if (i.ipvlan !== undefined) {
        const type = i.ipvlan.type ?? 'bridge';
        if (!(type in IPVLAN_FLAGS)) err('ipvlan.type', `${type} is not bridge, private or vepa`);
        n.vmac.ipvlan = { type };
        const a = i.ipvlan.address;
        if (a !== undefined) {
          let c: ReturnType<typeof parseCidr> | null = null;
          try {
            c = parseCidr(a);
          } catch {
            c = null;
          }
          if (c === null) err('ipvlan.address', `${a} is not an address or address/prefix`);
          else if (c.family !== family) err('ipvlan.address', `${a} is not an IPv${family} address like the instance's`);
          else {
            n.vmac.ipvlan.address = `${c.address}/${c.prefixLength}`;
            // keepalived: the ipvlan's address is the adverts' source unless one is configured.
            n.unicastSrcIp ??= c.address;
          }
        } else if (family === 4) err('ipvlan.address', 'an IPv4 instance on an ipvlan needs an address for it (keepalived 2.2.7: "IPv4 ipvlan requires a source ip address", the instance stays in FAULT)');
      }
    }
    instances.push(n);
  }
  for (const g of o.syncGroups ?? []) {
    for (const m of g.instances) if (!seen.has(m)) errors.push(`syncGroups (${g.name}).instances: no instance named ${m}`);
  }
  if (o.realtimePriority !== undefined && (!Number.isInteger(o.realtimePriority) || o.realtimePriority < 1 || o.realtimePriority > 99)) {
    errors.push(`realtimePriority: ${o.realtimePriority} not in 1..99`);
  }
  for (const k of ['startupDelayMs', 'delayAfterBootMs'] as const) {
    const v = o[k];
    if (v !== undefined && !(Number.isFinite(v) && v >= 0)) errors.push(`${k}: ${v} is not a duration ≥ 0`);
  }
  const statics = normalizeStatics(o, (field, msg) => errors.push(`${field}: ${msg}`));
  const interfaceUpDownDelays: Record<string, UpDownDelays> = {};
  for (const [name, d] of Object.entries(o.interfaceUpDownDelays ?? {})) {
    const delays = { downMs: d.downMs, upMs: d.upMs ?? 0 };
    for (const k of ['downMs', 'upMs'] as const) {
      if (!(Number.isFinite(delays[k]) && delays[k] >= 0 && delays[k] <= 255_000)) errors.push(`interfaceUpDownDelays.${name}.${k}: ${delays[k]} is not a delay of 0..255 s`);
    }
    interfaceUpDownDelays[name] = delays;
  }
  const nftables: VmacNftSettings = { ...DEFAULT_VMAC_NFT, ...o.nftables };
  // nft's own grammar for a table name (keepalived allows 255 characters); a chain priority is an int32.
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,254}$/.test(nftables.table)) errors.push(`nftables.table: ${JSON.stringify(nftables.table)} is not an nftables table name (a letter or _, then letters, digits, _ . -)`);
  if (!Number.isInteger(nftables.priority) || Math.abs(nftables.priority) > 2 ** 31 - 1) errors.push(`nftables.priority: ${nftables.priority} is not a 32-bit integer`);
  const garpGroups = o.garpGroups ?? [];
  checkGarpGroups(garpGroups, (msg) => errors.push(msg));
  if (errors.length > 0) throw new VrrpOptionsError(`invalid VRRP options:\n  ${errors.join('\n  ')}`);
  for (const [name, p] of Object.entries(o.processes ?? {})) {
    if (p.process === '') errors.push(`processes.${name}.process: empty`);
    for (const k of ['quorum', 'quorumMax'] as const) {
      const v = p[k];
      if (v !== undefined && !(Number.isInteger(v) && v >= 0)) errors.push(`processes.${name}.${k}: ${v} is not a whole number ≥ 0`);
    }
    if (p.quorumMax !== undefined && p.quorumMax < (p.quorum ?? 1)) errors.push(`processes.${name}.quorumMax: ${p.quorumMax} is below quorum ${p.quorum ?? 1}`);
  }
  const out: NormalizedOptions = { instances, syncGroups: o.syncGroups ?? [], scripts, processes: o.processes ?? {}, scriptSecurity: o.scriptSecurity ?? false, startupDelayMs: o.startupDelayMs ?? 0, delayAfterBootMs: o.delayAfterBootMs ?? 0, interfaceUpDownDelays, statics, disableLocalIgmp: o.disableLocalIgmp ?? false, nftables, garpGroups };
  if (o.scriptUser !== undefined) out.scriptUser = o.scriptUser;
  if (o.notifyFifo !== undefined) out.notifyFifo = o.notifyFifo;
  if (o.realtimePriority !== undefined) out.realtimePriority = o.realtimePriority;
  return out;
}
