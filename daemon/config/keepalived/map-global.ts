// global_defs → node, ipvs (sync daemon, timeouts) and vrrp.garp.
import { isIP } from 'node:net';
import type { Directive } from './parser.js';
import type { ConfigOut, GarpOut, LifecycleScriptOut } from './lvsd-shape.js';
import { BlockReader, type Context } from './reader.js';
import { safeName } from './names.js';
import { STRICT_NOT_CARRIED } from './unsupported.js';
import { mapGlobalMail, type GlobalMail } from './map-alerts.js';
import { readGarpDefault, type GarpDefault } from './map-garp.js';

export interface GlobalResult {
  node?: ConfigOut['node'];
  ipvs?: ConfigOut['ipvs'];
  garp?: GarpOut;
  /** vrrp_garp_interval / vrrp_gna_interval: the GARP queue of every interface no garp_group lists (map-garp.ts). */
  garpDefault?: GarpDefault;
  /** vrrp_version: default version of instances that do not say. */
  vrrpVersion?: 2 | 3;
  /** lvs_sync_daemon … inst NAME without an explicit id: the id is that instance's VRID. */
  syncIdFromInstance?: string;
  /** vrrp_strict: accept mode defaults to off. */
  strict: boolean;
  /** vrrp_rt_priority: SCHED_RR priority of the VRRP thread. */
  realtimePriority?: number;
  /** vrrp_lower_prio_no_advert, vrrp_higher_prio_send_advert. */
  lowerPrioNoAdvert?: boolean;
  /** vrrp_down_timer_adverts: the default of every instance's down_timer_adverts. */
  downTimerAdverts?: { value: number; d: Directive };
  higherPrioSendAdvert?: boolean;
  /** vrrp_startup_delay, vrrp_delay_after_boot, with their directives (for the source comments). */
  startupDelay?: { value: string; d: Directive };
  /** vmac_prefix: the name of a use_vmac interface without one is PREFIX.VRID (keepalived's default vrrp). */
  vmacPrefix?: { value: string; d: Directive };
  delayAfterBoot?: { value: string; d: Directive };
  /** checker_log_all_failures on: imported onto every checker. */
  checkerLogAllFailures?: Directive;
  /** notification_email and the smtp_* settings (map-alerts.ts). */
  mail?: GlobalMail;
  /** script_user USER [GROUP] as "user[:group]"; enable_script_security. */
  scriptUser?: { value: string; d: Directive };
  scriptSecurity?: Directive;
  /** vrrp_notify_fifo (or notify_fifo) and its _script. */
  notifyFifo?: { path: string; script?: string; d: Directive; scriptD?: Directive };
  /** vrrp_mcast_group4 / vrrp_mcast_group6. */
  multicastGroup4?: { value: string; d: Directive };
  multicastGroup6?: { value: string; d: Directive };
  /** disable_local_igmp. */
  disableLocalIgmp?: Directive;
  /** nftables [NAME], nftables_priority, nftables_counters: the VMAC IGMP/MLD table's settings. */
  nftables?: NonNullable<NonNullable<ConfigOut['vrrp']>['nftables']>;
}

