// Pure decisions about VRRP virtual MAC interfaces (keepalived use_vmac), no I/O: which macvlan each
// instance needs, whether a link already there is ours to adopt, and the instance as the runtime then
// runs it. keepalived 2.2.7, measured (docs/vrrp.md, "Virtual MAC"): a macvlan in private mode named
// vrrp.<VRID>, carrying 00:00:5e:00:01:VRID (IPv6: …:02:VRID) and the VIPs; adverts go out of it with the
// parent's address as source, or out of the parent with vmac_xmit_base; a matching vrrp.N already there
// is reused ("Found matching interface"), and it is removed on stop.
import { formatMac, virtualMac, type IpvlanFlags, type MacvlanMode } from '../net/link-codec.js';
import type { LinkDetail } from '../net/rtnl.js';
import type { NormalizedInstance, NormalizedOptions } from './options.js';
import type { VmacMember } from './vmac-igmp.js';

export const VMAC_MODE: MacvlanMode = 'private';

export interface VmacSpec {
  instance: string;
  name: string;
  parent: string;
  /** The virtual MAC; for an ipvlan (which has its parent's), ''. */
  mac: string;
  family: 4 | 6;
  /** keepalived use_ipvlan: an l2 ipvlan of this type, with this address on it. */
  ipvlan?: { type: IpvlanFlags; address?: string };
  /** An IPv4 instance with excluded IPv6 addresses (keepalived's EVIP_OTHER_FAMILY): IPv6 stays on for it. */
  otherFamily: boolean;
}

export function vmacSpecs(o: NormalizedOptions): VmacSpec[] {
  return o.instances.flatMap((i) => {
    const v = i.vmac;
    if (v === undefined) return [];
    const otherFamily = i.excludedVips.some((x) => x.address.includes(':') !== (i.family === 6));
    const s: VmacSpec = { instance: i.name, name: v.name, parent: v.parent, mac: v.ipvlan === undefined ? formatMac(virtualMac(i.vrid, i.family)) : '', family: i.family, otherFamily };
    if (v.ipvlan !== undefined) s.ipvlan = v.ipvlan;
    return [s];
  });
}

/** What the IGMP/MLD table needs of each VMAC (vmac-igmp.ts): its families are the instance's and, with excluded VIPs of the other, that one too (keepalived's EVIP_OTHER_FAMILY). */
export function vmacMembers(o: NormalizedOptions): VmacMember[] {
  return o.instances.flatMap((i) => {
    // keepalived's rules match oifkind macvlan, and it adds no ipvlan to the map (measured: no table).
    if (i.vmac === undefined || i.vmac.ipvlan !== undefined) return [];
    const families = new Set<4 | 6>([i.family]);
    for (const x of i.excludedVips) families.add(x.address.includes(':') ? 6 : 4);
    return [{ name: i.vmac.name, parent: i.vmac.parent, families: [...families].sort() }];
  });
}

export type VmacPlan =
  | { action: 'create'; parentIndex: number }
  | { action: 'adopt'; index: number; up: boolean }
  | { action: 'conflict'; reason: string };

/** What to do for `s` given the links there are now: create it, adopt ours, or refuse a stranger's. */
export function planVmac(s: VmacSpec, links: readonly LinkDetail[]): VmacPlan {
  const parent = links.find((l) => l.name === s.parent);
  if (parent === undefined) return { action: 'conflict', reason: `interface ${s.parent} missing` };
  const l = links.find((x) => x.name === s.name);
  if (l === undefined) return { action: 'create', parentIndex: parent.index };
  const mac = l.mac === null ? '' : formatMac(l.mac);
  // Ours only if every property we would have given it matches: never take over someone else's link.
  if (s.ipvlan !== undefined) {
    // keepalived 2.2.7 reuses an l2 ipvlan of that name (its parser: "already exists and is not an l2 ipvlan").
    if (l.kind?.kind !== 'ipvlan' || l.kind.ipvlanMode !== 'l2') return { action: 'conflict', reason: `${s.name} exists and is not an l2 ipvlan (${l.kind?.kind ?? 'a plain device'})` };
    if (l.parent !== parent.index) return { action: 'conflict', reason: `${s.name} exists on another interface than ${s.parent}` };
    return { action: 'adopt', index: l.index, up: l.adminUp };
  }
  if (l.kind?.kind !== 'macvlan') return { action: 'conflict', reason: `${s.name} exists and is not a macvlan (${l.kind?.kind ?? 'a plain device'})` };
  if (l.parent !== parent.index) return { action: 'conflict', reason: `${s.name} exists on another interface than ${s.parent}` };
  if (mac !== s.mac) return { action: 'conflict', reason: `${s.name} exists with MAC ${mac}, not the virtual MAC ${s.mac}` };
  return { action: 'adopt', index: l.index, up: l.adminUp };
}

/**
 * The instance as the runtime runs it: on the macvlan (or, with xmitBase, on the parent with the VIPs on
 * the macvlan); VIPs meant for the parent go to the macvlan. An IPv4 macvlan has no address of its own,
 * so the adverts' source is the parent's address (`parentSource`), as keepalived sends them.
 */
export function onVmac(i: NormalizedInstance, parentSource: string | null): NormalizedInstance {
  const v = i.vmac;
  if (v === undefined) return i;
  // keepalived 2.2.7 with use_ipvlan leaves the VIPs on the parent (measured in the guest; they answer
  // with the same MAC either way): only a macvlan takes them.
  const move = <T extends { dev: string }>(x: T): T => (x.dev === v.parent && v.ipvlan === undefined ? { ...x, dev: v.name } : x);
  const out: NormalizedInstance = { ...i, interface: v.xmitBase ? v.parent : v.name, vips: i.vips.map(move), excludedVips: i.excludedVips.map(move) };
  if (i.unicastSrcIp === undefined && i.family === 4 && !v.xmitBase && parentSource !== null) out.unicastSrcIp = parentSource;
  return out;
}

/**
 * keepalived's settings on a VMAC and its parent (measured, IPv4): on the macvlan arp_ignore 1 (answer
 * ARP only for its own addresses), accept_local 1 (its adverts come back with our own source), rp_filter
 * 0 and promote_secondaries 1; on the parent arp_ignore 1 and arp_filter 1 (so the parent does not
 * answer for the VIPs with its own MAC), left so after stop; conf/all/rp_filter 0 while any VMAC runs.
 */
export const VMAC_CONF = { arp_ignore: 1, accept_local: 1, rp_filter: 0, promote_secondaries: 1 } as const;
export const PARENT_CONF = { arp_ignore: 1, arp_filter: 1 } as const;
