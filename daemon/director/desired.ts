// The one place that decides what the dataplane should hold:
//   configuration ⊕ health results ⊕ operator overrides ⊕ quorum  →  DesiredTable.
// Pure: the Director calls it on every event and hands the result to the dataplane, which changes only
// what differs. Removal is not graceful here — the drain policy wraps this output with the observed table.
import type { DesiredTable, RealServerSpec, ServiceSpec } from '../dataplane/types.js';
import type { HealthView } from '../health/monitor-api.js';
import type { Override } from '../state/schema.js';
import { targetKey } from '../state/target-key.js';

/** A real server as configured, before health and overrides. */
export interface RealServerPlan extends RealServerSpec {
  /** keepalived's inhibit_on_failure: a failed server stays at weight 0 instead of leaving. */
  inhibitOnFailure: boolean;
}

/** A virtual server as configured. */
export interface ServicePlan extends Omit<ServiceSpec, 'realServers'> {
  name: string;
  realServers: RealServerPlan[];
  /** `inhibit` (keepalived sorry_server_inhibit): kept at weight 0 while the quorum holds. */
  sorryServer?: RealServerSpec & { inhibit: boolean };
  /** Minimum total weight of live real servers (keepalived's quorum). */
  quorum: number;
}

export interface DesiredInputs {
  services: readonly ServicePlan[];
  /** Health by target key (state/target-key.ts); absent = not checked = up. The health monitor's own view. */
  health: { get(key: string): HealthView | undefined };
  /** Overrides keyed by service id (the whole service) or `${serviceId}/${realServerId}`. */
  overrides: ReadonlyMap<string, Override>;
  /** Virtual servers whose quorum is currently lost (hysteresis is applied by the health module). */
  quorumLost: { has(serviceId: string): boolean };
}

/** The weight a real server gets, or undefined when it must leave the table. */
export function effectiveWeight(
  rs: RealServerPlan,
  health: HealthView | undefined,
  serviceOverride: Override | undefined,
  override: Override | undefined,
): number | undefined {
  if (serviceOverride?.maintenance === true || override?.maintenance === true) return undefined;
  if (health !== undefined && !health.up) return rs.inhibitOnFailure ? 0 : undefined;
  if (serviceOverride?.drain === true || override?.drain === true) return 0;
  return override?.weight ?? serviceOverride?.weight ?? health?.dynamicWeight ?? rs.weight;
}

function toSpec(rs: RealServerSpec, weight: number): RealServerSpec {
  const spec: RealServerSpec = { id: rs.id, address: rs.address, port: rs.port, weight, method: rs.method };
  if (rs.tunnel !== undefined) spec.tunnel = rs.tunnel;
  if (rs.upperThreshold !== undefined) spec.upperThreshold = rs.upperThreshold;
  if (rs.lowerThreshold !== undefined) spec.lowerThreshold = rs.lowerThreshold;
  return spec;
}

/** A sort key for address:port that orders IPv4 before IPv6 and both numerically ("10.0.1.9" < "10.0.1.10"). */
export function canonicalKey(address: string, port: number): string {
  let addr: string;
  if (address.includes(':')) {
    const [head = '', tail] = address.split('::');
    const h = head === '' ? [] : head.split(':');
    const t = tail === undefined || tail === '' ? [] : tail.split(':');
    const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
    addr = `6:${groups.map((g) => g.toLowerCase().padStart(4, '0')).join(':')}`;
  } else {
    addr = `4:${address.split('.').map((o) => o.padStart(3, '0')).join('.')}`;
  }
  return `${addr}/${String(port).padStart(5, '0')}`;
}

/**
 * IPVS mh builds its table by walking the destinations in the order they were added, and contested slots
 * depend on that order (notes/scale-out.md): so for mh every director adds them in one canonical order, and a
 * failed real server is quiesced (weight 0: no slots, its place kept) rather than removed, so that directors
 * that check health independently, or restart, still build the same table.
 */
function mhOrdered(plan: ServicePlan): RealServerPlan[] {
  if (plan.scheduler !== 'mh') return plan.realServers;
  return [...plan.realServers].sort((a, b) => {
    const x = canonicalKey(a.address, a.port);
    const y = canonicalKey(b.address, b.port);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

export function desiredService(plan: ServicePlan, inputs: DesiredInputs): ServiceSpec {
  const { name: _name, realServers: _configured, sorryServer, quorum: _quorum, ...service } = plan;
  const serviceOverride = inputs.overrides.get(plan.id);
  const live: RealServerSpec[] = [];
  for (const rs of mhOrdered(plan)) {
    const key = targetKey({ service: plan.id, realServer: rs.id });
    const planned = plan.scheduler === 'mh' ? { ...rs, inhibitOnFailure: true } : rs;
    const weight = effectiveWeight(planned, inputs.health.get(key), serviceOverride, inputs.overrides.get(key));
    if (weight !== undefined) live.push(toSpec(rs, weight));
  }
  // keepalived: with quorum lost, the sorry server takes the service and the servers still alive leave
  // it; those inhibited on failure stay beside it at weight 0, as they were.
  if (inputs.quorumLost.has(plan.id) && sorryServer !== undefined) {
    const inhibited = live.filter((spec) => inputs.health.get(targetKey({ service: plan.id, realServer: spec.id }))?.up === false);
    return { ...service, realServers: [...inhibited, toSpec(sorryServer, sorryServer.weight)] };
  }
  // sorry_server_inhibit: the sorry server waits in the table at weight 0 (unless it is one of the real servers).
  if (sorryServer?.inhibit === true && !live.some((spec) => spec.id === sorryServer.id)) return { ...service, realServers: [...live, toSpec(sorryServer, 0)] };
  return { ...service, realServers: live };
}

export function desiredTable(inputs: DesiredInputs): DesiredTable {
  return { services: inputs.services.map((s) => desiredService(s, inputs)) };
}

/** Total weight of live servers, as keepalived compares against quorum. */
export function liveWeight(plan: ServicePlan, inputs: Pick<DesiredInputs, 'health'>): number {
  let sum = 0;
  for (const rs of plan.realServers) {
    const h = inputs.health.get(targetKey({ service: plan.id, realServer: rs.id }));
    if (h === undefined || h.up) sum += h?.dynamicWeight ?? rs.weight;
  }
  return sum;
}
