// Typed keepalived AST → lvsd config object, with a source map and the diagnostics for everything that
// could not be carried over. Pure: the caller parses the files and emits the YAML.
import type { KeepalivedAst } from './ast.js';
import type { ConfigOut, InstanceOut, ProcessOut, ScriptOut, SyncGroupOut } from './lvsd-shape.js';
import { Context } from './reader.js';
import { mapGlobalDefs } from './map-global.js';
import { mapGarpGroups } from './map-garp.js';
import { mapTrackProcess } from './map-process.js';
import { mapSyncGroup, mapTrackFile, mapVrrpInstance, mapVrrpScript, type TrackFile, type VrrpResult } from './map-vrrp.js';
import { mergeDuplicateServers, serviceId, type MappedServer } from './duplicates.js';
import { alertsOut } from './map-alerts.js';
import { logAllFailuresOf, trackFilesOf } from './map-checker.js';
import { mapSslBlocks, sslOf } from './map-ssl.js';
import { expandGroup, mapVirtualServer, virtualServerKeys, type GroupMember } from './map-lvs.js';
import { safeName } from './names.js';
import { unsupportedReason } from './unsupported.js';
import { mapInterfaceUpDownDelays } from './map-link-delays.js';
import { mapStatics, STATIC_BLOCKS } from './map-static.js';
import { keepalivedRulePriorities } from './map-routes.js';

export interface MapResult {
  config: ConfigOut;
  ctx: Context;
}

