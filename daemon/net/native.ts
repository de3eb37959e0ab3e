// Loads lvsd's N-API addon (daemon/net/native/vrrp_net.c, built by `npm ci` through binding.gyp into
// build/Release). Only daemon/net/ talks to it.
import { loadAddon } from '../native-addon.js';

export interface RecvResult {
  data: Buffer;
  src: Buffer;
  dst?: Buffer;
  /** Hop limit from ancillary data (IPv6); -1 when not reported (IPv4: it is in the header). */
  ttl: number;
  ifindex: number;
  truncated: number;
}

export interface NativeNet {
  openRaw(family: 4 | 6, protocol: number): number;
  openPacket(ethertype: number): number;
  setsockopt(fd: number, level: number, name: number, value: number | Buffer): void;
  /** SO_ATTACH_FILTER with a classic BPF program (struct sock_filter[] as bytes: net/vrid-filter.ts). */
  attachFilter(fd: number, program: Buffer): void;
  recv(fd: number): RecvResult | null;
  send(fd: number, data: Buffer, dst: Buffer, src: Buffer | null, ifindex: number): number;
  sendPacket(fd: number, ifindex: number, ethertype: number, dstMac: Buffer, payload: Buffer): number;
  close(fd: number): void;
  hwaddr(ifname: string): Buffer;
  watch(fd: number, onReadable: (status: number) => void): object;
  unwatch(handle: object): void;
  /** SCHED_RR for the calling thread (needs CAP_SYS_NICE). */
  setRealtime(priority: number): boolean;
  /** SCHED_RR for every thread of this process (needs CAP_SYS_NICE); returns how many were set. */
  setRealtimeProcess(priority: number): number;
  /** One datagram to an AF_UNIX socket; `sunPath` is sun_path's bytes (see daemon/systemd/notify.ts). */
  sendUnixDatagram(sunPath: Buffer, data: Buffer): number;
}

let cached: NativeNet | null = null;

export function native(): NativeNet {
  if (cached !== null) return cached;
  cached = loadAddon('lvsd_net') as NativeNet | null;
  if (cached === null) {
    throw new Error('lvsd native addon not built (build/Release/lvsd_net.node missing): run `npm ci` or `npm rebuild` (needs node-gyp and a C compiler)');
  }
  return cached;
}

/** Linux socket constants the addon's callers need (from <linux/in.h>, <linux/in6.h>, <asm/socket.h>). */
export const SOL = { SOCKET: 1, IP: 0, IPV6: 41 } as const;
export const SO_BINDTODEVICE = 25;
export const SO_RCVBUF = 8;
export const SO_RCVBUFFORCE = 33;
export const IP = { TOS: 1, TTL: 2, MULTICAST_IF: 32, MULTICAST_TTL: 33, MULTICAST_LOOP: 34, ADD_MEMBERSHIP: 35, DROP_MEMBERSHIP: 36, MULTICAST_ALL: 49 } as const;
export const IPV6 = { UNICAST_HOPS: 16, MULTICAST_IF: 17, MULTICAST_HOPS: 18, MULTICAST_LOOP: 19, ADD_MEMBERSHIP: 20, DROP_MEMBERSHIP: 21, MULTICAST_ALL: 29, TCLASS: 67 } as const;
export const IPPROTO_ICMPV6 = 58;
export const ETH_P_ARP = 0x0806;