export function mapGlobalDefs(ctx: Context, items: Directive[]): GlobalResult {
  const r = new BlockReader(ctx, items, 'global_defs');
  const out: GlobalResult = { strict: false };

  const routerId = r.last('router_id');
  const name = r.str(routerId);
  if (routerId && name !== undefined) {
    const node = { name: safeName(ctx, routerId, name) };
    ctx.source.at(node, 'name', routerId.pos);
    out.node = node;
  }

  for (const [kw, key] of [['startup_script', 'startupScript'], ['shutdown_script', 'shutdownScript']] as const) {
    const script = lifecycleScript(r, kw);
    if (script !== undefined) out.node = { ...out.node, [key]: script };
  }

  const lafD = r.last('checker_log_all_failures');
  if (lafD && r.bool(lafD) === true) out.checkerLogAllFailures = lafD;

  const sync = r.last('lvs_sync_daemon');
  if (sync) mapSyncDaemon(ctx, sync, out);

  const timeouts = r.last('lvs_timeouts');
  if (timeouts) {
    const t: NonNullable<NonNullable<ConfigOut['ipvs']>['timeouts']> = {};
    const keys: Record<string, 'tcp' | 'tcpFin' | 'udp'> = { tcp: 'tcp', tcpfin: 'tcpFin', udp: 'udp' };
    for (let i = 0; i < timeouts.args.length; i += 2) {
      const key = keys[timeouts.args[i] ?? ''];
      const v = r.timer(timeouts, i + 1);
      if (key === undefined) ctx.reportDirective(timeouts, `unknown timeout ${timeouts.args[i] ?? ''}; expected tcp, tcpfin or udp`);
      else if (v !== undefined) {
        t[key] = v;
        ctx.source.at(t, key, timeouts.pos);
      }
    }
    out.ipvs = { ...out.ipvs, timeouts: t };
  }

  const rt = r.last('vrrp_rt_priority');
  const rtPriority = r.int(rt, 1, 99);
  if (rtPriority !== undefined) out.realtimePriority = rtPriority;

  const garp: GarpOut = {};
  mapGarp(r, garp, 'vrrp_');
  if (r.bool(r.last('vrrp_min_garp')) === true) {
    garp.masterRepeat = 1;
    garp.masterDelay = '0s';
    ctx.note(garp, 'vrrp_min_garp: one gratuitous ARP, no second burst');
  }
  const garpDefault = readGarpDefault(r);
  if (garpDefault !== undefined) out.garpDefault = garpDefault;
  const userD = r.last('script_user');
  if (userD?.args[0] !== undefined) out.scriptUser = { value: userD.args.slice(0, 2).join(':'), d: userD };
  // keepalived writes VRRP events to both notify_fifo and vrrp_notify_fifo; lvsd has one VRRP FIFO.
  const fifoD = r.last('vrrp_notify_fifo') ?? r.last('notify_fifo');
  const fifoScriptD = fifoD?.keyword === 'vrrp_notify_fifo' ? r.last('vrrp_notify_fifo_script') : r.last('notify_fifo_script');
  if (fifoD?.args[0] !== undefined) {
    out.notifyFifo = { path: fifoD.args[0], d: fifoD };
    if (fifoD.args.length > 1) ctx.reportDirective(fifoD, 'the FIFO\'s owner is not carried over; lvsd creates it as its own user');
    const script = r.str(fifoScriptD);
    if (fifoScriptD && script !== undefined) Object.assign(out.notifyFifo, { script, scriptD: fifoScriptD });
    const other = fifoD.keyword === 'vrrp_notify_fifo' ? r.last('notify_fifo') : undefined;
    if (other) ctx.reportDirective(other, 'lvsd writes VRRP events to one FIFO (vrrp_notify_fifo, carried over); checker events are not written to a FIFO');
  }
  r.ignore('vrrp_notify_fifo_script', 'notify_fifo_script');
  const securityD = r.last('enable_script_security');
  if (securityD) out.scriptSecurity = securityD;
  for (const [kw, key, family] of [['vrrp_mcast_group4', 'multicastGroup4', 4], ['vrrp_mcast_group6', 'multicastGroup6', 6]] as const) {
    const d = r.last(kw);
    const v = r.str(d);
    if (!d || v === undefined) continue;
    // keepalived skips one that is not a multicast address of its family ("… is not multicast. Skipping").
    const ok = family === 4 ? isIP(v) === 4 && Number(v.split('.')[0]) >= 224 && Number(v.split('.')[0]) <= 239 : isIP(v) === 6 && /^ff02:/i.test(v);
    if (ok) out[key] = { value: v, d };
    else ctx.reportDirective(d, `${v} is not ${family === 4 ? 'an IPv4 multicast address' : 'an IPv6 link-local multicast address (ff02::/16)'}; not carried over (keepalived skips it too${family === 6 ? ', or warns for a wider scope' : ''})`);
  }
  if (Object.keys(garp).length > 0) out.garp = garp;
  const vmacPrefixD = r.last('vmac_prefix');
  const vmacPrefix = r.str(vmacPrefixD);
  if (vmacPrefixD && vmacPrefix !== undefined) out.vmacPrefix = { value: vmacPrefix, d: vmacPrefixD };
  const startupD = r.last('vrrp_startup_delay');
  const startupDelay = r.timer(startupD);
  if (startupD && startupDelay !== undefined) out.startupDelay = { value: startupDelay, d: startupD };
  const igmpD = r.last('disable_local_igmp');
  if (igmpD) out.disableLocalIgmp = igmpD;
  mapNftables(ctx, r, out);
  const afterBootD = r.last('vrrp_delay_after_boot');
  const afterBoot = r.timer(afterBootD);
  if (afterBootD && afterBoot !== undefined) out.delayAfterBoot = { value: afterBoot, d: afterBootD };
  const downD = r.last('vrrp_down_timer_adverts');
  const down = r.int(downD, 1, 100);
  if (downD && down !== undefined) out.downTimerAdverts = { value: down, d: downD };
  const noAdvert = r.bool(r.last('vrrp_lower_prio_no_advert'));
  if (noAdvert !== undefined) out.lowerPrioNoAdvert = noAdvert;
  const sendAdvert = r.bool(r.last('vrrp_higher_prio_send_advert'));
  if (sendAdvert !== undefined) out.higherPrioSendAdvert = sendAdvert;

  const version = r.last('vrrp_version');
  const v = r.int(version, 2, 3);
  if (v === 2 || v === 3) out.vrrpVersion = v;

  // vrrp_strict changes defaults we do carry (accept mode) and adds checks we do not.
  const strict = r.last('vrrp_strict');
  if (strict) {
    out.strict = true;
    ctx.reportDirective(strict, STRICT_NOT_CARRIED);
  }

  const mail = mapGlobalMail(r);
  if (mail !== undefined) out.mail = mail;

  // No effect to carry: lvsd needs an interface on every instance, and static addresses are not imported.
  r.ignore('default_interface');
  // lvsd mails a real server's own change of state only, never one checker's among several (mail-supervisor.ts:
  // health.change): what keepalived's no_checker_emails asks for, always.
  r.ignore('no_checker_emails');
  // What keepalived's dynamic_interfaces [allow_if_changes] asks for, lvsd always does (vrrp/runtime.ts rebindFor):
  // an instance whose interface is missing waits in FAULT and comes up once it is made, again after a re-creation.
  r.ignore('dynamic_interfaces');
  r.finish();
  return out;
}

