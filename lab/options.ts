// What `npm start` runs, decided from the environment and the kernel: the lab in network namespaces on this
// host (with which dataplane, and why), or the LVS DR pair on IPVS inside the QEMU guest (LVSD_LAB=guest) for a
// kernel without IPVS. Pure, so a unit test reads every choice and every refusal.

export type LabDataplane = 'ipvs' | 'nftables' | 'userspace';

/** Whether this kernel has IPVS, and what told us. */
export interface IpvsProbe {
  available: boolean;
  reason: string;
}

export type LabChoice =
  | { mode: 'namespaces'; dataplane: LabDataplane; why: string; ipvs: IpvsProbe }
  | { mode: 'guest'; why: string; ipvs: IpvsProbe; failoverAfterS: number };

const DATAPLANES: readonly LabDataplane[] = ['ipvs', 'nftables', 'userspace'];
export const GUEST_COMMAND = 'LVSD_LAB=guest npm start';

/**
 * LVSD_LAB: unset or "namespaces" (the lab on this host) or "guest". LVSD_LAB_DATAPLANE picks the lab's
 * dataplane (default: ipvs where the kernel has it, else nftables). LVSD_LAB_FAILOVER_AFTER: the guest demo's
 * seconds of traffic before it kills the master (default 20; Enter does it at once).
 */
export function labChoice(env: Readonly<Record<string, string | undefined>>, ipvs: IpvsProbe): LabChoice {
  const mode = env.LVSD_LAB ?? '';
  if (mode === 'guest') {
    const text = env.LVSD_LAB_FAILOVER_AFTER ?? '20';
    const after = Number(text);
    if (!/^\d+$/.test(text) || after < 5 || after > 600) throw new Error(`LVSD_LAB_FAILOVER_AFTER=${text}: expected whole seconds from 5 to 600`);
    return { mode: 'guest', ipvs, failoverAfterS: after, why: 'LVSD_LAB=guest: an LVS DR pair of two lvsd on IPVS, in a QEMU guest with Debian\'s kernel' };
  }
  if (mode !== '' && mode !== 'namespaces') throw new Error(`LVSD_LAB=${mode}: expected guest (the LVS DR pair on IPVS in a QEMU guest), ecmp (the active-active lab) or namespaces (the lab on this host)`);
  const asked = env.LVSD_LAB_DATAPLANE ?? '';
  if (asked !== '') {
    if (!(DATAPLANES as readonly string[]).includes(asked)) throw new Error(`LVSD_LAB_DATAPLANE=${asked}: expected one of ${DATAPLANES.join(', ')}`);
    if (asked === 'ipvs' && !ipvs.available) throw new Error(`LVSD_LAB_DATAPLANE=ipvs: this kernel has no IPVS (${ipvs.reason}); ${GUEST_COMMAND} runs the IPVS pair in a QEMU guest`);
    return { mode: 'namespaces', dataplane: asked as LabDataplane, ipvs, why: `LVSD_LAB_DATAPLANE=${asked}` };
  }
  return ipvs.available
    ? { mode: 'namespaces', dataplane: 'ipvs', ipvs, why: `this kernel has IPVS: ${ipvs.reason}` }
    : { mode: 'namespaces', dataplane: 'nftables', ipvs, why: `this kernel has no IPVS: ${ipvs.reason}` };
}
