// What a reload has to do: old Config → new Config as added / removed / changed objects, each
// changed object with the dotted paths of the fields that differ ("priority",
// "healthCheck.http.path", "virtualIpaddresses"). Pure; objects are matched by identity:
// VRRP instances, sync groups and scripts by name, virtual servers by canonical id ("tcp:…:80",
// "fwmark:4:7"), real servers by "address:port". A renamed instance is a removal plus an addition;
// a virtual server whose `name` changed is a change of field "name".
import type { Config, RealServer, SyncGroup, VirtualServer, VrrpInstance, VrrpScript } from './types.js';

export interface Changed<T> {
  key: string;
  before: T;
  after: T;
  /** Dotted paths of the fields that differ; lists count as one field. */
  fields: string[];
}

export interface SetDiff<T> {
  added: T[];
  removed: T[];
  changed: Changed<T>[];
}

export interface VirtualServerChange extends Changed<VirtualServer> {
  /** Service-level fields only; real servers are in `realServers`. */
  fields: string[];
  realServers: SetDiff<RealServer>;
}

export interface ConfigDiff {
  /** Top-level settings that changed: "node.name", "api.listen", "dataplane", "ipvs.drainTimeoutMs", "vrrp.garp.masterRepeat", … */
  settings: string[];
  scripts: SetDiff<VrrpScript>;
  instances: SetDiff<VrrpInstance>;
  syncGroups: SetDiff<SyncGroup>;
  virtualServers: {
    added: VirtualServer[];
    removed: VirtualServer[];
    /** Only services whose own fields or real servers changed. */
    changed: VirtualServerChange[];
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Structural equality of JSON-like values; a key holding undefined equals an absent key. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!deepEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

/** Dotted paths where `a` and `b` differ; recurses into objects, compares lists whole. */
export function changedFields(a: unknown, b: unknown, prefix = '', skip: readonly string[] = []): string[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const out: string[] = [];
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !skip.includes(k)).sort();
    for (const k of keys) {
      const path = prefix ? `${prefix}.${k}` : k;
      if (isPlainObject(a[k]) && isPlainObject(b[k])) out.push(...changedFields(a[k], b[k], path));
      else if (!deepEqual(a[k], b[k])) out.push(path);
    }
    return out;
  }
  return deepEqual(a, b) ? [] : [prefix || '(value)'];
}

function setDiff<T>(before: readonly T[], after: readonly T[], key: (t: T) => string): SetDiff<T> {
  const old = new Map(before.map((t) => [key(t), t]));
  const now = new Map(after.map((t) => [key(t), t]));
  const out: SetDiff<T> = { added: [], removed: [], changed: [] };
  for (const [k, t] of now) {
    const o = old.get(k);
    if (o === undefined) out.added.push(t);
    else {
      const fields = changedFields(o, t);
      if (fields.length) out.changed.push({ key: k, before: o, after: t, fields });
    }
  }
  for (const [k, t] of old) if (!now.has(k)) out.removed.push(t);
  return out;
}

