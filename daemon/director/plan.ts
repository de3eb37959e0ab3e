// Maps the normalised config onto what each component takes: the dataplane's service plans, the health
// monitor's services and targets, and the VRRP engine's options. Pure; the one place where config
// vocabulary meets component vocabulary, so the components never import the config module.
import type { Config, HealthCheck, RealServer, VirtualServer, Vip } from '../config/types.js';
import type { DrainPolicy } from '../dataplane/ipvs/drain.js';
import type { CheckOptions, HttpCheckOptions, UdpCheckOptions } from '../health/options.js';
import type { HealthService, HealthTarget } from '../health/monitor.js';
import type { VrrpOptions } from '../vrrp/index.js';
import { targetKey } from '../state/target-key.js';
import type { RealServerPlan, ServicePlan } from './desired.js';


export function servicePlan(vs: VirtualServer): ServicePlan {
  const plan: ServicePlan = {
    id: vs.id,
    name: vs.name,
    family: vs.family,
    protocol: vs.protocol,
    scheduler: vs.scheduler,
    quorum: vs.quorum,
    realServers: vs.realServers.map((rs) => realServerPlan(rs, vs.inhibitOnFailure)),
  };
  if (vs.address !== undefined) plan.address = vs.address;
  if (vs.port !== undefined) plan.port = vs.port;
  if (vs.fwmark !== undefined) plan.fwmark = vs.fwmark;
  if (vs.schedulerFlags.length > 0) plan.schedulerFlags = [...vs.schedulerFlags];
  if (vs.persistence !== undefined) {
    plan.persistence = { timeoutSec: Math.max(1, Math.round(vs.persistence.timeoutMs / 1000)), netmask: vs.persistence.netmask };
    if (vs.persistence.engine !== undefined) plan.persistence.engine = vs.persistence.engine;
  }
  if (vs.onePacket) plan.onePacket = true;
  if (vs.sorryServer !== undefined) {
    plan.sorryServer = { ...vs.sorryServer, weight: 1 };
  }
  return plan;
}

function realServerPlan(rs: RealServer, inhibitOnFailure: boolean): RealServerPlan {
  const plan: RealServerPlan = {
    id: rs.id,
    address: rs.address,
    port: rs.port,
    weight: rs.weight,
    method: rs.method,
    inhibitOnFailure,
  };
  if (rs.tunnel !== undefined) plan.tunnel = rs.tunnel;
  if (rs.upperThreshold > 0) plan.upperThreshold = rs.upperThreshold;
  if (rs.lowerThreshold > 0) plan.lowerThreshold = rs.lowerThreshold;
  return plan;
}

