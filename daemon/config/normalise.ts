// Builds the normalised Config from a file that passed the schema and the semantic checks:
// defaults filled in (the defaults documented in schema.ts), durations in ms, canonical ids.
import { hostname } from 'node:os';
import { ipFamily, parseCidr, parseDuration, parseHostPort } from './formats.js';
import { alertsConfig } from './alerts.js';
import { bgpConfig } from './bgp.js';
import { clusterConfig } from './cluster.js';
import { realServerKey, serviceKey } from './semantic.js';
import type { ConfigFile, HealthCheckFile } from './schema.js';
import type { Config, Garp, LifecycleScriptConfig, HealthCheck, Notify, RealServer, VirtualServer, Vip, VrrpInstance, VrrpScript } from './types.js';
import type { TrackProcessOptions } from '../vrrp/process-track.js';
import { DEFAULT_VMAC_NFT } from '../vrrp/vmac-igmp.js';

export const DEFAULTS = {
  apiListen: '127.0.0.1:9180',
  apiSocket: '/run/lvsd/lvsd.sock',
  stateFile: '/var/lib/lvsd/state.json',
  priority: 100,
  advertIntervalMs: 1000,
  scheduler: 'wlc',
  quorum: 1,
  weight: 1,
} as const;

function ms(v: string | number | undefined, dflt: number): number {
  return v === undefined ? dflt : (parseDuration(v) ?? dflt);
}

/** Removes keys whose value is undefined so normalised objects compare and print cleanly. */
function compact<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) Reflect.deleteProperty(o, k);
  return o;
}

type GarpFile = NonNullable<NonNullable<ConfigFile['vrrp']>['garp']>;
/**
 * One level of GARP settings over `base`. The lower-priority burst of the global level defaults to its
 * own master burst (keepalived: vrrp_garp_lower_prio_* fall back to vrrp_garp_master_*); an instance
 * inherits the global values, so its own garp.masterRepeat does not move its lowerPrioRepeat (keepalived alike).
 */
function garp(g: GarpFile | undefined, base: Garp, global = false): Garp {
  const masterDelayMs = ms(g?.masterDelay, base.masterDelayMs);
  const masterRepeat = g?.masterRepeat ?? base.masterRepeat;
  return {
    masterDelayMs,
    masterRepeat,
    masterRefreshMs: ms(g?.masterRefresh, base.masterRefreshMs),
    masterRefreshRepeat: g?.masterRefreshRepeat ?? base.masterRefreshRepeat,
    intervalMs: ms(g?.interval, base.intervalMs),
    naIntervalMs: ms(g?.naInterval, base.naIntervalMs),
    extraIfMs: ms(g?.extraIf, base.extraIfMs),
    lowerPrioRepeat: g?.lowerPrioRepeat ?? (global ? masterRepeat : base.lowerPrioRepeat),
    lowerPrioDelayMs: ms(g?.lowerPrioDelay, global ? masterDelayMs : base.lowerPrioDelayMs),
  };
}
const GARP_DEFAULTS: Garp = { masterDelayMs: 5000, masterRepeat: 5, masterRefreshMs: 0, masterRefreshRepeat: 1, intervalMs: 0, naIntervalMs: 0, extraIfMs: 0, lowerPrioRepeat: 5, lowerPrioDelayMs: 5000 };

function notify(n: Notify | undefined): Notify {
  return compact({ master: n?.master, backup: n?.backup, fault: n?.fault, stop: n?.stop, deleted: n?.deleted, any: n?.any, masterRxLowerPri: n?.masterRxLowerPri, users: n?.users === undefined ? undefined : { ...n.users } });
}

function statusRanges(list: (number | string)[] | undefined): { min: number; max: number }[] {
  if (!list) return [{ min: 200, max: 299 }];
  return list.map((s) => {
    if (typeof s === 'number') return { min: s, max: s };
    const [lo, hi] = s.split('-').map(Number);
    return { min: lo ?? 0, max: hi ?? 0 };
  });
}

function lifecycleScript(s: { command: string; timeout?: string | number; user?: string } | undefined): LifecycleScriptConfig | undefined {
  return s === undefined ? undefined : compact({ command: s.command, timeoutMs: ms(s.timeout, 10_000), user: s.user });
}

