// vrrp_script, track_file, vrrp_instance and vrrp_sync_group → vrrp.scripts, vrrp.instances,
// vrrp.syncGroups. keepalived's defaults that differ from lvsd's (version 2, accept mode on) are
// written out explicitly so the imported director behaves the same.
import { readSmtpAlert } from './map-alerts.js';
import { isIP } from 'node:net';
import type { NamedBlock } from './ast.js';
import type { Directive } from './parser.js';
import type { GarpOut, InstanceOut, NotifyOut, ProcessOut, ScriptOut, SyncGroupOut, VipOut } from './lvsd-shape.js';
import { BlockReader, seconds, type Context } from './reader.js';
import { mapGarp, type GlobalResult } from './map-global.js';
import { STRICT_NOT_CARRIED } from './unsupported.js';
import { safeName, toSafeName } from './names.js';
import { mapVmac } from './map-vmac.js';
import { mapVirtualRoutes } from './map-routes.js';

export interface VrrpResult {
  scripts: Record<string, ScriptOut>;
  instances: InstanceOut[];
  syncGroups: SyncGroupOut[];
  /** Interfaces named by lvs_sync_daemon_interface inside an instance, with the instance's VRID. */
  syncDaemonInterface?: { iface: string; vrid: number; d: Directive };
  vridByInstance: Map<string, number>;
}

export function mapVrrpScript(ctx: Context, b: NamedBlock): ScriptOut | undefined {
  const r = new BlockReader(ctx, b.body, 'vrrp_script');
  const scriptD = r.last('script');
  const command = r.str(scriptD);
  if (!scriptD || command === undefined) {
    r.discard();
    ctx.report(b.pos, 'vrrp_script', `${b.name} has no script; not carried over`);
    return undefined;
  }
  const s: ScriptOut = { command };
  ctx.source.self(s, b.pos);
  ctx.source.at(s, 'command', scriptD.pos);
  const put = <K extends keyof ScriptOut>(key: K, d: Directive | undefined, v: ScriptOut[K] | undefined): void => {
    if (!d || v === undefined) return;
    s[key] = v;
    ctx.source.at(s, key, d.pos);
  };
  const interval = r.last('interval');
  put('interval', interval, r.timer(interval));
  // keepalived's default interval is 1s, like lvsd's; its default timeout is the interval, like lvsd's.
  const timeout = r.last('timeout');
  put('timeout', timeout, r.timer(timeout));
  const rise = r.last('rise');
  put('rise', rise, r.int(rise, 1, 1000));
  const fall = r.last('fall');
  put('fall', fall, r.int(fall, 1, 1000));
  const weight = r.last('weight');
  put('weight', weight, r.int(weight, -253, 253));
  if (weight?.args.slice(1).includes('reverse')) ctx.reportDirective(weight, 'reverse is not supported by lvsd; the weight is carried over without it');
  const user = r.last('user');
  put('user', user, user?.args[0] === undefined ? undefined : user.args.slice(0, 2).join(':'));
  r.drop('lvsd starts every script as not yet run (neither up nor down) until rise/fall decide', 'init_fail');
  r.finish();
  return s;
}

export interface TrackFile {
  path: string;
  weight: number;
  /** weight … reverse: carried by a real server's FILE_CHECK, refused on VRRP tracking. */
  reverse: Directive | undefined;
}

export function mapTrackFile(ctx: Context, b: NamedBlock): TrackFile | undefined {
  const r = new BlockReader(ctx, b.body, 'track_file');
  const file = r.str(r.last('file'));
  const weightD = r.last('weight');
  const weight = r.int(weightD, -254, 254) ?? 1;
  const reverse = weightD?.args.slice(1).includes('reverse') === true ? weightD : undefined;
  r.drop('lvsd does not create or initialise tracked files; create it in the unit (ExecStartPre=) or with tmpfiles.d', 'init_file');
  if (file === undefined) r.discard();
  r.finish();
  if (file === undefined) {
    ctx.report(b.pos, 'track_file', `${b.name} has no file; not carried over`);
    return undefined;
  }
  return { path: file, weight, reverse };
}

interface InstanceEnv {
  global: GlobalResult;
  trackFiles: Map<string, TrackFile>;
  scripts: Record<string, ScriptOut>;
  processes: Record<string, ProcessOut>;
}