/** vrrp_garp_master_delay & co. (prefix "vrrp_") in global_defs; the same names without the prefix in an instance. */
export function mapGarp(r: BlockReader, garp: GarpOut, prefix: string): void {
  const set = <K extends keyof GarpOut>(key: K, d: Directive | undefined, value: GarpOut[K] | undefined): void => {
    if (!d || value === undefined) return;
    garp[key] = value;
    r.ctx.source.at(garp, key, d.pos);
  };
  const delay = r.last(`${prefix}garp_master_delay`);
  set('masterDelay', delay, r.timer(delay));
  const repeat = r.last(`${prefix}garp_master_repeat`);
  set('masterRepeat', repeat, r.int(repeat, 0, 1000));
  const refresh = r.last(`${prefix}garp_master_refresh`);
  set('masterRefresh', refresh, r.timer(refresh));
  const refreshRepeat = r.last(`${prefix}garp_master_refresh_repeat`);
  set('masterRefreshRepeat', refreshRepeat, r.int(refreshRepeat, 0, 1000));
  const lowerDelay = r.last(`${prefix}garp_lower_prio_delay`);
  set('lowerPrioDelay', lowerDelay, r.timer(lowerDelay));
  const lowerRepeat = r.last(`${prefix}garp_lower_prio_repeat`);
  set('lowerPrioRepeat', lowerRepeat, r.int(lowerRepeat, 0, 1000));
  mapGarpExtraIf(r, garp, prefix);
}

