// Builds the DirectorSnapshot (what the API, panel, metrics and `lvsd status` show) from the parts each
// component reports. Pure: no component is asked anything here.
import type { Config, VirtualServer } from '../config/types.js';
import type { Counters, ObservedService, ObservedTable } from '../dataplane/types.js';
import type { ServiceSnapshot, TargetSnapshot } from '../health/monitor.js';
import type { InstanceSnapshot, VrrpSnapshot } from '../vrrp/index.js';
import { targetKey } from '../state/target-key.js';
import type {
  DirectorSnapshot,
  HealthSnapshot,
  Override,
  RateCounters,
  RealServerSnapshot,
  VirtualServerSnapshot,
  BgpSnapshot,
  VrrpInstanceSnapshot,
  VrrpTransition,
} from './snapshot.js';

export interface SnapshotParts {
  node: string;
  version: string;
  startedAt: string;
  now: Date;
  dataplane: DirectorSnapshot['dataplane'];
  config: Config;
  configInfo: DirectorSnapshot['config'];
  vrrp: VrrpSnapshot | null;
  vrrpProblem: string | null;
  /** Transition history per instance, newest last. */
  transitions: ReadonlyMap<string, VrrpTransition[]>;
  forced: ReadonlyMap<string, 'lower-priority' | 'maintenance'>;
  health: { targets: TargetSnapshot[]; services: ServiceSnapshot[] };
  observed: ObservedTable;
  overrides: ReadonlyMap<string, Override>;
  quorumLost: { has(serviceId: string): boolean };
  /** The BGP supervisor's view; absent without a bgp section. */
  bgp?: BgpSnapshot | undefined;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function rates(c: Counters | undefined): RateCounters | null {
  return c === undefined ? null : { ...c };
}

function instanceSnapshot(i: InstanceSnapshot, parts: SnapshotParts): VrrpInstanceSnapshot {
  const peers =
    i.masterAddress !== null && i.masterAddress !== i.sourceAddress && i.masterPriority !== null
      ? [{ address: i.masterAddress, priority: i.masterPriority, lastSeen: iso(parts.vrrp?.at ?? parts.now.getTime()) }]
      : [];
  return {
    name: i.name,
    interface: i.interface,
    vrid: i.vrid,
    version: i.version,
    family: i.family,
    state: i.state,
    basePriority: i.basePriority,
    effectivePriority: i.priority,
    masterAddress: i.state === 'MASTER' ? i.sourceAddress : i.masterAddress,
    vips: i.vips,
    peers,
    transitions: parts.transitions.get(i.name) ?? [],
    adverts: { sent: i.counters.advertsSent, received: i.counters.advertsReceived, dropped: i.counters.drops },
    forced: parts.forced.get(i.name) ?? null,
    syncGroup: i.group ?? null,
  };
}

function healthOf(t: TargetSnapshot | undefined): HealthSnapshot {
  if (t === undefined) return { status: 'unknown', checker: 'none', since: null, lastCheck: null };
  return {
    status: t.checks === 0 && t.last === undefined ? 'unknown' : t.state,
    // Several checkers: "tcp + http GET /health"; the failing one leads lastCheck.result.
    checker: t.checkers === undefined ? t.type : t.checkers.map((c) => c.label).join(' + '),
    since: iso(t.since),
    lastCheck:
      t.last === undefined
        ? null
        : {
            at: iso(t.last.at),
            ok: t.last.reason === 'ok',
            latencyMs: t.last.latencyMs,
            result: t.last.reason === 'ok' ? t.last.detail : `${t.last.reason}: ${t.last.detail}`,
            error: t.last.reason === 'ok' ? null : t.last.detail,
          },
  };
}

function serviceSnapshot(vs: VirtualServer, parts: SnapshotParts, observed: ObservedService | undefined, targets: Map<string, TargetSnapshot>, services: Map<string, ServiceSnapshot>): VirtualServerSnapshot {
  const held = new Map((observed?.realServers ?? []).map((r) => [r.id, r]));
  const realServers: RealServerSnapshot[] = vs.realServers.map((rs) => {
    const o = held.get(rs.id);
    return {
      id: rs.id,
      address: rs.address,
      port: rs.port,
      method: rs.method,
      weight: { configured: rs.weight, effective: o?.weight ?? null },
      health: healthOf(targets.get(targetKey({ service: vs.id, realServer: rs.id }))),
      override: parts.overrides.get(targetKey({ service: vs.id, realServer: rs.id })) ?? null,
      connections: { active: o?.activeConns ?? 0, inactive: o?.inactiveConns ?? 0 },
      counters: rates(o?.counters),
    };
  });
  const q = services.get(vs.id);
  const lost = parts.quorumLost.has(vs.id);
  return {
    id: vs.id,
    name: vs.name,
    protocol: vs.protocol,
    address: vs.address ?? null,
    port: vs.port ?? null,
    fwmark: vs.fwmark ?? null,
    method: vs.method,
    scheduler: vs.scheduler,
    quorum: { required: vs.quorum, liveWeight: q?.aliveWeight ?? realServers.reduce((s, r) => s + r.weight.configured, 0), up: !lost, sorryServerActive: lost && vs.sorryServer !== undefined },
    checksSuspended: q?.suspended ?? false,
    override: parts.overrides.get(vs.id) ?? null,
    counters: rates(observed?.counters),
    realServers,
  };
}

export function buildSnapshot(parts: SnapshotParts): DirectorSnapshot {
  const targets = new Map(parts.health.targets.map((t) => [t.id, t]));
  const services = new Map(parts.health.services.map((s) => [s.name, s]));
  const observed = new Map(parts.observed.services.map((s) => [s.id, s]));
  return {
    node: parts.node,
    version: parts.version,
    startedAt: parts.startedAt,
    at: parts.now.toISOString(),
    dataplane: parts.dataplane,
    vrrp: (parts.vrrp?.instances ?? []).map((i) => instanceSnapshot(i, parts)),
    vrrpProblem: parts.vrrpProblem,
    virtualServices: parts.config.virtualServers.map((vs) => serviceSnapshot(vs, parts, observed.get(vs.id), targets, services)),
    ...(parts.bgp === undefined ? {} : { bgp: parts.bgp }),
    config: parts.configInfo,
  };
}