/** The keys of one page of an http check: `urls` stands for all of them. */
const URL_KEYS = ['path', 'status', 'bodyRegex', 'bodyRegexFlags', 'bodyRegexNoMatch', 'bodyRegexMinOffset', 'bodyRegexMaxOffset', 'digest'] as const;

/**
 * The check of a real server (its overrides merged over the service's, then defaults) as checkers: one per url of an http check with `urls` (keepalived
 * requires every url block to pass; checking each as its own checker with the same timing gives that,
 * and names the page that failed), else one.
 */
function expandUrls(own: HealthCheckFile | undefined, service: HealthCheckFile | undefined): HealthCheck[] {
  const m = mergeCheck(own, service);
  const urls = m.http?.urls;
  if (urls === undefined) return [normaliseCheck(m, own !== undefined || service !== undefined)];
  const { urls: _all, ...shared } = m.http ?? {};
  return urls.map((u) => normaliseCheck({ ...m, http: { ...shared, ...u } }, true));
}

/** A real server's further checkers: its own moreChecks, else the virtual server's; urls expanded. */
function moreChecks(own: HealthCheckFile[] | undefined, service: HealthCheckFile[] | undefined): HealthCheck[] {
  return (own ?? service ?? []).flatMap((c) => expandUrls(c, undefined));
}

function mergeCheck(own: HealthCheckFile | undefined, service: HealthCheckFile | undefined): HealthCheckFile {
  const m: HealthCheckFile = { ...service, ...own };
  // Checker settings merge key by key, so a real server can override just http.path.
  if (own?.http && service?.http) {
    m.http = { ...service.http, ...own.http };
    // One page or several: the real server's form replaces the service's.
    if (own.http.urls !== undefined) for (const k of URL_KEYS) Reflect.deleteProperty(m.http, k);
    else if (URL_KEYS.some((k) => own.http?.[k] !== undefined)) Reflect.deleteProperty(m.http, 'urls');
  }
  if (own?.udp && service?.udp) m.udp = { ...service.udp, ...own.udp };
  if (own?.dns && service?.dns) m.dns = { ...service.dns, ...own.dns };
  if (own?.exec && service?.exec) m.exec = { ...service.exec, ...own.exec };
  if (own?.smtp && service?.smtp) m.smtp = { ...service.smtp, ...own.smtp };
  if (own?.file && service?.file) m.file = { ...service.file, ...own.file };
  if (own?.agent && service?.agent) m.agent = { ...service.agent, ...own.agent };
  return m;
}

/** Defaults filled into one merged check; `given`: a healthCheck was written at all (else type none). */
function normaliseCheck(m: HealthCheckFile, given: boolean): HealthCheck {
  const type = m.type ?? (given ? 'tcp' : 'none');
  const hc: HealthCheck = {
    type,
    intervalMs: ms(m.interval, 5000),
    timeoutMs: ms(m.timeout, 2000),
    rise: m.rise ?? 1,
    fall: m.fall ?? 1,
    retry: m.retry ?? 0,
    delayBeforeRetryMs: ms(m.delayBeforeRetry, 1000),
    warmupMs: ms(m.warmup, 0),
    connectIp: m.connectIp,
    connectPort: m.connectPort,
    bindTo: m.bindTo,
    bindInterface: m.bindInterface,
    bindPort: m.bindPort,
    fwmark: m.fwmark,
    logAllFailures: m.logAllFailures ?? false,
  };
  if (type === 'http' || type === 'https') {
    const h = m.http;
    hc.http = compact({
      path: h?.path ?? '/',
      status: statusRanges(h?.status),
      host: h?.host,
      bodyRegex: h?.bodyRegex,
      bodyRegexFlags: h?.bodyRegexFlags,
      bodyRegexNoMatch: h?.bodyRegexNoMatch,
      bodyRegexMinOffset: h?.bodyRegexMinOffset,
      bodyRegexMaxOffset: h?.bodyRegexMaxOffset,
      digest: h?.digest?.toLowerCase(),
      protocol: h?.protocol ?? '1.1',
      headers: h?.headers ?? {},
      tlsVerify: h?.tlsVerify ?? false,
      sni: h?.sni,
      ca: h?.ca,
      clientCertificate: h?.clientCertificate,
    });
  }
  if (type === 'udp') hc.udp = compact({ payload: (m.udp?.payload ?? '').toLowerCase(), expect: m.udp?.expect, minReplyLength: m.udp?.minReplyLength, maxReplyLength: m.udp?.maxReplyLength });
  if (type === 'dns' && m.dns)
    hc.dns = compact({
      name: m.dns.name, type: m.dns.type ?? 'A', expectRcode: m.dns.expectRcode ?? 'NOERROR', expectAnswer: m.dns.expectAnswer,
      protocol: m.dns.protocol ?? 'udp', tcpOnTruncation: m.dns.tcpOnTruncation ?? true,
    });
  if (type === 'smtp') hc.smtp = compact({ helo: m.smtp?.helo });
  if (type === 'file' && m.file) hc.file = { path: m.file.path, weight: m.file.weight ?? 1, reverse: m.file.reverse ?? false };
  if (type === 'exec' && m.exec) hc.exec = { command: m.exec.command, dynamicWeight: m.exec.dynamicWeight ?? false };
  if (m.agent && type !== 'none') hc.agent = compact({ port: m.agent.port, send: m.agent.send });
  return compact(hc);
}