export function mapVrrpInstance(ctx: Context, b: NamedBlock, env: InstanceEnv, result: VrrpResult): InstanceOut | undefined {
  const r = new BlockReader(ctx, b.body, 'vrrp_instance');
  const name = safeName(ctx, b.directive, b.name);

  const ifaceD = r.last('interface');
  const iface = r.str(ifaceD);
  const vridD = r.last('virtual_router_id');
  const vrid = r.int(vridD, 1, 255);

  const vips: VipOut[] = [];
  const vipSource = new Map<VipOut, Directive>();
  const pendingNotes: string[] = [];
  const familyOf = (v: VipOut): 4 | 6 => ((typeof v === 'string' ? v : v.address).includes(':') ? 6 : 4);
  let family: 4 | 6 | undefined;
  const addressOf = (v: VipOut): string => (typeof v === 'string' ? v : v.address).split('/')[0] ?? '';
  const excludedVips: VipOut[] = [];
  const isDuplicate = (v: VipOut): boolean => [...vips, ...excludedVips].some((x) => addressOf(x) === addressOf(v));
  // virtual_ipaddress_excluded: held with the state like the VIPs but not advertised; keepalived adds
  // them whatever their family (measured: an IPv6 one in an IPv4 instance is added too).
  for (const keyword of ['virtual_ipaddress', 'virtual_ipaddress_excluded'] as const) {
    const excluded = keyword === 'virtual_ipaddress_excluded';
    for (const block of r.all(keyword)) {
      for (const line of block.block ?? []) {
        const vip = mapVip(ctx, line);
        if (vip === undefined) continue;
        if (isDuplicate(vip)) {
          pendingNotes.push(`${line.keyword} (${ctx.displayPos(line.pos)}) listed twice; kept once`);
          continue;
        }
        if (excluded) {
          excludedVips.push(vip);
          vipSource.set(vip, line);
          continue;
        }
        // keepalived: the first VIP sets the instance's family; others are ignored ("address family must match").
        family ??= familyOf(vip);
        if (familyOf(vip) !== family) {
          pendingNotes.push(`${line.keyword} (${ctx.displayPos(line.pos)}) dropped: keepalived ignores a VIP of the other address family`);
          continue;
        }
        vips.push(vip);
        vipSource.set(vip, line);
      }
    }
  }

  const hasV6 = family === 6;
  const versionD = r.last('version');
  let version: 2 | 3 = env.global.vrrpVersion ?? 2;
  const explicitVersion = r.int(versionD, 2, 3);
  if (explicitVersion === 2 || explicitVersion === 3) version = explicitVersion;
  if (hasV6 && version === 2) {
    version = 3;
  }

  const missing: string[] = [];
  if (iface === undefined) missing.push('an interface');
  if (vrid === undefined) missing.push('a virtual_router_id');
  if (iface === undefined || vrid === undefined) {
    r.discard();
    ctx.report(b.pos, 'vrrp_instance', `${b.name}: lvsd needs ${missing.join(', ')}; instance not carried over`);
    return undefined;
  }
  // keepalived 2.2.7 accepts a VRRPv2 instance without a VIP ("at least one is sensible") and refuses
  // a VRRPv3 one ("No VIP specified; at least one is required", keepalived exits): measured, lvsd alike.
  if (vips.length === 0 && version === 3) {
    r.discard();
    ctx.report(b.pos, 'vrrp_instance', `${b.name}: a VRRPv3 instance needs a virtual_ipaddress (keepalived 2.2.7 refuses it too: "No VIP specified; at least one is required"); instance not carried over`);
    return undefined;
  }
  result.vridByInstance.set(name, vrid);

  const advertD = r.last('advert_int');
  const inst: InstanceOut = {
    name,
    interface: iface,
    virtualRouterId: vrid,
    version,
    advertInterval: mapAdvertInterval(ctx, r, advertD, version, pendingNotes),
  };
  if (vips.length > 0) inst.virtualIpaddresses = vips;
  else pendingNotes.push('no virtual_ipaddress: a VRRPv2 instance of tracking and notify only, as keepalived allows (its adverts carry no address)');
  if (excludedVips.length > 0) inst.virtualIpaddressesExcluded = excludedVips;
  ctx.source.self(inst, b.pos);
  for (const n of pendingNotes) ctx.note(inst, n);
  if (ifaceD) ctx.source.at(inst, 'interface', ifaceD.pos);
  if (vridD) ctx.source.at(inst, 'virtualRouterId', vridD.pos);
  if (versionD) ctx.source.at(inst, 'version', versionD.pos);
  else ctx.note(inst, hasV6 ? 'IPv6 VIPs: keepalived uses VRRPv3' : `keepalived's default VRRP version is ${env.global.vrrpVersion ?? 2}`);
  if (advertD) ctx.source.at(inst, 'advertInterval', advertD.pos);
  for (const [vip, line] of vipSource) if (typeof vip === 'object') ctx.source.self(vip, line.pos);
  for (const list of [vips, excludedVips]) {
    list.forEach((vip, i) => {
      const line = vipSource.get(vip);
      if (line) ctx.source.at(list, String(i), line.pos);
    });
  }

  const stateD = r.last('state');
  const state = stateD?.args[0]?.toUpperCase();
  if (stateD && (state === 'MASTER' || state === 'BACKUP')) {
    inst.state = state;
    ctx.source.at(inst, 'state', stateD.pos);
  } else if (stateD) ctx.reportDirective(stateD, `state ${stateD.args[0] ?? '(missing)'} is not MASTER or BACKUP; not carried over`);

  const prioD = r.last('priority');
  const prio = r.int(prioD, 1, 255);
  if (prioD && prio !== undefined) {
    inst.priority = prio;
    ctx.source.at(inst, 'priority', prioD.pos);
  }

  const nopreempt = r.last('nopreempt', 'no_preempt');
  r.ignore('preempt');
  if (nopreempt) {
    inst.preempt = false;
    ctx.source.at(inst, 'preempt', nopreempt.pos);
  }
  const delayD = r.last('preempt_delay');
  const delay = r.timer(delayD);
  if (delayD && delay !== undefined) {
    inst.preemptDelay = delay;
    ctx.source.at(inst, 'preemptDelay', delayD.pos);
  }

  // keepalived: accept mode is on unless no_accept or strict mode; lvsd's default is off (RFC 5798).
  const acceptD = r.last('accept');
  const noAcceptD = r.last('no_accept');
  const strictD = r.last('strict_mode');
  const strict = strictD ? r.bool(strictD) === true : env.global.strict;
  if (strictD && strict) ctx.reportDirective(strictD, STRICT_NOT_CARRIED);
  const accept = noAcceptD && (!acceptD || noAcceptD.pos.line > acceptD.pos.line) ? false : acceptD ? true : !strict;
  if (version === 3) {
    inst.accept = accept;
    const src = noAcceptD ?? acceptD;
    if (src) ctx.source.at(inst, 'accept', src.pos);
    else ctx.note(inst, `keepalived's accept mode is ${accept ? 'on' : 'off'} by default${strict ? ' in strict mode' : ''}`);
  } else if (!accept) {
    ctx.reportDirective(noAcceptD ?? strictD ?? b.directive, 'lvsd has no accept mode for VRRPv2 (VIPs always accept traffic); no_accept is not carried over');
  }

  const auth = r.last('authentication');
  if (auth) mapAuthentication(ctx, auth, inst);

  // keepalived: mcast_src_ip and unicast_src_ip set the same source address (vrrp->saddr); the last one wins.
  const srcD = r.last('unicast_src_ip', 'mcast_src_ip');
  const src = r.str(srcD);
  if (srcD && src !== undefined) {
    if (isIP(src) === 0) ctx.reportDirective(srcD, `${src} is not an IP address; not carried over`);
    else if (isIP(src) !== family) ctx.reportDirective(srcD, `${src} is not of the instance's address family (IPv${family}); not carried over`);
    else {
      inst.unicastSrcIp = src;
      ctx.source.at(inst, 'unicastSrcIp', srcD.pos);
    }
  }
  const peers: string[] = [];
  for (const block of r.all('unicast_peer')) {
    for (const line of block.block ?? []) {
      if (isIP(line.keyword) === 0) {
        ctx.reportDirective(line, `${line.keyword} is not an IP address; peer not carried over`);
        continue;
      }
      if (peers.includes(line.keyword)) {
        ctx.note(inst, `unicast peer ${line.keyword} listed twice (${ctx.displayPos(line.pos)}); kept once`);
        continue;
      }
      ctx.source.at(peers, String(peers.length), line.pos);
      peers.push(line.keyword);
      if (line.args.length > 0) ctx.reportDirective(line, `${line.args.join(' ')}: TTL limits on unicast peers are not supported`);
    }
  }
  if (peers.length > 0) inst.unicastPeers = peers;
  // mcast_dst_ip: keepalived 2.2.7 skips one of the other family or not multicast (IPv6: link-local scope), and
  // resets it on a unicast instance.
  const mcastD = r.last('mcast_dst_ip');
  const mcast = mcastD?.args[0];
  if (mcastD && mcast !== undefined) {
    const fam = isIP(mcast);
    const want = family ?? (fam === 6 ? 6 : 4);
    if (peers.length > 0) ctx.note(inst, `mcast_dst_ip (${ctx.displayPos(mcastD.pos)}) dropped: keepalived ignores it on a unicast instance`);
    else if (fam !== want || !(fam === 4 ? /^2(2[4-9]|3\d)\./ : /^ff02:/i).test(mcast)) ctx.reportDirective(mcastD, `${mcast} is not an IPv${want} ${want === 6 ? 'link-local ' : ''}multicast address like the VIPs (keepalived skips it too); not carried over`);
    else {
      inst.multicastGroup = mcast;
      ctx.source.at(inst, 'multicastGroup', mcastD.pos);
    }
  }
  // unicast_fault_no_peer: with peers nothing to carry (the instance is unicast either way); without, keepalived
  // 2.2.7 holds it in FAULT ("Cannot use unicast without any peers") where lvsd would run it multicast.
  const faultNoPeerD = r.last('unicast_fault_no_peer');
  if (faultNoPeerD && peers.length === 0) ctx.reportDirective(faultNoPeerD, 'no unicast_peer: keepalived 2.2.7 keeps this instance in FAULT ("Cannot use unicast without any peers"); lvsd, given no peers, runs it multicast — list the peers, or leave the instance out');
  const peerBlock = r.all('unicast_peer')[0];
  // keepalived 2.2.7 refuses them: "Unicast peers are not supported in strict mode", and its VRRP process does not start.
  if (strict && peers.length > 0 && peerBlock) ctx.reportDirective(peerBlock, 'keepalived 2.2.7 refuses unicast peers in strict mode (its VRRP process does not start); lvsd runs them as written');
  // keepalived 2.2.7: down_timer_adverts [1..100] per instance, else global_defs' vrrp_down_timer_adverts.
  const downD = r.last('down_timer_adverts');
  const down = r.int(downD, 1, 100);
  if (downD && down !== undefined && down !== 3) {
    inst.downTimerAdverts = down;
    ctx.source.at(inst, 'downTimerAdverts', downD.pos);
  } else if (down === undefined && env.global.downTimerAdverts !== undefined && env.global.downTimerAdverts.value !== 3) {
    inst.downTimerAdverts = env.global.downTimerAdverts.value;
    ctx.source.at(inst, 'downTimerAdverts', env.global.downTimerAdverts.d.pos);
  }
  // keepalived old_unicast_checksum [never]: bare = always the old checksum; `never` = never switch to it.
  const oldSumD = r.last('old_unicast_checksum');
  if (oldSumD) {
    const arg = oldSumD.args[0];
    if (arg === undefined || arg === 'never') {
      inst.oldUnicastChecksum = arg === undefined ? 'always' : 'never';
      ctx.source.at(inst, 'oldUnicastChecksum', oldSumD.pos);
    } else ctx.reportDirective(oldSumD, `unknown old_unicast_checksum mode ${arg} (keepalived ignores it too); not carried over`);
  }
  const ttlD = r.last('unicast_ttl');
  const ttl = r.int(ttlD, 0, 255);
  if (ttlD && ttl !== undefined) {
    // keepalived 2.2.7: "Cannot use unicast_ttl without unicast peers - resetting".
    if (peers.length === 0) ctx.reportDirective(ttlD, 'unicast_ttl needs unicast_peer (keepalived resets it too); not carried over');
    else if (ttl === 0) ctx.reportDirective(ttlD, 'unicast_ttl 0 would never leave the host; not carried over');
    else {
      inst.unicastTtl = ttl;
      ctx.source.at(inst, 'unicastTtl', ttlD.pos);
    }
  }
  const dontTrackD = r.last('dont_track_primary');
  if (dontTrackD) {
    inst.dontTrackPrimary = true;
    ctx.source.at(inst, 'dontTrackPrimary', dontTrackD.pos);
  }
  const trackSrcD = r.last('track_src_ip');
  if (trackSrcD) {
    // Without a configured source keepalived has nothing to track: the directive does nothing.
    if (inst.unicastSrcIp === undefined) ctx.reportDirective(trackSrcD, 'track_src_ip needs unicast_src_ip or mcast_src_ip (it tracks that address); not carried over');
    else {
      inst.trackSrcIp = true;
      ctx.source.at(inst, 'trackSrcIp', trackSrcD.pos);
    }
  }

  const tracks = mapTracks(ctx, r, env);
  Object.assign(inst, tracks);

  const notify = mapNotify(ctx, r);
  if (notify) inst.notify = notify;
  // keepalived notify_deleted [SCRIPT]: a removal at reload says DELETED (the script, if any, is notify.deleted).
  const deletedD = r.last('notify_deleted');
  if (deletedD) {
    inst.notifyDeleted = true;
    ctx.source.at(inst, 'notifyDeleted', deletedD.pos);
  }

  const garp: GarpOut = {};
  mapGarp(r, garp, '');
  const noAdvertD = r.last('lower_prio_no_advert');
  const noAdvert = r.bool(noAdvertD);
  if (noAdvertD && noAdvert !== undefined) {
    inst.lowerPrioNoAdvert = noAdvert;
    ctx.source.at(inst, 'lowerPrioNoAdvert', noAdvertD.pos);
  }
  const sendAdvertD = r.last('higher_prio_send_advert');
  const sendAdvert = r.bool(sendAdvertD);
  if (sendAdvertD && sendAdvert !== undefined) {
    inst.higherPrioSendAdvert = sendAdvert;
    ctx.source.at(inst, 'higherPrioSendAdvert', sendAdvertD.pos);
  }
  if (strict) {
    // keepalived's strict mode forces these whatever the config says (with a config error if it said otherwise).
    inst.lowerPrioNoAdvert = true;
    inst.higherPrioSendAdvert = false;
    garp.lowerPrioRepeat = 0;
    garp.lowerPrioDelay = '0s';
    ctx.note(inst, 'keepalived\'s strict mode: no answer and no gratuitous ARPs on a lower-priority advert, no advert before yielding to a higher one');
    strictResets(ctx, inst);
  }
  if (Object.keys(garp).length > 0) inst.garp = garp;
  mapVmac(ctx, r, inst, env.global.vmacPrefix);
  const promoteD = r.last('promote_secondaries');
  if (promoteD) {
    // keepalived 2.2.7: "promote_secondaries is automatically set for vmacs - ignoring" (for an ipvlan too).
    if (inst.vmac !== undefined || inst.ipvlan !== undefined) ctx.note(inst, `promote_secondaries (${ctx.displayPos(promoteD.pos)}) dropped: keepalived ignores it on a VMAC or ipvlan instance`);
    else {
      inst.promoteSecondaries = true;
      ctx.source.at(inst, 'promoteSecondaries', promoteD.pos);
    }
  }
  mapVirtualRoutes(ctx, r, inst);

  // lvs_sync_daemon_inteface: keepalived 1.x's misspelling, which configs written then still carry (2.2.7
  // no longer knows it and ignores it as an unknown keyword); lvsd reads it as the intended directive.
  const syncIf = r.last('lvs_sync_daemon_interface', 'lvs_sync_daemon_inteface');
  if (syncIf?.args[0] !== undefined) result.syncDaemonInterface ??= { iface: syncIf.args[0], vrid, d: syncIf };
  if (syncIf?.keyword === 'lvs_sync_daemon_inteface') ctx.note(inst, `lvs_sync_daemon_inteface (${ctx.displayPos(syncIf.pos)}): keepalived 1.x's spelling, read as lvs_sync_daemon_interface (keepalived 2.2.7 ignores it as an unknown keyword)`);

  readSmtpAlert(r, inst); // alerts.email.instances (map-alerts.ts)

  // Nothing to carry: lvsd derives the address family from the VIPs.
  r.ignore('native_ipv6');
  r.finish();
  return inst;
}

