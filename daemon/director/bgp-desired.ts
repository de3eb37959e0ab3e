// Pure: which prefixes this director announces over BGP, and why — the one place that decides it (as
// desired.ts decides the table). A prefix is announced while every virtual server it follows has quorum
// and no operator has withdrawn it from this director; on stop it is first announced with the
// graceful-shutdown community (draining), then withdrawn.
import type { BirdAnnouncement } from '../bgp/bird-config.js';
import type { BgpConfig } from '../config/types.js';

/** running: follow quorum; draining: the stop's graceful-shutdown wait; stopped: everything withdrawn. */
export type BgpPhase = 'running' | 'draining' | 'stopped';

export interface BgpDecision extends BirdAnnouncement {
  reason: string;
}

/** `withdrawn`: prefix → the operator who withdrew it (POST /api/v1/bgp/withdraw), until a restore. */
export function bgpAnnouncements(bgp: BgpConfig, quorumLost: { has(id: string): boolean }, phase: BgpPhase, withdrawn: ReadonlyMap<string, string> = new Map()): BgpDecision[] {
  return bgp.announce.map((a) => {
    const lost = a.virtualServers.filter((id) => quorumLost.has(id));
    const healthy = lost.length === 0;
    const base = { prefix: a.prefix, communities: a.communities };
    if (phase === 'stopped') return { ...base, announce: false, gracefulShutdown: false, reason: 'withdrawn: lvsd stopped' };
    const by = withdrawn.get(a.prefix);
    if (by !== undefined) return { ...base, announce: false, gracefulShutdown: false, reason: `withdrawn by operator ${by}` };
    if (!healthy) return { ...base, announce: false, gracefulShutdown: false, reason: `withdrawn: quorum lost on ${lost.join(', ')}` };
    if (phase === 'draining') return { ...base, announce: true, gracefulShutdown: true, reason: 'draining: graceful-shutdown community before the withdraw' };
    return { ...base, announce: true, gracefulShutdown: false, reason: `announced: quorum on ${a.virtualServers.join(', ')}` };
  });
}