export function checkOptions(hc: HealthCheck, alpha: boolean): CheckOptions {
  const o: CheckOptions = {
    type: hc.type,
    intervalMs: hc.intervalMs,
    timeoutMs: hc.timeoutMs,
    rise: hc.rise,
    fall: hc.fall,
    retry: hc.retry,
    delayBeforeRetryMs: hc.delayBeforeRetryMs,
    warmupMs: hc.warmupMs,
    alpha,
  };
  if (hc.connectIp !== undefined) o.connectIp = hc.connectIp;
  if (hc.connectPort !== undefined) o.connectPort = hc.connectPort;
  if (hc.bindTo !== undefined) o.bindTo = hc.bindTo;
  if (hc.bindInterface !== undefined) o.bindInterface = hc.bindInterface;
  if (hc.bindPort !== undefined) o.bindPort = hc.bindPort;
  if (hc.fwmark !== undefined) o.fwmark = hc.fwmark;
  if (hc.logAllFailures) o.logAllFailures = true;
  if (hc.http !== undefined) {
    const h: HttpCheckOptions = {
      path: hc.http.path,
      status: hc.http.status.map((r) => (r.min === r.max ? r.min : `${r.min}-${r.max}`)),
      headers: hc.http.headers,
      tlsVerify: hc.http.tlsVerify,
    };
    if (hc.http.host !== undefined) h.host = hc.http.host;
    if (hc.http.bodyRegex !== undefined) h.bodyRegex = hc.http.bodyRegex;
    if (hc.http.bodyRegexFlags !== undefined) h.bodyRegexFlags = hc.http.bodyRegexFlags;
    if (hc.http.bodyRegexNoMatch !== undefined) h.bodyRegexNoMatch = hc.http.bodyRegexNoMatch;
    if (hc.http.bodyRegexMinOffset !== undefined) h.bodyRegexMinOffset = hc.http.bodyRegexMinOffset;
    if (hc.http.bodyRegexMaxOffset !== undefined) h.bodyRegexMaxOffset = hc.http.bodyRegexMaxOffset;
    if (hc.http.protocol !== '1.1') h.protocol = hc.http.protocol;
    if (hc.http.digest !== undefined) h.digest = hc.http.digest;
    if (hc.http.sni !== undefined) h.sni = hc.http.sni;
    if (hc.http.ca !== undefined) h.ca = hc.http.ca;
    if (hc.http.clientCertificate !== undefined) h.clientCertificate = { ...hc.http.clientCertificate };
    o.http = h;
  }
  if (hc.udp !== undefined) {
    const u: UdpCheckOptions = { payload: hc.udp.payload };
    if (hc.udp.expect !== undefined) {
      // Hex bytes, or a regular expression written /re/ (the slashes are not part of it).
      const re = /^\/(.*)\/$/s.exec(hc.udp.expect);
      u.expect = /^[0-9a-f]+$/i.test(hc.udp.expect) ? { hex: hc.udp.expect } : { regex: re?.[1] ?? hc.udp.expect };
    }
    if (hc.udp.minReplyLength !== undefined) u.minReplyLength = hc.udp.minReplyLength;
    if (hc.udp.maxReplyLength !== undefined) u.maxReplyLength = hc.udp.maxReplyLength;
    o.udp = u;
  }
  if (hc.dns !== undefined) {
    o.dns = { name: hc.dns.name, type: hc.dns.type, expectRcode: hc.dns.expectRcode as 'NOERROR', protocol: hc.dns.protocol, tcpOnTruncation: hc.dns.tcpOnTruncation };
    if (hc.dns.expectAnswer !== undefined) o.dns.expectAnswer = hc.dns.expectAnswer;
  }
  if (hc.smtp !== undefined) o.smtp = { ...hc.smtp };
  if (hc.file !== undefined) o.file = { ...hc.file };
  if (hc.exec !== undefined) o.exec = { command: hc.exec.command, dynamicWeight: hc.exec.dynamicWeight };
  if (hc.agent !== undefined) o.agent = { ...hc.agent };
  return o;
}

export interface HealthPlan {
  services: HealthService[];
  targets: HealthTarget[];
}

/** Every real server with a check (type none = not checked, always up), all its checkers. Quorum groups are service ids. */
export function healthPlan(config: Config): HealthPlan {
  const services: HealthService[] = [];
  const targets: HealthTarget[] = [];
  for (const vs of config.virtualServers) {
    const svc: HealthService = { name: vs.id, quorum: vs.quorum, hysteresis: vs.hysteresis, omega: vs.omega };
    if (vs.notify.quorumUp !== undefined || vs.notify.quorumDown !== undefined) svc.notify = { ...vs.notify };
    services.push(svc);
    for (const rs of vs.realServers) {
      // Every checker must pass (keepalived); a none check among them checks nothing, so it is left out.
      const [first, ...more] = [rs.healthCheck, ...rs.moreChecks].filter((c) => c.type !== 'none');
      if (first === undefined) continue;
      const t: HealthTarget = {
        id: targetKey({ service: vs.id, realServer: rs.id }),
        service: vs.id,
        name: `${vs.name}/${rs.id}`,
        address: rs.address,
        port: rs.port === 0 ? (first.connectPort ?? 0) : rs.port,
        weight: rs.weight,
        check: checkOptions(first, vs.alpha),
        omega: vs.omega,
        logFields: { virtualServer: vs.name, realServer: rs.id },
      };
      if (more.length > 0) t.moreChecks = more.map((c) => checkOptions(c, vs.alpha));
      if (rs.notify.up !== undefined || rs.notify.down !== undefined) t.notify = { ...rs.notify };
      targets.push(t);
    }
  }
  return { services, targets };
}

/** A VIP for the engine: where it goes and its address options; the default scope stays implicit. */
const vipOption = (v: Vip): Exclude<VrrpOptions['instances'][number]['vips'][number], string> => {
  const { cidr, address: _a, prefix: _p, family: _f, scope, ...rest } = v;
  return { address: cidr, ...rest, ...(scope !== 'global' ? { scope } : {}) };
};