/** advert_int: keepalived accepts 0.01..255 s (else ignores it: 1 s); VRRPv2 carries whole seconds. */
function mapAdvertInterval(ctx: Context, r: BlockReader, d: Directive | undefined, version: 2 | 3, notes: string[]): string {
  if (!d) return '1s';
  const raw = d.args[0];
  const v = Number(raw);
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw) || v < 0.01 || v > 255) {
    notes.push(`advert_int ${raw ?? ''} (${ctx.displayPos(d.pos)}) is outside 0.01..255: keepalived ignores it and uses 1s`);
    return '1s';
  }
  if (version === 2 && !Number.isInteger(v)) {
    const rounded = Math.max(1, Math.round(v));
    ctx.reportDirective(d, `VRRPv2 adverts carry whole seconds: ${raw} is written as ${rounded}s (use version 3 on both directors for sub-second adverts)`);
    return `${rounded}s`;
  }
  return seconds(v);
}

/**
 * What keepalived 2.2.7's strict mode resets in an instance's config (vrrp.c, vrrp_complete_instance): it
 * ignores authentication ("Strict mode does not support authentication"), preempt_delay and
 * down_timer_adverts ("incompatible with strict mode - resetting"). Unicast peers: see the caller.
 */
function strictResets(ctx: Context, inst: InstanceOut): void {
  const dropped: string[] = [];
  if (inst.authentication !== undefined) {
    delete inst.authentication;
    dropped.push('authentication');
  }
  if (inst.preemptDelay !== undefined) {
    delete inst.preemptDelay;
    dropped.push('preempt_delay');
  }
  if (inst.downTimerAdverts !== undefined) {
    delete inst.downTimerAdverts;
    dropped.push('down_timer_adverts');
  }
  if (dropped.length > 0) ctx.note(inst, `${dropped.join(', ')} dropped: keepalived's strict mode resets them`);
}

