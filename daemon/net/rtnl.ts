// rtnetlink through npm `netlink`: interface lookup, address add/delete (VIPs), link state events.
// No spawning `ip`: an add is ~0.2 ms this way, ~3 ms through a child process.
// The package's own files, not its index: the index loads every family it knows (nl80211, WireGuard: ~110 ms
// of CPU at start as an ES import); these load only what lvsd uses.
import { FlagsNew } from 'netlink/dist/constants.js';
import { createRtNetlink, type RtNetlinkSocket } from 'netlink/dist/rt/rt.js';
import * as rt from 'netlink/dist/rt/structs.js';
import { addressRequest, type AddressOptions } from './addr-request.js';
import { decodeLinkInfo, ipvlanLinkInfo, macvlanLinkInfo, u32, type IpvlanFlags, type LinkKind, type MacvlanMode } from './link-codec.js';

export interface LinkInfo {
  index: number;
  name: string;
  /** IFF_UP and IFF_RUNNING: what keepalived's track_interface looks at. */
  up: boolean;
  mac: Buffer | null;
}

/** rtmsg / fib_rule_hdr with plain numbers (the netlink package types them as its enums). */
export interface RouteHeader { family: number; dstLen: number; table: number; protocol: number; scope: number; type: number }
export interface RuleHeader { family: number; dstLen: number; srcLen: number; table: number; action: number }

// The package types these header fields as its own enums, which lack values such as RTPROT_KEEPALIVED (18):
// the numbers go through unchanged.
/* eslint-disable @typescript-eslint/no-unsafe-enum-assignment */
const asRoute = (h: RouteHeader): rt.Route => h;
const asRule = (h: RuleHeader): rt.Rule => h;
/* eslint-enable @typescript-eslint/no-unsafe-enum-assignment */

/** A link with what a virtual MAC interface is recognised by: its kind (macvlan, …) and parent. */
export interface LinkDetail extends LinkInfo {
  kind: LinkKind | null;
  /** IFLA_LINK: the parent's ifindex (a macvlan's lower device); 0 = none. */
  parent: number;
  /** IFF_UP alone (administratively up), whatever the carrier. */
  adminUp: boolean;
}

export interface IfAddress {
  family: 4 | 6;
  address: Buffer;
  prefixLength: number;
  scope: number;
  label?: string;
}

const AF_INET = 2;
const AF_INET6 = 10;
const RTM_NEWLINK = 16;
const RTM_DELLINK = 17;
const RTM_NEWADDR = 20;
const RTM_DELADDR = 21;

function errnoOf(e: unknown): string {
  return e instanceof Error ? (/\b(E[A-Z]+)\b/.exec(e.message)?.[1] ?? '') : '';
}

function linkInfo(m: rt.LinkMessage): LinkInfo {
  return {
    index: m.data.index ?? 0,
    name: m.attrs.ifname ?? '',
    up: m.data.flags?.up === true && m.data.flags.running === true,
    mac: m.attrs.address ?? null,
  };
}

/** Requests in flight on one rtnetlink socket (limited()). */
const RTNL_INFLIGHT = 16;

export class Rtnl {
  private readonly sock: RtNetlinkSocket;
  private events: RtNetlinkSocket | null = null;
  private addrEvents: RtNetlinkSocket | null = null;