/**
 * garp_extra_if [all] N (and its old spelling vmac_garp_intvl; vrrp_ in global_defs). With `all`, keepalived
 * sends on every other interface of the VIPs: extraIf. Without, only on VMAC interfaces of VIPs on another
 * interface (virtual_ipaddress … use_vmac), which lvsd does not create: nothing would be sent, so 0s (it
 * also overrides a global `all`, as in keepalived).
 */
function mapGarpExtraIf(r: BlockReader, garp: GarpOut, prefix: string): void {
  const d = r.last(`${prefix}garp_extra_if`, `${prefix}vmac_garp_intvl`);
  if (!d) return;
  const all = d.args.includes('all');
  const raw = d.args.filter((a) => a !== 'all');
  const n = raw.length === 1 && /^\d+$/.test(raw[0] ?? '') ? Number(raw[0]) : NaN;
  // keepalived: 1..86400 in global_defs, 0..86400 in an instance (0 = off).
  if (!(n >= (prefix === '' ? 0 : 1) && n <= 86400)) {
    r.ctx.reportDirective(d, `${raw.join(' ') || '(missing)'} is not a number of seconds ${prefix === '' ? 0 : 1}..86400; not carried over`);
    return;
  }
  garp.extraIf = all ? `${n}s` : '0s';
  r.ctx.source.at(garp, 'extraIf', d.pos);
  if (!all && n > 0) r.ctx.note(garp, `${d.keyword} without all: keepalived sends these only on the VMACs of VIPs on other interfaces, which lvsd does not create; off`);
}

function mapSyncDaemon(ctx: Context, d: Directive, out: GlobalResult): void {
  const [iface, ...rest] = d.args;
  if (iface === undefined) {
    ctx.reportDirective(d, 'missing interface; not carried over');
    return;
  }
  const sd: NonNullable<NonNullable<ConfigOut['ipvs']>['syncDaemon']> = { interface: iface };
  ctx.source.self(sd, d.pos);
  const num = (raw: string | undefined, min: number, max: number, what: string): number | undefined => {
    const v = Number(raw);
    if (raw === undefined || !/^\d+$/.test(raw) || v < min || v > max) {
      ctx.reportDirective(d, `${what} ${raw ?? '(missing)'} is not in ${min}..${max}; not carried over`);
      return undefined;
    }
    return v;
  };
  let instance: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] ?? '';
    const value = rest[i + 1];
    switch (word) {
      case 'inst':
        instance = value;
        i++;
        break;
      case 'id':
        sd.syncId = num(value, 0, 255, 'id');
        i++;
        break;
      case 'maxlen':
        sd.maxLen = num(value, 1, 65507, 'maxlen');
        i++;
        break;
      case 'port':
        sd.port = num(value, 1, 65535, 'port');
        i++;
        break;
      case 'ttl':
        sd.ttl = num(value, 1, 255, 'ttl');
        i++;
        break;
      case 'group':
        if (value !== undefined && isIP(value) !== 0) sd.mcastGroup = value;
        else ctx.reportDirective(d, `group ${value ?? '(missing)'} is not an IP address; not carried over`);
        i++;
        break;
      default:
        // Backward-compatible form: the instance name without "inst".
        if (i === 0) instance = word;
        else ctx.reportDirective(d, `unknown option ${word}; not carried over`);
    }
  }
  for (const k of Object.keys(sd) as (keyof typeof sd)[]) if (sd[k] === undefined) Reflect.deleteProperty(sd, k);
  if (instance !== undefined) {
    // keepalived (vrrp.c): the named instance's MASTER state starts the master daemon, leaving it the backup.
    ctx.note(sd, `keepalived tied the sync daemon to ${instance}; lvsd runs it as master on the VRRP master and backup on backups (role: follow-vrrp)`);
    if (sd.syncId === undefined) out.syncIdFromInstance = instance;
  } else {
    // keepalived without an instance: its checker process starts the master and the backup daemon at once.
    sd.role = 'both';
    ctx.note(sd, 'keepalived ran master and backup sync daemons at once, without an instance; so does role: both');
  }
  // keepalived leaves net.ipv4.vs.sync_* as the kernel has them (3 50, refresh 0); lvsd writes its defaults.
  ctx.note(sd, 'lvsd writes the sync sysctls (threshold 3, thresholdPeriod 0, refreshPeriod 60s) so idle connections stay synced; keepalived left the kernel\'s sync_threshold 3 50');
  out.ipvs = { ...out.ipvs, syncDaemon: sd };
}