function mapAuthentication(ctx: Context, auth: Directive, inst: InstanceOut): void {
  const r = new BlockReader(ctx, auth.block ?? [], 'authentication');
  const typeD = r.last('auth_type');
  const passD = r.last('auth_pass');
  r.finish();
  const type = typeD?.args[0]?.toUpperCase();
  if (type === 'AH') {
    ctx.reportDirective(typeD ?? auth, 'IPsec AH authentication is not supported by lvsd; the instance runs without authentication');
    return;
  }
  if (inst.version === 3) {
    ctx.reportDirective(auth, 'VRRPv3 has no authentication (keepalived ignores it too); not carried over');
    return;
  }
  const pass = passD?.args[0];
  if (!passD || pass === undefined || pass === '') {
    ctx.reportDirective(auth, 'no auth_pass; authentication not carried over');
    return;
  }
  const a = { type: 'PASS' as const, password: pass.slice(0, 8) };
  ctx.source.self(a, auth.pos);
  ctx.source.at(a, 'password', passD.pos);
  if (pass.length > 8) ctx.note(a, 'keepalived uses only the first 8 characters of auth_pass');
  inst.authentication = a;
}

/** One virtual_ipaddress line: ADDR[/MASK] [dev IF] [label L] [scope S] [brd B] [peer P] [home] [-nodad] [noprefixroute] [preferred_lft N|forever] … */
export function mapVip(ctx: Context, line: Directive): VipOut | undefined {
  const [addr, mask] = line.keyword.split('/');
  const family = isIP(addr ?? '');
  if (family === 0 || (mask !== undefined && !/^\d{1,3}$/.test(mask))) {
    ctx.reportDirective(line, `${line.keyword} is not an address or CIDR; not carried over`);
    return undefined;
  }
  const cidr = mask === undefined ? `${addr ?? ''}/${family === 4 ? 32 : 128}` : line.keyword;
  const obj: Exclude<VipOut, string> = { address: cidr };
  const dropped: string[] = [];
  for (let i = 0; i < line.args.length; i++) {
    const word = line.args[i] ?? '';
    const value = line.args[i + 1];
    if ((word === 'dev' || word === 'label' || word === 'scope') && value !== undefined) {
      i++;
      if (word === 'scope' && !['global', 'site', 'link', 'host'].includes(value)) dropped.push(`scope ${value}`);
      else obj[word] = value;
    } else if ((word === 'brd' || word === 'broadcast') && value !== undefined) {
      i++;
      // `brd +` (compute it) is not carried: lvsd, like keepalived without brd, sets no broadcast address.
      if (value === '+') dropped.push(`${word} +`);
      else if (family === 4 && isIP(value) === 4) obj.broadcast = value;
      else dropped.push(`${word} ${value}`);
    } else if (word === 'peer' && value !== undefined) {
      i++;
      const [p, plen] = value.split('/');
      if (isIP(p ?? '') !== family || (plen !== undefined && !/^\d{1,3}$/.test(plen))) dropped.push(`peer ${value}`);
      else {
        obj.peer = value;
        // keepalived 2.2.7: "Cannot specify address prefix when specifying peer address - ignoring".
        if (mask !== undefined) ctx.note(obj, `${line.keyword} peer ${value}: keepalived ignores the address's prefix when a peer is given; the peer's prefix applies`);
      }
    } else if (word === 'preferred_lft' && value !== undefined) {
      i++;
      const n = Number(value);
      // Measured: keepalived 2.2.7 leaves an IPv4 address's preferred lifetime forever whatever preferred_lft says.
      if (family === 4) ctx.reportDirective(line, `preferred_lft ${value}: keepalived ignores it on IPv4 addresses (the lifetime stays forever), lvsd alike; not carried over`);
      else if (value === 'forever' || value === 'infinite') obj.preferredLft = 'forever';
      else if (/^\d+$/.test(value) && n <= 4294967294) obj.preferredLft = n;
      else dropped.push(`preferred_lft ${value}`);
    } else if (word === 'home') obj.home = true;
    else if (word === '-nodad') obj.dad = true;
    else if (word === 'noprefixroute') obj.noPrefixRoute = true;
    else if (word === 'track_group' && value !== undefined) {
      i++;
      dropped.push(`track_group ${value}`);
    } else dropped.push(word);
  }
  if (dropped.length > 0) ctx.reportDirective(line, `address options not supported by lvsd: ${dropped.join(', ')}`);
  return Object.keys(obj).length === 1 ? cidr : obj;
}