  #inflight = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * Runs a request with at most RTNL_INFLIGHT others in flight on the socket. Five hundred VIPs added at
   * once (500 instances becoming MASTER together) crashed the netlink package's send path inside its addon
   * ("terminate called after throwing an instance of 'Napi::Error'"); queued here, they go through.
   */
  private async limited<T>(f: () => Promise<T>): Promise<T> {
    if (this.#inflight >= RTNL_INFLIGHT) await new Promise<void>((r) => this.#waiting.push(r));
    this.#inflight++;
    try {
      return await f();
    } finally {
      this.#inflight--;
      this.#waiting.shift()?.();
    }
  }

  /** `onError`: a socket error lvsd can only report (an event socket's overflow is recovered here, not reported). */
  constructor(private readonly onError: (e: Error) => void = () => undefined) {
    this.sock = createRtNetlink();
    // An 'error' event without a listener throws, and from inside the addon's receive callback that aborts
    // the whole process ("terminate called after throwing an instance of 'Napi::Error'").
    this.sock.socket.on('error', (e) => { this.onError(e); });
    // Requests hold a reference of their own; an idle request socket must not keep a worker alive.
    this.sock.socket.unref();
  }

  /**
   * An event socket whose receive buffer overflowed (ENOBUFS: events were lost, as 500 VIPs added at once do)
   * must not take the process down; `resync` reads the truth again. A buffer of 4 MiB makes it rare.
   */
  private eventSocket(groups: Parameters<RtNetlinkSocket['addMembership']>[0][], resync: () => Promise<void>): RtNetlinkSocket {
    const ev = createRtNetlink();
    for (const g of groups) ev.addMembership(g);
    try {
      ev.socket.setRecvBufferSize(4 << 20);
    } catch {
      /* rmem_max caps it: the default buffer, and resync when it overflows */
    }
    ev.socket.on('error', (e) => {
      resync().catch((r: unknown) => { this.onError(r instanceof Error ? r : new Error(String(r))); });
      if (e.code !== 'ENOBUFS') this.onError(e);
    });
    return ev;
  }

  async links(): Promise<LinkInfo[]> {
    return (await this.limited(() => this.sock.getLinks())).map(linkInfo);
  }

  async link(name: string): Promise<LinkInfo> {
    const l = (await this.links()).find((x) => x.name === name);
    if (l === undefined) throw new Error(`no interface named ${name}`);
    return l;
  }

  async linkDetails(): Promise<LinkDetail[]> {
    return (await this.limited(() => this.sock.getLinks())).map((m) => ({
      ...linkInfo(m),
      kind: decodeLinkInfo(m.attrs.linkinfo),
      parent: m.attrs.link !== undefined && m.attrs.link.length >= 4 ? m.attrs.link.readUInt32LE(0) : 0,
      adminUp: m.data.flags?.up === true,
    }));
  }

  /** Creates a macvlan `name` on `parent` with `mac`, down (set conf before bringing it up). */
  async addMacvlan(name: string, parent: number, mac: Buffer, mode: MacvlanMode): Promise<void> {
    try {
      await this.limited(() => this.sock.newLink(
        {},
        { ifname: name, link: u32(parent), address: mac, linkinfo: macvlanLinkInfo(mode) },
        { flags: FlagsNew.CREATE | FlagsNew.EXCL },
      ));
    } catch (e) {
      throw new Error(`creating macvlan ${name} on ifindex ${parent}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** An l2 ipvlan (it shares its parent's MAC), as keepalived's use_ipvlan makes them. */
  async addIpvlan(name: string, parent: number, flags: IpvlanFlags): Promise<void> {
    try {
      await this.limited(() => this.sock.newLink(
        {},
        { ifname: name, link: u32(parent), linkinfo: ipvlanLinkInfo(flags) },
        { flags: FlagsNew.CREATE | FlagsNew.EXCL },
      ));
    } catch (e) {
      throw new Error(`creating ipvlan ${name} on ifindex ${parent}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async setLinkUp(index: number): Promise<void> {
    await this.limited(() => this.sock.setLink({ index, flags: { up: true }, change: { up: true } }));
  }

  /** Deletes a link. Returns false when it was already gone. */
  async deleteLink(index: number): Promise<boolean> {
    try {
      await this.limited(() => this.sock.delLink({ index }));
      return true;
    } catch (e) {
      if (errnoOf(e) === 'ENODEV') return false;
      throw new Error(`deleting link ifindex ${index}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  async addresses(ifindex: number): Promise<IfAddress[]> {
    const msgs = await this.limited(() => this.sock.getAddresses());
    return msgs
      .filter((m) => m.data.index === ifindex && (m.data.family === AF_INET || m.data.family === AF_INET6))
      .flatMap((m) => {
        const a = m.attrs.local ?? m.attrs.address;
        if (a === undefined) return [];
        const out: IfAddress = { family: m.data.family === AF_INET ? 4 : 6, address: a, prefixLength: m.data.prefixlen ?? 0, scope: m.data.scope ?? 0 };
        if (m.attrs.label !== undefined) out.label = m.attrs.label;
        return [out];
      });
  }

  /** Adds a VIP with keepalived's address options (addr-request.ts). Returns false when it was already there (EEXIST), which is fine for a reconcile. */
  async addAddress(ifindex: number, cidr: string, o: AddressOptions = {}): Promise<boolean> {
    const r = addressRequest(ifindex, cidr, o);
    try {
      await this.limited(() => this.sock.newAddress(r.data, r.attrs, { flags: FlagsNew.CREATE | FlagsNew.EXCL }));
      return true;
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') return false;
      throw new Error(`adding ${cidr}${o.peer !== undefined ? ` peer ${o.peer}` : ''} to ifindex ${ifindex}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Deletes a VIP (`o.peer` as it was added: the peer's prefix is the address's). Returns false when it was not there. */
  async delAddress(ifindex: number, cidr: string, o: Pick<AddressOptions, 'peer'> = {}): Promise<boolean> {
    const { data, attrs } = addressRequest(ifindex, cidr, o);
    try {
      await this.limited(() => this.sock.delAddress({ family: data.family, prefixlen: data.prefixlen, index: ifindex }, { ...(attrs.local !== undefined ? { local: attrs.local } : {}), ...(attrs.address !== undefined ? { address: attrs.address } : {}) }));
      return true;
    } catch (e) {
      if (errnoOf(e) === 'EADDRNOTAVAIL' || errnoOf(e) === 'ENODEV') return false;
      throw new Error(`deleting ${cidr} from ifindex ${ifindex}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Adds a route (rtnetlink's own types). Returns false when it was there already (EEXIST). */
  async addRoute(data: RouteHeader, attrs: rt.RouteAttrs): Promise<boolean> {
    return this.change('adding route', () => this.sock.newRoute(asRoute(data), attrs, { flags: FlagsNew.CREATE | FlagsNew.EXCL }), 'EEXIST');
  }

  /** Deletes a route. Returns false when it was not there. */
  async delRoute(data: RouteHeader, attrs: rt.RouteAttrs): Promise<boolean> {
    return this.change('deleting route', () => this.sock.delRoute(asRoute(data), attrs), 'ESRCH', 'ENOENT');
  }

  /** Adds a policy rule. Returns false when an equal one was there already (EEXIST). */
  async addRule(data: RuleHeader, attrs: rt.RuleAttrs): Promise<boolean> {
    return this.change('adding rule', () => this.sock.newRule(asRule(data), attrs, { flags: FlagsNew.CREATE | FlagsNew.EXCL }), 'EEXIST');
  }

  async delRule(data: RuleHeader, attrs: rt.RuleAttrs): Promise<boolean> {
    return this.change('deleting rule', () => this.sock.delRule(asRule(data), attrs), 'ENOENT', 'ESRCH');
  }

  private async change(what: string, f: () => Promise<unknown>, ...benign: string[]): Promise<boolean> {
    try {
      await this.limited(f);
      return true;
    } catch (e) {
      if (benign.includes(errnoOf(e))) return false;
      throw new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Link up/down events (RTM_NEWLINK / RTM_DELLINK, read raw: the high-level event drops which one). */
  watchLinks(onLink: (link: LinkInfo, deleted: boolean) => void): void {
    if (this.events !== null) throw new Error('already watching links');
    const known = new Map<number, LinkInfo>();
    const report = (l: LinkInfo, deleted: boolean): void => {
      if (deleted) known.delete(l.index);
      else known.set(l.index, l);
      onLink(l, deleted);
    };
    // Events were lost: every link as it is now, and the ones gone since.
    const resync = async (): Promise<void> => {
      const now = await this.links();
      const present = new Set(now.map((l) => l.index));
      for (const l of [...known.values()]) if (!present.has(l.index)) report(l, true);
      for (const l of now) report(l, false);
    };
    const ev = this.eventSocket(['LINK'], resync);
    ev.socket.on('message', (msgs) => {
      for (const m of msgs) {
        if (m.type !== RTM_NEWLINK && m.type !== RTM_DELLINK) continue;
        try {
          const l = rt.parseLinkMessage(m.data);
          report(linkInfo(l), m.type === RTM_DELLINK);
        } catch {
          /* a message we cannot parse says nothing about our links */
        }
      }
    });
    this.events = ev;
  }

  /** Address added / removed events (RTM_NEWADDR / RTM_DELADDR, both families), read raw like watchLinks. */
  watchAddresses(onAddress: (ifindex: number, address: Buffer, deleted: boolean) => void): void {
    if (this.addrEvents !== null) throw new Error('already watching addresses');
    const known = new Map<string, { ifindex: number; address: Buffer }>();
    const report = (ifindex: number, address: Buffer, deleted: boolean): void => {
      const key = `${ifindex}/${address.toString('hex')}`;
      if (deleted) known.delete(key);
      else known.set(key, { ifindex, address });
      onAddress(ifindex, address, deleted);
    };
    // Events were lost: every address as it is now, and the ones seen before that are gone.
    const resync = async (): Promise<void> => {
      const now = new Map<string, { ifindex: number; address: Buffer }>();
      for (const m of await this.limited(() => this.sock.getAddresses())) {
        const a = m.attrs.local ?? m.attrs.address;
        if (a !== undefined) now.set(`${m.data.index ?? 0}/${a.toString('hex')}`, { ifindex: m.data.index ?? 0, address: a });
      }
      for (const [key, v] of [...known]) if (!now.has(key)) report(v.ifindex, v.address, true);
      for (const v of now.values()) report(v.ifindex, v.address, false);
    };
    const ev = this.eventSocket(['IPV4_IFADDR', 'IPV6_IFADDR'], resync);
    ev.socket.on('message', (msgs) => {
      for (const m of msgs) {
        if (m.type !== RTM_NEWADDR && m.type !== RTM_DELADDR) continue;
        try {
          const a = rt.parseAddressMessage(m.data);
          const address = a.attrs.local ?? a.attrs.address;
          if (address !== undefined) report(a.data.index ?? 0, address, m.type === RTM_DELADDR);
        } catch {
          /* a message we cannot parse says nothing about our addresses */
        }
      }
    });
    this.addrEvents = ev;
  }

  close(): void {
    this.events?.socket.close();
    this.events = null;
    this.addrEvents?.socket.close();
    this.addrEvents = null;
    this.sock.socket.close();
  }
}