export function vrrpOptions(config: Config): VrrpOptions {
  const scripts: VrrpOptions['scripts'] = {};
  for (const [name, s] of Object.entries(config.vrrp.scripts)) {
    scripts[name] = { command: s.command, intervalMs: s.intervalMs, timeoutMs: s.timeoutMs, rise: s.rise, fall: s.fall, weight: s.weight, ...(s.user !== undefined ? { user: s.user } : {}) };
  }
  return {
    scripts,
    processes: Object.fromEntries(Object.entries(config.vrrp.processes).map(([name, p]) => [name, { ...p, ...(p.parameters !== undefined ? { parameters: [...p.parameters] } : {}) }])),
    garp: config.vrrp.garp,
    garpGroups: config.vrrp.garpGroups.map((g) => ({ ...g })),
    startupDelayMs: config.vrrp.startupDelayMs,
    ...(config.vrrp.scriptUser !== undefined ? { scriptUser: config.vrrp.scriptUser } : {}),
    scriptSecurity: config.vrrp.scriptSecurity,
    ...(config.vrrp.notifyFifo !== undefined ? { notifyFifo: { ...config.vrrp.notifyFifo } } : {}),
    multicastGroup4: config.vrrp.multicastGroup4,
    multicastGroup6: config.vrrp.multicastGroup6,
    delayAfterBootMs: config.vrrp.delayAfterBootMs,
    interfaceUpDownDelays: config.vrrp.interfaceUpDownDelays,
    staticIpaddresses: config.vrrp.staticIpaddresses.map((v) => ({ ...vipOption(v), dev: v.dev })),
    staticRoutes: config.vrrp.staticRoutes,
    staticRules: config.vrrp.staticRules,
    disableLocalIgmp: config.vrrp.disableLocalIgmp,
    nftables: { ...config.vrrp.nftables },
    ...(config.vrrp.realtimePriority !== undefined ? { realtimePriority: config.vrrp.realtimePriority } : {}),
    syncGroups: config.vrrp.syncGroups.map((g) => ({ name: g.name, instances: [...g.instances], notify: g.notify })),
    instances: config.vrrp.instances.map((i) => {
      const o: VrrpOptions['instances'][number] = {
        name: i.name,
        interface: i.interface,
        vrid: i.virtualRouterId,
        priority: i.priority,
        version: i.version,
        advertIntervalMs: i.advertIntervalMs,
        preempt: i.preempt,
        preemptDelayMs: i.preemptDelayMs,
        accept: i.accept,
        unicastPeers: [...i.unicastPeers],
        vips: i.virtualIpaddresses.map(vipOption),
        excludedVips: i.virtualIpaddressesExcluded.map(vipOption),
        lowerPrioNoAdvert: i.lowerPrioNoAdvert,
        higherPrioSendAdvert: i.higherPrioSendAdvert,
        trackInterfaces: i.trackInterfaces,
        trackScripts: i.trackScripts,
        trackFiles: i.trackFiles,
        trackProcesses: i.trackProcesses,
        notify: i.notify,
        garp: i.garp,
        initialState: i.initialState,
      };
      if (i.authentication !== undefined) o.authPass = i.authentication.password;
      if (i.unicastSrcIp !== undefined) o.unicastSrcIp = i.unicastSrcIp;
      if (i.vmac !== undefined) o.vmac = { ...i.vmac };
      if (i.ipvlan !== undefined) o.ipvlan = { ...i.ipvlan };
      if (i.virtualRoutes.length > 0) o.virtualRoutes = i.virtualRoutes.map((r) => ({ ...r }));
      if (i.virtualRules.length > 0) o.virtualRules = i.virtualRules.map((r) => ({ ...r }));
      if (i.unicastTtl !== undefined) o.unicastTtl = i.unicastTtl;
      if (i.downTimerAdverts !== undefined) o.downTimerAdverts = i.downTimerAdverts;
      if (i.notifyDeleted) o.notifyDeleted = true;
      if (i.oldUnicastChecksum !== undefined) o.oldUnicastChecksum = i.oldUnicastChecksum;
      if (i.dontTrackPrimary) o.dontTrackPrimary = true;
      if (i.promoteSecondaries) o.promoteSecondaries = true;
      if (i.multicastGroup !== undefined) o.multicastGroup = i.multicastGroup;
      if (i.trackSrcIp) o.trackSrcIp = true;
      return o;
    }),
  };
}

export function drainPolicy(config: Config): DrainPolicy {
  return { mode: config.ipvs.removal, timeoutMs: config.ipvs.drainTimeoutMs };
}