/** `NAME [weight W] [reverse|noreverse]` of a track_* block; `reverse` is carried only where lvsd has it (track_process). */
function weightOf(ctx: Context, d: Directive, min: number, max: number, canReverse = false): { weight?: number; reverse?: boolean; ok: boolean } {
  const i = d.args.indexOf('weight');
  const extra = d.args.filter((a, j) => a !== 'weight' && j !== i + 1);
  const rev = extra.includes('reverse') ? true : extra.some((a) => a === 'noreverse' || a === 'no_reverse') ? false : undefined;
  if (rev === true && !canReverse) ctx.reportDirective(d, 'reverse is not supported by lvsd; tracked without it');
  else if (extra.some((a) => !['reverse', 'noreverse', 'no_reverse'].includes(a))) ctx.reportDirective(d, `unknown options ${extra.join(' ')}`);
  const reverse = canReverse && rev !== undefined ? { reverse: rev } : {};
  if (i < 0) return { ok: true, ...reverse };
  const raw = d.args[i + 1];
  const v = Number(raw);
  if (raw === undefined || !/^-?\d+$/.test(raw) || v < min || v > max) {
    ctx.reportDirective(d, `weight ${raw ?? '(missing)'} is not in ${min}..${max}; not carried over`);
    return { ok: false };
  }
  return { weight: v, ok: true, ...reverse };
}

