// One address add/delete over rtnetlink, as keepalived 2.2.7 builds it for a virtual_ipaddress line
// (measured with `ip -j addr` against keepalived in a namespace). Pure: the socket is rtnl.ts's.
import type { rt } from 'netlink';
import { parseCidr, parseIP, familyOf } from './addr.js';

export type AddressScope = 'global' | 'site' | 'link' | 'host';

/** keepalived's virtual_ipaddress options, in lvsd's words. */
export interface AddressOptions {
  /** IPv4 label, e.g. "eth0:vip". */
  label?: string;
  /** Default global. */
  scope?: AddressScope;
  /** IPv4 broadcast (keepalived `brd`); absent = none, as keepalived (it sets one only when given). */
  broadcast?: string;
  /**
   * Point-to-point peer "ADDR[/LEN]" (keepalived `peer`): the address is added as local with this peer, and
   * the prefix is the peer's (default host), keepalived ignoring the address's own ("Cannot specify address
   * prefix when specifying peer address").
   */
  peer?: string;
  /** IFA_F_HOMEADDRESS (keepalived `home`; IPv6 — the kernel ignores it on IPv4). */
  home?: boolean;
  /** Run duplicate address detection on an IPv6 address (keepalived `-nodad`); default: nodad, as keepalived. */
  dad?: boolean;
  /** IFA_F_NOPREFIXROUTE (keepalived `noprefixroute`): no prefix route for the address. */
  noPrefixRoute?: boolean;
  /**
   * Preferred lifetime in seconds, or "forever" (keepalived `preferred_lft`), IPv6 only: keepalived ignores it on
   * IPv4 addresses. Default: 0 (deprecated: never picked as a source) for a /128, forever otherwise — keepalived's.
   */
  preferredLft?: number | 'forever';
}

const AF_INET = 2;
const AF_INET6 = 10;
const SCOPES: Record<AddressScope, number> = { global: 0, site: 200, link: 253, host: 254 };
const FOREVER = 0xffffffff;

export interface AddressRequest {
  data: { family: number; prefixlen: number; index: number; scope: number };
  attrs: rt.AddressAttrs;
}

/** The ifaddrmsg and attributes that add (or, the same identity, delete) `cidr` with options `o` on `ifindex`. */
export function addressRequest(ifindex: number, cidr: string, o: AddressOptions = {}): AddressRequest {
  const c = parseCidr(cidr);
  const v4 = c.family === 4;
  let prefixlen = c.prefixLength;
  const attrs: rt.AddressAttrs = { local: c.bytes, address: c.bytes };
  if (o.peer !== undefined) {
    const [addr = '', len] = o.peer.split('/');
    if (familyOf(addr) !== c.family) throw new Error(`peer ${o.peer} is not an IPv${c.family} address like ${cidr}`);
    attrs.address = parseIP(addr);
    prefixlen = len === undefined ? (v4 ? 32 : 128) : Number(len);
  }
  // IPv6 takes IFA_LOCAL only with a peer (IFA_ADDRESS is the peer then); without one, IFA_ADDRESS alone.
  if (!v4 && o.peer === undefined) delete attrs.local;
  if (v4 && o.label !== undefined) attrs.label = o.label;
  if (v4 && o.broadcast !== undefined) attrs.broadcast = parseIP(o.broadcast);
  const flags: rt.AddressFlags = {};
  // IPv6 VIPs skip DAD unless asked: the address must answer (and source our NA) at once.
  if (!v4 && o.dad !== true) flags.nodad = true;
  if (o.home === true) flags.homeaddress = true;
  if (o.noPrefixRoute === true) flags.noprefixroute = true;
  if (Object.keys(flags).length > 0) attrs.flags = flags;
  if (!v4) {
    const lft = o.preferredLft ?? (prefixlen === 128 ? 0 : 'forever');
    if (lft !== 'forever') attrs.cacheInfo = { ifaPrefered: lft, ifaValid: FOREVER };
  }
  return { data: { family: v4 ? AF_INET : AF_INET6, prefixlen, index: ifindex, scope: SCOPES[o.scope ?? 'global'] }, attrs };
}
