// Graceful removal of real servers — a pure policy, backend-neutral, with the clock passed in.
//
// The kube-proxy #81775 lesson: deleting a real server at once lets connection reuse send new
// connections to a server that is going away. So, in 'graceful' mode, a real server that leaves the
// desired table is first kept at weight 0 (no new connections, existing ones continue) and deleted only
// once its active + inactive connections reach 0 or `timeoutMs` has passed. UDP has no close to wait
// for, so UDP real servers go at once unless `drainUdp` is set (kube-proxy does the same).
// 'immediate' deletes at once. 'inhibit' is keepalived's inhibit_on_failure: the server stays at
// weight 0 for as long as its service exists, and comes back with its weight when desired again.
// A whole service that leaves the desired table is deleted at once in every mode.
import type { DesiredTable, ObservedTable, RealServerSpec, ServiceSpec } from '../types.js';

export type DrainMode = 'graceful' | 'immediate' | 'inhibit';

export interface DrainPolicy {
  mode: DrainMode;
  /** Longest a removed real server is kept at weight 0 in 'graceful' mode. */
  timeoutMs: number;
  /** Drain UDP real servers too (default false: deleted at once). */
  drainUdp?: boolean;
}

export const DEFAULT_DRAIN_POLICY: DrainPolicy = { mode: 'graceful', timeoutMs: 60_000 };

/**
 * The net.ipv4.vs.* sysctls that decide what the kernel does with connections to a real server that is quiesced
 * (weight 0: failed, draining, inhibited) or gone, written by the IPVS backend when it starts (per network
 * namespace). The kernel's defaults (0, 0) are the wrong ones for a director whose real servers crash:
 * - expire_nodest_conn 1: a packet of a connection whose real server was deleted expires the entry at once, so
 *   the client is told (a reset) instead of its packets being dropped in silence until the 15-minute TCP timeout;
 *   on kernels ≥ 5.9 a new SYN that reuses an entry of a weight-0 real server is also scheduled afresh (the
 *   kube-proxy #81775 case: new connections reused onto a dead real server).
 * - expire_quiescent_template 1: a persistence template pointing at a weight-0 real server expires at the
 *   client's next connection, so a persistent client is sent to a live server rather than kept on a dead one.
 * conn_reuse_mode stays the kernel's 1. kube-proxy sets the same two to 1.
 */
export const REMOVAL_SYSCTLS: readonly (readonly [name: string, value: string])[] = [
  ['expire_nodest_conn', '1'],
  ['expire_quiescent_template', '1'],
];

export interface DrainEntry {
  serviceId: string;
  realServer: RealServerSpec;
  /** When the server left the desired table (ms, injected clock). */
  since: number;
}

/** Key: "serviceId|realServerId". */
export type DrainState = ReadonlyMap<string, DrainEntry>;

export interface DrainResult {
  /** The desired table with draining servers added back at weight 0: what the reconciler should see. */
  effective: DesiredTable;
  state: Map<string, DrainEntry>;
  /** Servers that started draining in this step, and those whose drain ended (deleted now). */
  started: string[];
  finished: { key: string; reason: 'drained' | 'timeout' | 'immediate' }[];
}

/**
 * Whether every server `held` is listed in `want` (nothing leaving: every service of a restart adopting its
 * table), checked without building a set. The kernel lists a service's destinations newest first, so the
 * mirrored position is tried first, then the same one, then a scan.
 */
function allListed(held: readonly { id: string }[], want: readonly RealServerSpec[]): boolean {
  const n = want.length;
  for (let i = 0; i < held.length; i++) {
    const id = held[i]?.id;
    if (want[n - 1 - i]?.id === id || want[i]?.id === id) continue;
    if (!want.some((r) => r.id === id)) return false;
  }
  return true;
}

export const drainKey = (serviceId: string, realServerId: string): string => `${serviceId}|${realServerId}`;

/**
 * One step of the policy. `observed` is what the dataplane holds now (with connection counts),
 * `owned` the service ids lvsd owns (foreign services are none of its business).
 */
export function applyDrain(
  desired: DesiredTable,
  observed: ObservedTable,
  owned: ReadonlySet<string>,
  state: DrainState,
  policy: DrainPolicy,
  now: number,
): DrainResult {
  const next = new Map<string, DrainEntry>();
  const started: string[] = [];
  const finished: DrainResult['finished'] = [];
  const observedById = new Map(observed.services.map((s) => [s.id, s]));

  const services = desired.services.map((want): ServiceSpec => {
    const have = observedById.get(want.id);
    if (have === undefined || !owned.has(want.id) || allListed(have.realServers, want.realServers)) return want;
    const wanted = new Set(want.realServers.map((r) => r.id));
    const kept: RealServerSpec[] = [];
    for (const r of have.realServers) {
      if (wanted.has(r.id)) continue;
      const key = drainKey(want.id, r.id);
      const prev = state.get(key);
      const immediate = policy.mode === 'immediate' || (policy.mode === 'graceful' && want.protocol === 'udp' && want.fwmark === undefined && policy.drainUdp !== true);
      if (immediate) {
        finished.push({ key, reason: 'immediate' });
        continue;
      }
      const since = prev?.since ?? now;
      if (policy.mode === 'graceful') {
        if (r.activeConns + r.inactiveConns === 0) {
          finished.push({ key, reason: 'drained' });
          continue;
        }
        if (now - since >= policy.timeoutMs) {
          finished.push({ key, reason: 'timeout' });
          continue;
        }
      }
      const spec: RealServerSpec = { id: r.id, address: r.address, port: r.port, method: r.method, weight: 0 };
      if (r.tunnel !== undefined) spec.tunnel = r.tunnel;
      if (r.upperThreshold !== undefined) spec.upperThreshold = r.upperThreshold;
      if (r.lowerThreshold !== undefined) spec.lowerThreshold = r.lowerThreshold;
      if (prev === undefined) started.push(key);
      next.set(key, { serviceId: want.id, realServer: spec, since });
      kept.push(spec);
    }
    return kept.length === 0 ? want : { ...want, realServers: [...want.realServers, ...kept] };
  });
  return { effective: { services }, state: next, started, finished };
}