type Tracks = Pick<InstanceOut, 'trackInterfaces' | 'trackScripts' | 'trackFiles' | 'trackProcesses'>;

/** track_interface / track_script / track_file blocks of an instance or a sync group. */
export function mapTracks(ctx: Context, r: BlockReader, env: Omit<InstanceEnv, 'global'>): Tracks {
  const out: Tracks = {};
  for (const block of r.all('track_interface')) {
    for (const line of block.block ?? []) {
      const w = weightOf(ctx, line, -254, 254);
      if (!w.ok) continue;
      if (out.trackInterfaces?.some((x) => x.name === line.keyword)) {
        // keepalived: "duplicate track_interface - ignoring".
        continue;
      }
      const t = w.weight === undefined ? { name: line.keyword } : { name: line.keyword, weight: w.weight };
      ctx.source.self(t, line.pos);
      (out.trackInterfaces ??= []).push(t);
    }
  }
  for (const block of r.all('track_script')) {
    for (const line of block.block ?? []) {
      const name = toSafeName(line.keyword);
      if (!(name in env.scripts)) {
        ctx.reportDirective(line, `no vrrp_script ${line.keyword} was carried over; not tracked`);
        continue;
      }
      const w = weightOf(ctx, line, -253, 253);
      if (!w.ok) continue;
      const t = w.weight === undefined ? { name } : { name, weight: w.weight };
      ctx.source.self(t, line.pos);
      (out.trackScripts ??= []).push(t);
    }
  }
  for (const block of r.all('track_file')) {
    for (const line of block.block ?? []) {
      const file = env.trackFiles.get(line.keyword);
      if (!file) {
        ctx.reportDirective(line, `no track_file ${line.keyword} was carried over; not tracked`);
        continue;
      }
      const w = weightOf(ctx, line, -254, 254);
      if (!w.ok) continue;
      if (file.reverse !== undefined && w.weight === undefined) ctx.reportDirective(file.reverse, 'reverse is not supported on VRRP tracking by lvsd');
      const t = { path: file.path, weight: w.weight ?? file.weight };
      ctx.source.self(t, line.pos);
      (out.trackFiles ??= []).push(t);
    }
  }
  for (const block of r.all('track_process')) {
    for (const line of block.block ?? []) {
      const name = toSafeName(line.keyword);
      if (!(name in env.processes)) {
        ctx.reportDirective(line, `no vrrp_track_process ${line.keyword} was carried over; not tracked`);
        continue;
      }
      const w = weightOf(ctx, line, -254, 254, true);
      if (!w.ok) continue;
      const t: { name: string; weight?: number; reverse?: boolean } = { name };
      if (w.weight !== undefined) t.weight = w.weight;
      if (w.reverse !== undefined) t.reverse = w.reverse;
      ctx.source.self(t, line.pos);
      (out.trackProcesses ??= []).push(t);
    }
  }
  return out;
}

