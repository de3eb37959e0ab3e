// The BIRD config fragment lvsd owns (pure): one `protocol static` per announced prefix, which the operator's
// bird.conf includes and exports to its BGP peers (`export where proto ~ "lvsd_*"`, docs/bgp.md).
// Announce and withdraw at runtime are `enable`/`disable` of that protocol — instant, no reconfiguration —
// and the file says the same (`disabled yes|no`), because a later `configure` restarts a protocol whose
// runtime state differs from its config (measured: bird 2.0.12 brought an enabled `disabled yes` protocol
// down on the next configure). So the file is always lvsd's last decision.

export interface BirdAnnouncement {
  /** "192.0.2.10/32", "2001:db8::10/128". */
  prefix: string;
  announce: boolean;
  /** Standard communities (asn, value). */
  communities: readonly (readonly [number, number])[];
  /** Adds RFC 8326 GRACEFUL_SHUTDOWN (65535:0): the routers prefer other paths before the withdraw. */
  gracefulShutdown: boolean;
}

export const GRACEFUL_SHUTDOWN: readonly [number, number] = [65535, 0];

/** The protocol name of a prefix: stable across reloads (derived from the prefix, not a position). */
export function protocolName(prefix: string): string {
  return `lvsd_${prefix.replace(/[^0-9A-Za-z]/g, '_')}`;
}

export function renderBirdConfig(list: readonly BirdAnnouncement[]): string {
  const out = ['# Written by lvsd (bgp section of lvsd.yaml): do not edit, lvsd rewrites it.', ''];
  for (const a of [...list].sort((x, y) => (x.prefix < y.prefix ? -1 : x.prefix > y.prefix ? 1 : 0))) {
    const communities = [...a.communities, ...(a.gracefulShutdown ? [GRACEFUL_SHUTDOWN] : [])];
    const attrs = communities.map(([asn, value]) => ` bgp_community.add((${String(asn)}, ${String(value)}));`).join('');
    out.push(
      `protocol static ${protocolName(a.prefix)} {`,
      `  disabled ${a.announce ? 'no' : 'yes'};`,
      `  ${a.prefix.includes(':') ? 'ipv6' : 'ipv4'};`,
      // blackhole: the route exists only to be announced; the VIP itself is on lo for IPVS.
      `  route ${a.prefix} blackhole${attrs === '' ? '' : ` {${attrs} }`};`,
      '}',
      '',
    );
  }
  return out.join('\n');
}