export function mapKeepalived(ast: KeepalivedAst, display: (file: string) => string): MapResult {
  const ctx = new Context(display);
  const config: ConfigOut = {};

  for (const [d, why] of ast.invalid) ctx.reportDirective(d, `${why}; not carried over`);
  const statics = mapStatics(ctx, ast.other.filter((d) => STATIC_BLOCKS.includes(d.keyword) && d.block));
  const linkDelays = mapInterfaceUpDownDelays(ctx, ast.other.filter((d) => d.keyword === 'interface_up_down_delays' && d.block));
  for (const d of ast.other) {
    if (!(['interface_up_down_delays', 'garp_group', ...STATIC_BLOCKS].includes(d.keyword) && d.block)) ctx.reportDirective(d, unsupportedReason('the top level', d.keyword));
  }

  const global = mapGlobalDefs(ctx, ast.globalDefs);
  if (global.node) config.node = global.node;

  const scripts: Record<string, ScriptOut> = {};
  for (const b of ast.vrrpScripts) {
    const s = mapVrrpScript(ctx, b);
    if (s) scripts[safeName(ctx, b.directive, b.name)] = s;
  }
  const trackFiles = new Map<string, TrackFile>();
  for (const b of ast.trackFiles) {
    const f = mapTrackFile(ctx, b);
    if (f) trackFiles.set(b.name, f);
  }
  trackFilesOf.set(ctx, trackFiles);
  if (global.checkerLogAllFailures !== undefined) logAllFailuresOf.set(ctx, global.checkerLogAllFailures);
  sslOf.set(ctx, mapSslBlocks(ctx, ast.ssl));

  const processes: Record<string, ProcessOut> = {};
  for (const b of ast.trackProcesses) {
    const p = mapTrackProcess(ctx, b);
    if (p) processes[safeName(ctx, b.directive, b.name)] = p;
  }

  const result: VrrpResult = { scripts, instances: [], syncGroups: [], vridByInstance: new Map() };
  const instances: InstanceOut[] = [];
  for (const b of ast.vrrpInstances) {
    const inst = mapVrrpInstance(ctx, b, { global, trackFiles, scripts, processes }, result);
    if (inst) instances.push(inst);
  }
  const syncGroups: SyncGroupOut[] = [];
  for (const b of ast.vrrpSyncGroups) {
    const sg = mapSyncGroup(ctx, b, { trackFiles, scripts, processes }, instances);
    if (sg) syncGroups.push(sg);
  }

  const vrrp: NonNullable<ConfigOut['vrrp']> = {};
  if (global.garp) vrrp.garp = global.garp;
  const garpGroups = mapGarpGroups(ctx, ast.other.filter((d) => d.keyword === 'garp_group' && d.block), global.garpDefault);
  if (garpGroups.length > 0) vrrp.garpGroups = garpGroups;
  if (global.lowerPrioNoAdvert !== undefined) vrrp.lowerPrioNoAdvert = global.lowerPrioNoAdvert;
  if (global.higherPrioSendAdvert !== undefined) vrrp.higherPrioSendAdvert = global.higherPrioSendAdvert;
  if (global.scriptUser !== undefined) {
    vrrp.scriptUser = global.scriptUser.value;
    ctx.source.at(vrrp, 'scriptUser', global.scriptUser.d.pos);
  }
  if (global.notifyFifo !== undefined) {
    const f: { path: string; script?: string } = { path: global.notifyFifo.path };
    ctx.source.self(f, global.notifyFifo.d.pos);
    ctx.source.at(f, 'path', global.notifyFifo.d.pos);
    if (global.notifyFifo.script !== undefined && global.notifyFifo.scriptD) {
      f.script = global.notifyFifo.script;
      ctx.source.at(f, 'script', global.notifyFifo.scriptD.pos);
    }
    vrrp.notifyFifo = f;
  }
  if (global.scriptSecurity !== undefined) {
    vrrp.scriptSecurity = true;
    ctx.source.at(vrrp, 'scriptSecurity', global.scriptSecurity.pos);
  }
  for (const k of ['multicastGroup4', 'multicastGroup6'] as const) {
    const g = global[k];
    if (g === undefined) continue;
    vrrp[k] = g.value;
    ctx.source.at(vrrp, k, g.d.pos);
  }
  if (global.startupDelay !== undefined) {
    vrrp.startupDelay = global.startupDelay.value;
    ctx.source.at(vrrp, 'startupDelay', global.startupDelay.d.pos);
  }
  if (global.disableLocalIgmp !== undefined) {
    vrrp.disableLocalIgmp = true;
    ctx.source.at(vrrp, 'disableLocalIgmp', global.disableLocalIgmp.pos);
  }
  if (global.nftables !== undefined) vrrp.nftables = global.nftables;
  if (global.delayAfterBoot !== undefined) {
    vrrp.delayAfterBoot = global.delayAfterBoot.value;
    ctx.source.at(vrrp, 'delayAfterBoot', global.delayAfterBoot.d.pos);
    // Measured: keepalived 2.2.7 says "Unknown keyword 'vrrp_delay_after_boot'" and ignores it; it came in 2.4.
    ctx.note(vrrp, 'vrrp_delay_after_boot is keepalived 2.4\'s (2.2.7 ignores it as an unknown keyword); lvsd applies it');
  }
  if (linkDelays !== undefined) vrrp.interfaceUpDownDelays = linkDelays;
  Object.assign(vrrp, statics);
  keepalivedRulePriorities(ctx, [...(statics.staticRules ?? []), ...instances.flatMap((i) => i.virtualRules ?? [])]);
  if (Object.keys(scripts).length > 0) vrrp.scripts = scripts;
  if (Object.keys(processes).length > 0) vrrp.processes = processes;
  if (instances.length > 0) vrrp.instances = instances;
  if (syncGroups.length > 0) vrrp.syncGroups = syncGroups;
  if (global.realtimePriority !== undefined) vrrp.realtimePriority = global.realtimePriority;
  if (Object.keys(vrrp).length > 0) config.vrrp = vrrp;

  // IPVS sync daemon: global lvs_sync_daemon, or the old per-instance lvs_sync_daemon_interface.
  if (global.ipvs) config.ipvs = global.ipvs;
  const sd = config.ipvs?.syncDaemon;
  if (sd && sd.syncId === undefined && global.syncIdFromInstance !== undefined) {
    const vrid = result.vridByInstance.get(global.syncIdFromInstance);
    if (vrid !== undefined) {
      sd.syncId = vrid;
      ctx.note(sd, `syncId: keepalived's default, the VRID of ${global.syncIdFromInstance}`);
    }
  }
  if (result.syncDaemonInterface) {
    const { iface, vrid, d } = result.syncDaemonInterface;
    if (sd) ctx.reportDirective(d, 'global_defs lvs_sync_daemon already sets the sync daemon; ignored');
    else {
      const syncDaemon = { interface: iface, syncId: vrid };
      ctx.source.self(syncDaemon, d.pos);
      ctx.note(syncDaemon, 'syncId: keepalived\'s default, the VRID of the instance');
      config.ipvs = { ...config.ipvs, syncDaemon };
    }
  }

  const groups = new Map<string, GroupMember[]>();
  for (const g of ast.virtualServerGroups) groups.set(g.name, expandGroup(ctx, g));
  const mapped: MappedServer[] = [];
  for (const vs of ast.virtualServers) {
    for (const key of virtualServerKeys(ctx, vs, groups)) {
      const out = mapVirtualServer(ctx, vs, key);
      if (out) mapped.push({ out, pos: key.pos });
    }
  }
  const servers = mergeDuplicateServers(ctx, mapped);
  if (servers.length > 0) config.virtualServers = servers;
  const alerts = global.mail && alertsOut(ctx, global.mail, instances.map((i) => ({ name: i.name, out: i })), mapped.map((m) => ({ id: serviceId(m.out), out: m.out })));
  if (alerts) config.alerts = alerts;

  dedupe(ctx);
  return { config, ctx };
}

/** A virtual_server used by several group members is mapped once per member: report each line once. */
function dedupe(ctx: Context): void {
  const seen = new Set<string>();
  const unique = ctx.diagnostics.filter((d) => {
    const key = `${d.file}\0${d.line}\0${d.directive}\0${d.why}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  ctx.diagnostics.splice(0, ctx.diagnostics.length, ...unique);
}
