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
  sorryServer?: RealServerSpec;
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

export function desiredService(plan: ServicePlan, inputs: DesiredInputs): ServiceSpec {
  const { name: _name, realServers, sorryServer, quorum: _quorum, ...service } = plan;
  const serviceOverride = inputs.overrides.get(plan.id);
  const live: RealServerSpec[] = [];
  for (const rs of realServers) {
    const key = targetKey({ service: plan.id, realServer: rs.id });
    const weight = effectiveWeight(rs, inputs.health.get(key), serviceOverride, inputs.overrides.get(key));
    if (weight !== undefined) live.push(toSpec(rs, weight));
  }
  // keepalived: with quorum lost, the sorry server takes the service and the servers still alive leave
  // it; those inhibited on failure stay beside it at weight 0, as they were.
  if (inputs.quorumLost.has(plan.id) && sorryServer !== undefined) {
    const inhibited = live.filter((spec) => inputs.health.get(targetKey({ service: plan.id, realServer: spec.id }))?.up === false);
    return { ...service, realServers: [...inhibited, toSpec(sorryServer, sorryServer.weight)] };
  }
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
