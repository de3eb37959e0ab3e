// The instances of a VRRP scale run (test/netns/vrrp-scale.test.ts, bench/vrrp-scale.ts): `perLink`
// instances on eth0 (vlans 0) or on each of `vlans` links vl<id>, each with one VIP of its own. This host's
// kernel has no 802.1Q (nor dummy/ipvlan) module, so each "VLAN" is a veth pair of its own between the two
// namespaces: one L2 segment per interface, which is what a VLAN is to VRRP.
import type { Netns } from './netns.js';
export interface ScaleInstance {
  name: string;
  interface: string;
  vrid: number;
  /** With its prefix length. */
  vip: string;
}

export function scaleInstances(o: { vlans: number; perLink: number }): ScaleInstance[] {
  const out: ScaleInstance[] = [];
  const links = o.vlans === 0 ? ['eth0'] : Array.from({ length: o.vlans }, (_, v) => `vl${v + 10}`);
  for (const [l, ifname] of links.entries()) {
    for (let v = 1; v <= o.perLink; v++) {
      const n = out.length;
      out.push({ name: `VI_${n + 1}`, interface: ifname, vrid: v, vip: `10.${100 + (l >> 8)}.${l & 255}.${v}/32` });
    }
  }
  return out;
}

/**
 * The links of `instances` other than eth0, as veth pairs between `a` and `b` (same name on both sides), up,
 * link n with 10.200.n.1/24 on `a` and 10.200.n.2/24 on `b` (VRRP sends from an address of the interface).
 */
export async function addScaleLinks(a: Netns, b: Netns, instances: ScaleInstance[]): Promise<void> {
  const links = [...new Set(instances.map((i) => i.interface))].filter((l) => l !== 'eth0');
  for (const l of links) await a.exec('ip', ['link', 'add', l, 'type', 'veth', 'peer', 'name', l, 'netns', b.name]);
  for (const [host, side] of [[a, 1], [b, 2]] as const) {
    await host.sh(links.map((l, n) => `ip addr add 10.200.${n}.${side}/24 dev ${l} && ip link set ${l} up`).join(' && '));
  }
}