/**
 * keepalived's nftables settings name the table it installs for VMAC interfaces' IGMP/MLD reports, which
 * lvsd installs too (vrrp.nftables). keepalived's table also filters VIPs for no_accept / vrrp_strict
 * instances; lvsd does not (vrrp_strict is reported on its own). A bare `nftables` names keepalived's
 * default table: lvsd keeps its own default name then.
 */
function mapNftables(ctx: Context, r: BlockReader, out: GlobalResult): void {
  const nft: NonNullable<GlobalResult['nftables']> = {};
  const tableD = r.last('nftables');
  const table = tableD?.args[0];
  if (tableD && table !== undefined) {
    if (/^[A-Za-z_][A-Za-z0-9_.-]{0,254}$/.test(table)) {
      nft.table = table;
      ctx.source.at(nft, 'table', tableD.pos);
    } else ctx.reportDirective(tableD, `${table} is not an nftables table name; lvsd's default lvsd_vrrp is used`);
  }
  const prioD = r.last('nftables_priority');
  const prio = r.int(prioD, -2147483648, 2147483647);
  if (prioD && prio !== undefined) {
    nft.priority = prio;
    ctx.source.at(nft, 'priority', prioD.pos);
  }
  const countersD = r.last('nftables_counters');
  if (countersD) {
    nft.counters = true;
    ctx.source.at(nft, 'counters', countersD.pos);
  }
  if (Object.keys(nft).length > 0) out.nftables = nft;
}

/**
 * startup_script / shutdown_script SCRIPT [USER [GROUP]] and its _timeout (1..1000 s, keepalived's default
 * 10 s, lvsd's too). keepalived keeps the first of two ("script already specified"); so does the import.
 */
function lifecycleScript(r: BlockReader, kw: 'startup_script' | 'shutdown_script'): LifecycleScriptOut | undefined {
  const [d, ...again] = r.all(kw);
  for (const x of again) r.ctx.reportDirective(x, `${kw} already given at ${r.ctx.displayPos(d?.pos ?? x.pos)}: keepalived keeps the first, and so does the import`);
  const timeoutD = r.last(`${kw}_timeout`);
  const command = r.str(d);
  if (d === undefined || command === undefined) {
    if (timeoutD) r.ctx.reportDirective(timeoutD, `no ${kw}: nothing to time out`);
    return undefined;
  }
  const out: LifecycleScriptOut = { command };
  r.ctx.source.self(out, d.pos);
  r.ctx.source.at(out, 'command', d.pos);
  if (d.args.length > 1) {
    out.user = d.args.slice(1, 3).join(':');
    r.ctx.source.at(out, 'user', d.pos);
  }
  const timeout = r.int(timeoutD, 1, 1000);
  if (timeoutD && timeout !== undefined) {
    out.timeout = `${timeout}s`;
    r.ctx.source.at(out, 'timeout', timeoutD.pos);
  }
  return out;
}