/** One check as written (a real server's over its service's), with the defaults the code fills in: the docs' source. */
export function healthCheck(own: HealthCheckFile | undefined, service: HealthCheckFile | undefined): HealthCheck {
  return normaliseCheck(mergeCheck(own, service), own !== undefined || service !== undefined);
}

/** healthCheck and moreChecks of a real server (or, with `own` undefined, of the service). */
function checkers(
  own: HealthCheckFile | undefined, service: HealthCheckFile | undefined, ownMore: HealthCheckFile[] | undefined, serviceMore: HealthCheckFile[] | undefined,
): { healthCheck: HealthCheck; moreChecks: HealthCheck[] } {
  const [first, ...pages] = expandUrls(own, service);
  return { healthCheck: first as HealthCheck, moreChecks: [...pages, ...moreChecks(ownMore, serviceMore)] };
}

type VipFile = NonNullable<NonNullable<NonNullable<ConfigFile['vrrp']>['instances']>[number]['virtualIpaddresses']>[number];

/** A VIP as written (text or object) in its normal form; `dev` defaults to the instance's interface. */
function vipOf(v: VipFile, defaultDev: string): Vip {
  const o = typeof v === 'string' ? { address: v } : v;
  const c = parseCidr(o.address) ?? { address: o.address, prefix: 32, family: 4 as const };
  return compact({
    cidr: `${c.address}/${c.prefix}`,
    address: c.address,
    prefix: c.prefix,
    family: c.family,
    dev: 'dev' in o && o.dev !== undefined ? o.dev : defaultDev,
    label: 'label' in o ? o.label : undefined,
    scope: 'scope' in o && o.scope !== undefined ? o.scope : 'global',
    broadcast: 'broadcast' in o ? o.broadcast : undefined,
    peer: 'peer' in o ? o.peer : undefined,
    home: 'home' in o ? o.home : undefined,
    dad: 'dad' in o ? o.dad : undefined,
    noPrefixRoute: 'noPrefixRoute' in o ? o.noPrefixRoute : undefined,
    preferredLft: 'preferredLft' in o ? o.preferredLft : undefined,
  });
}