/** notify_master & co.: the first argument is the command (quoted when it has arguments). */
export function mapNotify(ctx: Context, r: BlockReader, instance = true): NotifyOut | undefined {
  type Hook = Exclude<keyof NotifyOut, 'users'>;
  const keys: [string, Hook][] = [
    ['notify_master', 'master'],
    ['notify_backup', 'backup'],
    ['notify_fault', 'fault'],
    ['notify_stop', 'stop'],
    ['notify', 'any'],
    // An instance's event only (keepalived has no group variant).
    ...(instance ? [['notify_master_rx_lower_pri', 'masterRxLowerPri'], ['notify_deleted', 'deleted']] as [string, Hook][] : []),
  ];
  const out: NotifyOut = {};
  for (const [kw, key] of keys) {
    const d = r.last(kw);
    // notify_deleted's script is optional (without one it only turns FAULT into DELETED: mapVrrpInstance).
    if (kw === 'notify_deleted' && d?.args.length === 0) continue;
    const cmd = r.str(d);
    if (!d || cmd === undefined) continue;
    out[key] = cmd;
    ctx.source.at(out, key, d.pos);
    // keepalived: notify_master "/x arg" USER [GROUP].
    if (d.args.length > 1) (out.users ??= {})[key] = d.args.slice(1, 3).join(':');
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function mapSyncGroup(ctx: Context, b: NamedBlock, env: Omit<InstanceEnv, 'global'>, instances: InstanceOut[]): SyncGroupOut | undefined {
  const r = new BlockReader(ctx, b.body, 'vrrp_sync_group');
  const name = safeName(ctx, b.directive, b.name);
  const members: string[] = [];
  for (const g of r.all('group')) {
    for (const line of g.block ?? []) {
      const member = toSafeName(line.keyword);
      if (!instances.some((i) => i.name === member)) {
        ctx.reportDirective(line, `no vrrp_instance ${line.keyword} was carried over; left out of the group`);
        continue;
      }
      ctx.source.at(members, String(members.length), line.pos);
      members.push(member);
    }
  }
  // Sync-group tracking applies to every member: copy it onto each member instance.
  const tracks = mapTracks(ctx, r, env);
  const notify = mapNotify(ctx, r, false);
  // keepalived 2.2.7 reads global_tracking as sync_group_tracking_weight (measured: "global_tracking is
  // deprecated", the members' weights then apply).
  const keepWeights = r.has('sync_group_tracking_weight', 'global_tracking');
  r.ignore('global_tracking', 'sync_group_tracking_weight');
  r.finish();
  const memberInstances = instances.filter((i) => members.includes(i.name));
  for (const inst of memberInstances) {
    if (!keepWeights) memberTracksWithoutWeights(ctx, inst, name, env);
    for (const key of ['trackInterfaces', 'trackScripts', 'trackFiles', 'trackProcesses'] as const) {
      const extra = tracks[key];
      if (!extra) continue;
      const list = (inst[key] ??= []) as unknown[];
      for (const t of extra) {
        const copy = { ...t };
        const pos = ctx.source.get(t, '');
        if (pos) ctx.source.self(copy, pos);
        ctx.note(copy, `from vrrp_sync_group ${b.name}`);
        list.push(copy);
      }
    }
  }
  if (members.length === 0) {
    ctx.report(b.pos, 'vrrp_sync_group', `${b.name} has no carried-over members; not carried over`);
    return undefined;
  }
  const sg: SyncGroupOut = { name, instances: members };
  ctx.source.self(sg, b.pos);
  if (notify) sg.notify = notify;
  return sg;
}

/**
 * A sync group member's own tracking as keepalived 2.2.7 runs it without sync_group_tracking_weight (measured:
 * docs/migration.md, "Sync groups"): a weighted track_script is ignored altogether ("ignoring tracked script …
 * with weights due to SYNC group"), a track_file keeps weight 1 (its default) as 0 and is ignored with any other
 * weight, a weighted track_interface gets weight 0 (down = FAULT); track_process weights apply as written. The
 * group's own tracking keeps its weights.
 */
function memberTracksWithoutWeights(ctx: Context, inst: InstanceOut, group: string, env: Pick<InstanceEnv, 'scripts'>): void {
  const why = `keepalived ignores weighted tracking on a member of sync group ${group} (no sync_group_tracking_weight)`;
  for (const t of inst.trackInterfaces ?? []) {
    if ((t.weight ?? 0) === 0) continue;
    t.weight = 0;
    ctx.note(t, `weight 0: ${why}`);
  }
  const dropped: string[] = [];
  if (inst.trackScripts !== undefined) {
    inst.trackScripts = inst.trackScripts.filter((t) => {
      const w = t.weight ?? env.scripts[t.name]?.weight ?? 0;
      if (w !== 0) dropped.push(`track_script ${t.name} (weight ${w})`);
      return w === 0;
    });
  }
  if (inst.trackFiles !== undefined) {
    inst.trackFiles = inst.trackFiles.filter((t) => {
      const w = t.weight ?? 1;
      if (w === 1) {
        t.weight = 0;
        ctx.note(t, `weight 0: ${why}`);
      } else if (w !== 0) dropped.push(`track_file ${t.path} (weight ${w})`);
      return w === 0 || w === 1;
    });
  }
  if (inst.trackScripts?.length === 0) delete inst.trackScripts;
  if (inst.trackFiles?.length === 0) delete inst.trackFiles;
  if (dropped.length > 0) ctx.note(inst, `not tracked: ${dropped.join(', ')}: ${why}`);
}