export function diffConfig(before: Config, after: Config): ConfigDiff {
  const settings = [
    ...changedFields(
      { node: before.node, api: before.api, stateFile: before.stateFile, dataplane: before.dataplane, ipvs: before.ipvs, nftables: before.nftables, userspace: before.userspace, bgp: before.bgp, alerts: before.alerts, cluster: before.cluster },
      { node: after.node, api: after.api, stateFile: after.stateFile, dataplane: after.dataplane, ipvs: after.ipvs, nftables: after.nftables, userspace: after.userspace, bgp: after.bgp, alerts: after.alerts, cluster: after.cluster },
    ),
    ...changedFields(before.vrrp.garp, after.vrrp.garp, 'vrrp.garp'),
    ...changedFields(
      { lowerPrioNoAdvert: before.vrrp.lowerPrioNoAdvert, higherPrioSendAdvert: before.vrrp.higherPrioSendAdvert, startupDelayMs: before.vrrp.startupDelayMs, delayAfterBootMs: before.vrrp.delayAfterBootMs, interfaceUpDownDelays: before.vrrp.interfaceUpDownDelays, staticIpaddresses: before.vrrp.staticIpaddresses, staticRoutes: before.vrrp.staticRoutes, staticRules: before.vrrp.staticRules, multicastGroup4: before.vrrp.multicastGroup4, multicastGroup6: before.vrrp.multicastGroup6, scriptUser: before.vrrp.scriptUser, scriptSecurity: before.vrrp.scriptSecurity, notifyFifo: before.vrrp.notifyFifo, processes: before.vrrp.processes, garpGroups: before.vrrp.garpGroups },
      { lowerPrioNoAdvert: after.vrrp.lowerPrioNoAdvert, higherPrioSendAdvert: after.vrrp.higherPrioSendAdvert, startupDelayMs: after.vrrp.startupDelayMs, delayAfterBootMs: after.vrrp.delayAfterBootMs, interfaceUpDownDelays: after.vrrp.interfaceUpDownDelays, staticIpaddresses: after.vrrp.staticIpaddresses, staticRoutes: after.vrrp.staticRoutes, staticRules: after.vrrp.staticRules, multicastGroup4: after.vrrp.multicastGroup4, multicastGroup6: after.vrrp.multicastGroup6, scriptUser: after.vrrp.scriptUser, scriptSecurity: after.vrrp.scriptSecurity, notifyFifo: after.vrrp.notifyFifo, processes: after.vrrp.processes, garpGroups: after.vrrp.garpGroups },
      'vrrp',
    ),
  ];

  const vsOld = new Map(before.virtualServers.map((v) => [v.id, v]));
  const vsNew = new Map(after.virtualServers.map((v) => [v.id, v]));
  const virtualServers: ConfigDiff['virtualServers'] = { added: [], removed: [], changed: [] };
  for (const [id, v] of vsNew) {
    const o = vsOld.get(id);
    if (o === undefined) {
      virtualServers.added.push(v);
      continue;
    }
    const fields = changedFields(o, v, '', ['realServers']);
    const realServers = setDiff(o.realServers, v.realServers, (r) => r.id);
    if (fields.length || realServers.added.length || realServers.removed.length || realServers.changed.length)
      virtualServers.changed.push({ key: id, before: o, after: v, fields, realServers });
  }
  for (const [id, v] of vsOld) if (!vsNew.has(id)) virtualServers.removed.push(v);

  return {
    settings,
    scripts: setDiff(Object.values(before.vrrp.scripts), Object.values(after.vrrp.scripts), (s) => s.name),
    instances: setDiff(before.vrrp.instances, after.vrrp.instances, (i) => i.name),
    syncGroups: setDiff(before.vrrp.syncGroups, after.vrrp.syncGroups, (g) => g.name),
    virtualServers,
  };
}

export function isEmptyDiff(d: ConfigDiff): boolean {
  const empty = (s: { added: unknown[]; removed: unknown[]; changed: unknown[] }) => !s.added.length && !s.removed.length && !s.changed.length;
  return !d.settings.length && empty(d.scripts) && empty(d.instances) && empty(d.syncGroups) && empty(d.virtualServers);
}

/** One line per change, for the reload log: "+ instance VI_2", "~ virtual server web: scheduler", … */
export function describeDiff(d: ConfigDiff): string[] {
  const out: string[] = [];
  for (const s of d.settings) out.push(`~ setting ${s}`);
  const set = <T>(what: string, s: SetDiff<T>, name: (t: T) => string) => {
    for (const t of s.added) out.push(`+ ${what} ${name(t)}`);
    for (const t of s.removed) out.push(`- ${what} ${name(t)}`);
    for (const c of s.changed) out.push(`~ ${what} ${c.key}: ${c.fields.join(', ')}`);
  };
  set('script', d.scripts, (s) => s.name);
  set('instance', d.instances, (i) => i.name);
  set('sync group', d.syncGroups, (g) => g.name);
  for (const v of d.virtualServers.added) out.push(`+ virtual server ${v.name}`);
  for (const v of d.virtualServers.removed) out.push(`- virtual server ${v.name}`);
  for (const c of d.virtualServers.changed) {
    if (c.fields.length) out.push(`~ virtual server ${c.after.name}: ${c.fields.join(', ')}`);
    for (const r of c.realServers.added) out.push(`+ real server ${c.after.name} ${r.id}`);
    for (const r of c.realServers.removed) out.push(`- real server ${c.after.name} ${r.id}`);
    for (const r of c.realServers.changed) out.push(`~ real server ${c.after.name} ${r.key}: ${r.fields.join(', ')}`);
  }
  return out;
}
