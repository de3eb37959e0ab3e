// What the VRRP runtime needs of its host (runtime.ts): the I/O it does and the hooks it reports through,
// so tests run it on a fake network and the engine process (io.ts) on the real one.
import type { IfAddress, LinkInfo } from '../net/rtnl.js';
import type { AddressOptions } from '../net/addr-request.js';
import type { ReceivedPacket, VrrpSocketOptions, VrrpTransport } from '../net/vrrp-socket.js';
import type { RouteIo } from './route-apply.js';
import type { LocalIgmpIo } from './local-igmp.js';
import type { LogLevel, TransitionEvent } from './protocol.js';
import type { NormalizedInstance } from './options.js';

/** The I/O the runtime needs, so tests and other hosts can provide their own (routes: virtual_routes/rules). */
export interface RuntimeIo extends RouteIo {
  links(): Promise<LinkInfo[]>;
  addresses(ifindex: number): Promise<IfAddress[]>;
  addAddress(ifindex: number, cidr: string, o?: AddressOptions): Promise<boolean>;
  delAddress(ifindex: number, cidr: string, o?: Pick<AddressOptions, 'peer'>): Promise<boolean>;
  watchLinks(onLink: (l: LinkInfo, deleted: boolean) => void): void;
  /** Address events, for track_src_ip (absent: the source address is taken as present for good). */
  watchAddresses?(onAddress: (ifindex: number, address: Buffer, deleted: boolean) => void): void;
  openSocket(o: VrrpSocketOptions, onPacket: (p: ReceivedPacket) => void, onError: (e: Error) => void): VrrpTransport;
  announce(ifname: string, ifindex: number, vip: Buffer): void;
  /** Optional warm-up of the announce path (sockets, MAC) for an interface. */
  prepareAnnounce?(ifname: string, family: 4 | 6): void;
  /** Milliseconds since the system booted (/proc/uptime), for vrrp_delay_after_boot; null if unknown. */
  uptimeMs?(): number | null;
  /** net.ipv4.igmp_link_local_mcast_reports, for disableLocalIgmp (absent: the option has nothing to act on). */
  localIgmpReports?: LocalIgmpIo;
  /**
   * use_vmac / use_ipvlan under dynamic_interfaces: makes (or adopts) the instance's link once its parent
   * is there, and returns the instance as it then runs (onVmac's); null: not made (absent: never made late).
   */
  remakeVmac?(instance: string): Promise<NormalizedInstance | null>;
  close(): void;
}

export interface RuntimeHooks {
  transition(e: TransitionEvent): void;
  /** A MASTER heard an advert of lower priority (keepalived's MASTER_RX_LOWER_PRI event: notify_master_rx_lower_pri, the notify FIFO). */
  masterRxLowerPri?(instance: string, priority: number): void;
  /** A new MASTER's VIPs are up and its first burst of gratuitous ARPs / NAs is out. */
  announced?(instance: string): void;
  log(level: LogLevel, msg: string, fields: Record<string, unknown>): void;
}
