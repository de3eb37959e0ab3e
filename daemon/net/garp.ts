// Gratuitous ARP and unsolicited Neighbour Advertisement: pure frame builders plus a sender that keeps
// its sockets open (closing an AF_PACKET socket costs 12–23 ms, see notes/vrrp.md).
import { native, ETH_P_ARP, IPPROTO_ICMPV6, IPV6, SOL } from './native.js';
import { parseIPv6 } from './addr.js';

export const BROADCAST_MAC = Buffer.from('ffffffffffff', 'hex');
const ALL_NODES = parseIPv6('ff02::1');

/** ARP request announcing `vip` at `mac`, as keepalived sends it: sender IP = target IP, target MAC all-ones. */
export function garpPayload(mac: Buffer, vip: Buffer): Buffer {
  const b = Buffer.alloc(28);
  b.writeUInt16BE(1, 0); // Ethernet
  b.writeUInt16BE(0x0800, 2); // IPv4
  b[4] = 6;
  b[5] = 4;
  b.writeUInt16BE(1, 6); // request
  mac.copy(b, 8);
  vip.copy(b, 14);
  BROADCAST_MAC.copy(b, 18);
  vip.copy(b, 24);
  return b;
}

/** ICMPv6 Neighbour Advertisement (RFC 4861 §4.4), Override set, with the target link-layer option.
 * The kernel fills the checksum (raw ICMPv6 sockets always do). */
export function unsolicitedNa(mac: Buffer, vip: Buffer, router = false): Buffer {
  const b = Buffer.alloc(32);
  b[0] = 136;
  b.writeUInt32BE((router ? 0x80000000 : 0) | 0x20000000, 4);
  vip.copy(b, 8);
  b[24] = 2; // target link-layer address
  b[25] = 1;
  mac.copy(b, 26);
  return b;
}

export class GarpSender {
  private arpFd: number | null = null;
  private icmpFd: number | null = null;
  private readonly macs = new Map<string, Buffer>();

  /** Opens the sockets and reads the MAC ahead of time, so becoming master sends at once. */
  prepare(ifname: string, family: 4 | 6): void {
    this.mac(ifname, true);
    this.socket(family);
  }

  private mac(ifname: string, refresh = false): Buffer {
    let m = this.macs.get(ifname);
    if (m === undefined || refresh) {
      m = native().hwaddr(ifname);
      this.macs.set(ifname, m);
    }
    return m;
  }

  private socket(family: 4 | 6): number {
    const n = native();
    if (family === 4) {
      // Protocol 0: the socket only sends (it would otherwise queue every ARP packet it never reads).
      this.arpFd ??= n.openPacket(0);
      return this.arpFd;
    }
    if (this.icmpFd === null) {
      this.icmpFd = n.openRaw(6, IPPROTO_ICMPV6);
      n.setsockopt(this.icmpFd, SOL.IPV6, IPV6.MULTICAST_HOPS, 255);
      n.setsockopt(this.icmpFd, SOL.IPV6, IPV6.UNICAST_HOPS, 255);
      n.setsockopt(this.icmpFd, SOL.IPV6, IPV6.MULTICAST_LOOP, 0);
    }
    return this.icmpFd;
  }

  /** Sends one GARP (IPv4) or unsolicited NA (IPv6, from the VIP itself to ff02::1). */
  announce(ifname: string, ifindex: number, vip: Buffer): void {
    const n = native();
    const mac = this.mac(ifname);
    if (vip.length === 4) n.sendPacket(this.socket(4), ifindex, ETH_P_ARP, BROADCAST_MAC, garpPayload(mac, vip));
    else n.send(this.socket(6), unsolicitedNa(mac, vip), ALL_NODES, vip, ifindex);
  }

  close(): void {
    const n = native();
    if (this.arpFd !== null) n.close(this.arpFd);
    if (this.icmpFd !== null) n.close(this.icmpFd);
    this.arpFd = this.icmpFd = null;
  }
}
