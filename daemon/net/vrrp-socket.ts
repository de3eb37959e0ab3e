// One raw IP protocol-112 socket for one VRRP instance: bound to its interface, joined to the VRRP
// group (multicast) or not (unicast), TTL/hop limit 255, our own multicast not looped back, other VRIDs
// filtered out in the kernel. Delivers each packet with source, destination, TTL and interface; sends
// with a chosen source address.
import { native, IP, IPV6, SOL, SO_BINDTODEVICE, SO_RCVBUF, SO_RCVBUFFORCE } from './native.js';
import { parseIP } from './addr.js';
import { splitIPv4 } from './ipv4-header.js';
import { encodeProgram, vridProgram } from './vrid-filter.js';

export const VRRP_PROTO = 112;

export interface VrrpSocketOptions {
  family: 4 | 6;
  ifname: string;
  ifindex: number;
  /** Only adverts of this VRID are passed up (net/vrid-filter.ts), the others dropped in the kernel; absent: all (a watcher). */
  vrid?: number;
  /** Join the group (224.0.0.18 / ff02::12 unless `group` says otherwise) on the interface. */
  multicast: boolean;
  /** The multicast group to join (keepalived vrrp_mcast_group4/6). Default 224.0.0.18 / ff02::12. */
  group?: Buffer;
  /** TTL / hop limit of unicast packets (keepalived unicast_ttl). Default 255 (IPv4); IPv6 keeps 255 too. */
  unicastTtl?: number;
}

export interface ReceivedPacket {
  src: Buffer;
  dst: Buffer;
  ttl: number;
  ifindex: number;
  /** The VRRP message (IPv4 header already stripped). */
  payload: Buffer;
}

/** The few calls the runtime makes; tests swap in a fake. */
export interface VrrpTransport {
  send(payload: Buffer, dst: Buffer, src: Buffer): void;
  close(): void;
}

const GROUP_V4 = parseIP('224.0.0.18');
const GROUP_V6 = parseIP('ff02::12');

function mreqn(group: Buffer, ifindex: number): Buffer {
  const b = Buffer.alloc(12); // struct ip_mreqn { imr_multiaddr, imr_address, imr_ifindex }
  group.copy(b, 0);
  b.writeInt32LE(ifindex, 8);
  return b;
}

function mreq6(group: Buffer, ifindex: number): Buffer {
  const b = Buffer.alloc(20); // struct ipv6_mreq { ipv6mr_multiaddr, ipv6mr_interface }
  group.copy(b, 0);
  b.writeInt32LE(ifindex, 16);
  return b;
}

export class VrrpSocket implements VrrpTransport {
  private readonly fd: number;
  private readonly handle: object;
  private closed = false;

  constructor(
    private readonly opts: VrrpSocketOptions,
    onPacket: (p: ReceivedPacket) => void,
    onError: (e: Error) => void,
  ) {
    const n = native();
    const fd = n.openRaw(opts.family, VRRP_PROTO);
    this.fd = fd;
    try {
      // Before the interface is bound, so that no other router's advert is queued on the way.
      if (opts.vrid !== undefined) n.attachFilter(fd, encodeProgram(vridProgram(opts.family, opts.vrid)));
      n.setsockopt(fd, SOL.SOCKET, SO_BINDTODEVICE, Buffer.from(`${opts.ifname}\0`));
      // Room for ~1000 packets: a burst (or a flood of junk) while the thread is descheduled must not
      // push out the one advert that matters. FORCE needs CAP_NET_ADMIN; plain RCVBUF is capped by rmem_max.
      try {
        n.setsockopt(fd, SOL.SOCKET, SO_RCVBUFFORCE, 1 << 20);
      } catch {
        n.setsockopt(fd, SOL.SOCKET, SO_RCVBUF, 1 << 20);
      }
      if (opts.family === 4) {
        n.setsockopt(fd, SOL.IP, IP.TOS, 0xc0); // internetwork control, as keepalived
        n.setsockopt(fd, SOL.IP, IP.TTL, opts.unicastTtl ?? 255);
        n.setsockopt(fd, SOL.IP, IP.MULTICAST_TTL, 255);
        n.setsockopt(fd, SOL.IP, IP.MULTICAST_LOOP, 0);
        n.setsockopt(fd, SOL.IP, IP.MULTICAST_ALL, 0);
        n.setsockopt(fd, SOL.IP, IP.MULTICAST_IF, mreqn(Buffer.alloc(4), opts.ifindex));
        if (opts.multicast) n.setsockopt(fd, SOL.IP, IP.ADD_MEMBERSHIP, mreqn(opts.group ?? GROUP_V4, opts.ifindex));
      } else {
        n.setsockopt(fd, SOL.IPV6, IPV6.TCLASS, 0xc0);
        n.setsockopt(fd, SOL.IPV6, IPV6.UNICAST_HOPS, opts.unicastTtl ?? 255);
        n.setsockopt(fd, SOL.IPV6, IPV6.MULTICAST_HOPS, 255);
        n.setsockopt(fd, SOL.IPV6, IPV6.MULTICAST_LOOP, 0);
        n.setsockopt(fd, SOL.IPV6, IPV6.MULTICAST_ALL, 0);
        n.setsockopt(fd, SOL.IPV6, IPV6.MULTICAST_IF, opts.ifindex);
        if (opts.multicast) n.setsockopt(fd, SOL.IPV6, IPV6.ADD_MEMBERSHIP, mreq6(opts.group ?? GROUP_V6, opts.ifindex));
      }
    } catch (e) {
      n.close(fd);
      throw e;
    }
    this.handle = n.watch(fd, (status) => {
      if (status < 0) {
        onError(new Error(`poll error ${status} on VRRP socket (${opts.ifname})`));
        return;
      }
      // Drain everything waiting: one wake-up may stand for several packets.
      for (let i = 0; i < 256 && !this.closed; i++) {
        let r;
        try {
          r = n.recv(fd);
        } catch (e) {
          onError(e instanceof Error ? e : new Error(String(e)));
          return;
        }
        if (r === null) return;
        if (opts.family === 4) {
          const s = splitIPv4(r.data);
          if (!s.ok) continue; // not a whole IPv4 header: nothing to decode, the kernel never hands us one
          onPacket({ src: r.src, dst: r.dst ?? s.parts.dst, ttl: s.parts.ttl, ifindex: r.ifindex, payload: s.parts.payload });
        } else {
          onPacket({ src: r.src, dst: r.dst ?? GROUP_V6, ttl: r.ttl, ifindex: r.ifindex, payload: r.data });
        }
      }
    });
  }

  send(payload: Buffer, dst: Buffer, src: Buffer): void {
    native().send(this.fd, payload, dst, src, this.opts.ifindex);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const n = native();
    n.unwatch(this.handle);
    try {
      if (this.opts.multicast) {
        if (this.opts.family === 4) n.setsockopt(this.fd, SOL.IP, IP.DROP_MEMBERSHIP, mreqn(this.opts.group ?? GROUP_V4, this.opts.ifindex));
        else n.setsockopt(this.fd, SOL.IPV6, IPV6.DROP_MEMBERSHIP, mreq6(this.opts.group ?? GROUP_V6, this.opts.ifindex));
      }
    } catch {
      /* the interface may be gone; closing leaves the group anyway */
    }
    n.close(this.fd);
  }
}