export function normalise(file: ConfigFile, source: string): Config {
  const listen = file.api?.listen ?? DEFAULTS.apiListen;
  const hp = parseHostPort(listen) ?? { host: '127.0.0.1', port: 9180 };

  const scripts: Record<string, VrrpScript> = {};
  for (const [name, s] of Object.entries(file.vrrp?.scripts ?? {})) {
    const intervalMs = ms(s.interval, 1000);
    scripts[name] = compact({
      name,
      command: s.command,
      intervalMs,
      timeoutMs: ms(s.timeout, intervalMs),
      rise: s.rise ?? 1,
      fall: s.fall ?? 1,
      weight: s.weight ?? 0,
      user: s.user,
    });
  }

  const processes: Record<string, TrackProcessOptions> = {};
  for (const [name, p] of Object.entries(file.vrrp?.processes ?? {})) {
    processes[name] = compact({
      process: p.process,
      parameters: p.parameters === undefined ? undefined : [...p.parameters],
      paramMatch: p.paramMatch,
      fullCommand: p.fullCommand,
      quorum: p.quorum,
      quorumMax: p.quorumMax,
      weight: p.weight ?? 1,
      reverse: p.reverse,
      forkDelayMs: p.forkDelay === undefined ? undefined : ms(p.forkDelay, 0),
      terminateDelayMs: p.terminateDelay === undefined ? undefined : ms(p.terminateDelay, 0),
    });
  }

  const globalGarp = garp(file.vrrp?.garp, GARP_DEFAULTS, true);
  const lowerPrioNoAdvert = file.vrrp?.lowerPrioNoAdvert ?? false;
  const higherPrioSendAdvert = file.vrrp?.higherPrioSendAdvert ?? false;
  const groupOf = new Map<string, string>();
  for (const g of file.vrrp?.syncGroups ?? []) for (const n of g.instances) groupOf.set(n, g.name);

  const instances: VrrpInstance[] = (file.vrrp?.instances ?? []).map((inst) => {
    const toVip = (v: VipFile): Vip => vipOf(v, inst.interface);
    const vips = (inst.virtualIpaddresses ?? []).map(toVip);
    // Without VIPs (a version 2 instance of tracking and notify only) the unicast addresses give the family.
    const unicast = inst.unicastSrcIp ?? inst.unicastPeers?.[0];
    return compact({
      name: inst.name,
      interface: inst.interface,
      virtualRouterId: inst.virtualRouterId,
      priority: inst.priority ?? DEFAULTS.priority,
      initialState: inst.state ?? 'BACKUP',
      version: inst.version ?? 3,
      family: vips[0]?.family ?? (unicast !== undefined ? (ipFamily(unicast) ?? 4) : 4),
      advertIntervalMs: ms(inst.advertInterval, DEFAULTS.advertIntervalMs),
      preempt: inst.preempt ?? true,
      preemptDelayMs: ms(inst.preemptDelay, 0),
      accept: inst.accept ?? false,
      authentication: inst.authentication ? { type: inst.authentication.type, password: inst.authentication.password } : undefined,
      unicastSrcIp: inst.unicastSrcIp,
      unicastPeers: [...(inst.unicastPeers ?? [])],
      unicastTtl: inst.unicastTtl,
      downTimerAdverts: inst.downTimerAdverts,
      oldUnicastChecksum: inst.oldUnicastChecksum,
      notifyDeleted: inst.notifyDeleted ?? false,
      dontTrackPrimary: inst.dontTrackPrimary ?? false,
      promoteSecondaries: inst.promoteSecondaries ?? false,
      multicastGroup: inst.multicastGroup,
      trackSrcIp: inst.trackSrcIp ?? false,
      virtualIpaddresses: vips,
      virtualIpaddressesExcluded: (inst.virtualIpaddressesExcluded ?? []).map(toVip),
      trackInterfaces: (inst.trackInterfaces ?? []).map((t) => ({ name: t.name, weight: t.weight ?? 0 })),
      trackScripts: (inst.trackScripts ?? []).map((t) => ({ name: t.name, weight: t.weight ?? scripts[t.name]?.weight ?? 0 })),
      trackFiles: (inst.trackFiles ?? []).map((t) => ({ path: t.path, weight: t.weight ?? 1 })),
      trackProcesses: (inst.trackProcesses ?? []).map((t) => ({ name: t.name, weight: t.weight ?? processes[t.name]?.weight ?? 1, reverse: t.reverse ?? processes[t.name]?.reverse ?? false })),
      notify: notify(inst.notify),
      garp: garp(inst.garp, globalGarp),
      lowerPrioNoAdvert: inst.lowerPrioNoAdvert ?? lowerPrioNoAdvert,
      higherPrioSendAdvert: inst.higherPrioSendAdvert ?? higherPrioSendAdvert,
      syncGroup: groupOf.get(inst.name),
      virtualRoutes: (inst.virtualRoutes ?? []).map((r) => ({ ...r })),
      virtualRules: (inst.virtualRules ?? []).map((r) => ({ ...r })),
      vmac: inst.vmac === undefined ? undefined : { name: inst.vmac.name ?? `vrrp.${inst.virtualRouterId}`, xmitBase: inst.vmac.xmitBase ?? false },
      ipvlan: inst.ipvlan === undefined ? undefined : compact({ name: inst.ipvlan.name ?? `vrrp.${inst.virtualRouterId}`, address: inst.ipvlan.address, type: inst.ipvlan.type ?? 'bridge' }),
    });
  });

  const virtualServers: VirtualServer[] = (file.virtualServers ?? []).map((vs) => {
    const protocol = vs.protocol ?? 'tcp';
    const family = vs.address !== undefined ? (ipFamily(vs.address) ?? 4) : vs.family === 'ipv6' ? 6 : 4;
    const id = vs.fwmark !== undefined ? `fwmark:${family}:${vs.fwmark}` : serviceKey(protocol, vs.address ?? '', vs.port ?? 0);
    const method = vs.method ?? 'nat';
    const realServers: RealServer[] = (vs.realServers ?? []).map((rs) => {
      const port = rs.port ?? vs.port ?? 0;
      return compact({
        id: realServerKey(rs.address, port),
        address: rs.address,
        port,
        family: ipFamily(rs.address) ?? 4,
        weight: rs.weight ?? DEFAULTS.weight,
        method: rs.method ?? method,
        tunnel: rs.tunnel ? compact({ type: rs.tunnel.type, port: rs.tunnel.port, checksum: rs.tunnel.checksum }) : undefined,
        upperThreshold: rs.upperThreshold ?? 0,
        lowerThreshold: rs.lowerThreshold ?? 0,
        ...checkers(rs.healthCheck, vs.healthCheck, rs.moreChecks, vs.moreChecks),
        notify: compact({ up: rs.notify?.up, down: rs.notify?.down }),
      });
    });
    const sorry = vs.sorryServer;
    return compact({
      id,
      name: vs.name ?? id,
      family,
      protocol,
      address: vs.address,
      port: vs.fwmark !== undefined ? undefined : vs.port,
      fwmark: vs.fwmark,
      scheduler: vs.scheduler ?? DEFAULTS.scheduler,
      // mh behind ECMP: hash the port too (NAT'd clients spread), and fall back past an overloaded server.
      schedulerFlags: [...(vs.schedulerFlags ?? ((vs.scheduler ?? DEFAULTS.scheduler) === 'mh' ? (['mh-fallback', 'mh-port'] as const) : []))],
      method,
      persistence: vs.persistence
        ? { timeoutMs: ms(vs.persistence.timeout, 300_000), netmask: vs.persistence.netmask ?? (family === 4 ? '255.255.255.255' : '128'), ...(vs.persistence.engine !== undefined ? { engine: vs.persistence.engine } : {}) }
        : undefined,
      onePacket: vs.onePacket ?? false,
      quorum: vs.quorum ?? DEFAULTS.quorum,
      hysteresis: vs.hysteresis ?? 0,
      inhibitOnFailure: vs.inhibitOnFailure ?? false,
      alpha: vs.alpha ?? false,
      haSuspend: vs.haSuspend ?? false,
      omega: vs.omega ?? false,
      notify: compact({ quorumUp: vs.notify?.quorumUp, quorumDown: vs.notify?.quorumDown }),
      sorryServer: sorry
        ? {
            id: realServerKey(sorry.address, sorry.port ?? vs.port ?? 0),
            address: sorry.address,
            port: sorry.port ?? vs.port ?? 0,
            method: sorry.method ?? method,
            inhibit: sorry.inhibit ?? false,
          }
        : undefined,
      ...checkers(undefined, vs.healthCheck, undefined, vs.moreChecks),
      realServers,
    });
  });

  const sd = file.ipvs?.syncDaemon;
  return {
    source,
    node: compact({ name: file.node?.name ?? hostname(), startupScript: lifecycleScript(file.node?.startupScript), shutdownScript: lifecycleScript(file.node?.shutdownScript) }),
    api: compact({ listen, host: hp.host, port: hp.port, socket: file.api?.socket ?? DEFAULTS.apiSocket, allowedHosts: [...(file.api?.allowedHosts ?? [])], tls: file.api?.tls ? { ...file.api.tls } : undefined, prometheus: file.api?.prometheus ? { ...file.api.prometheus } : undefined }),
    stateFile: file.stateFile ?? DEFAULTS.stateFile,
    dataplane: file.dataplane ?? 'auto',
    ipvs: compact({
      removal: file.ipvs?.removal ?? 'graceful',
      drainTimeoutMs: ms(file.ipvs?.drainTimeout, 60_000),
      timeouts: compact({
        tcpMs: file.ipvs?.timeouts?.tcp !== undefined ? ms(file.ipvs.timeouts.tcp, 0) : undefined,
        tcpFinMs: file.ipvs?.timeouts?.tcpFin !== undefined ? ms(file.ipvs.timeouts.tcpFin, 0) : undefined,
        udpMs: file.ipvs?.timeouts?.udp !== undefined ? ms(file.ipvs.timeouts.udp, 0) : undefined,
      }),
      syncDaemon: sd
        ? {
            interface: sd.interface,
            syncId: sd.syncId ?? 0,
            maxLen: sd.maxLen ?? 1472,
            mcastGroup: sd.mcastGroup ?? '224.0.0.81',
            port: sd.port ?? 8848,
            ttl: sd.ttl ?? 1,
            role: sd.role ?? 'follow-vrrp',
            // Why these defaults (docs/ipvs.md, "What is synced and when"): the kernel's own (3 50, refresh 0) syncs a
            // connection at its 3rd, 53rd, 103rd… packet, so a connection that sends little has a copy on the backup that
            // expired long before the master's; a failover then resets it. Refresh-driven sync renews that copy.
            threshold: sd.threshold ?? 3,
            thresholdPeriod: sd.thresholdPeriod ?? 0,
            refreshPeriodMs: ms(sd.refreshPeriod, 60_000),
            persistMode: sd.persistMode ?? 'all',
            ports: sd.ports ?? 1,
          }
        : undefined,
    }),
    nftables: { table: file.nftables?.table ?? 'lvsd', masquerade: file.nftables?.masquerade ?? true },
    userspace: { idleTimeoutMs: ms(file.userspace?.idleTimeout, 300_000), proxyProtocol: file.userspace?.proxyProtocol ?? 'none' },
    vrrp: {
      garp: globalGarp,
      garpGroups: (file.vrrp?.garpGroups ?? []).map((g) => ({ ...(g.interfaces !== undefined ? { interfaces: [...g.interfaces] } : {}), intervalMs: ms(g.interval, 0), naIntervalMs: ms(g.naInterval, 0) })),
      lowerPrioNoAdvert,
      higherPrioSendAdvert,
      scriptUser: file.vrrp?.scriptUser,
      scriptSecurity: file.vrrp?.scriptSecurity ?? false,
      notifyFifo: file.vrrp?.notifyFifo === undefined ? undefined : compact({ path: file.vrrp.notifyFifo.path, script: file.vrrp.notifyFifo.script }),
      multicastGroup4: file.vrrp?.multicastGroup4 ?? '224.0.0.18',
      multicastGroup6: file.vrrp?.multicastGroup6 ?? 'ff02::12',
      startupDelayMs: ms(file.vrrp?.startupDelay, 0),
      delayAfterBootMs: ms(file.vrrp?.delayAfterBoot, 0),
      staticIpaddresses: (file.vrrp?.staticIpaddresses ?? []).map((v) => vipOf(v, '')),
      staticRoutes: (file.vrrp?.staticRoutes ?? []).map((r) => ({ ...r })),
      staticRules: (file.vrrp?.staticRules ?? []).map((r) => ({ ...r })),
      interfaceUpDownDelays: Object.fromEntries(Object.entries(file.vrrp?.interfaceUpDownDelays ?? {}).map(([name, d]) => [name, { downMs: ms(d.down, 0), upMs: ms(d.up, 0) }])),
      disableLocalIgmp: file.vrrp?.disableLocalIgmp ?? false,
      nftables: { ...DEFAULT_VMAC_NFT, ...file.vrrp?.nftables },
      scripts,
      processes,
      instances,
      syncGroups: (file.vrrp?.syncGroups ?? []).map((g) => ({ name: g.name, instances: [...g.instances], notify: notify(g.notify) })),
      ...(file.vrrp?.realtimePriority !== undefined ? { realtimePriority: file.vrrp.realtimePriority } : {}),
    },
    ...(file.bgp ? { bgp: bgpConfig(file.bgp, virtualServers) } : {}),
    ...(file.alerts ? { alerts: alertsConfig(file.alerts, virtualServers) } : {}),
    ...(file.cluster ? { cluster: clusterConfig(file.cluster) } : {}),
    virtualServers,
  };
}
