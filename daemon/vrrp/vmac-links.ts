// The VRRP engine's virtual MAC interfaces (keepalived use_vmac) over rtnetlink: created (or adopted,
// after a restart or a crash) before the instances that run on them start, and removed when their
// instance goes, on reload or stop, with the nftables table that sends their IGMP/MLD reports from the
// parent (vmac-igmp.ts). The decisions are vmac.ts's and vmac-igmp.ts's; this file only carries them out.
import { formatIP } from '../net/addr.js';
import { Rtnl, type IfAddress, type LinkDetail } from '../net/rtnl.js';
import type { AddressOptions } from '../net/addr-request.js';
import { readIpv4Conf, writeIpv4Conf, writeIpv6Conf } from '../net/sysctl.js';
import type { IpvlanFlags, MacvlanMode } from '../net/link-codec.js';
import { runNftScript } from '../net/nft-file.js';
import { VmacIgmp } from './vmac-igmp.js';
import { onVmac, PARENT_CONF, planVmac, VMAC_CONF, VMAC_MODE, vmacMembers, vmacSpecs, type VmacSpec } from './vmac.js';
import type { NormalizedInstance, NormalizedOptions } from './options.js';
import type { LogLevel } from './protocol.js';

export interface VmacIo {
  linkDetails(): Promise<LinkDetail[]>;
  addMacvlan(name: string, parent: number, mac: Buffer, mode: MacvlanMode): Promise<void>;
  addIpvlan(name: string, parent: number, flags: IpvlanFlags): Promise<void>;
  setLinkUp(index: number): Promise<void>;
  deleteLink(index: number): Promise<boolean>;
  addresses(ifindex: number): Promise<IfAddress[]>;
  addAddress(ifindex: number, cidr: string, o?: AddressOptions): Promise<boolean>;
  readConf(ifname: string, key: string): number;
  writeConf(ifname: string, key: string, value: number): void;
  writeConf6(ifname: string, key: string, value: number): void;
  /** One nft transaction (`nft -f -`). */
  nftScript(script: string): Promise<void>;
  close(): void;
}

export function hostVmacIo(): VmacIo {
  const rtnl = new Rtnl();
  return {
    linkDetails: () => rtnl.linkDetails(),
    addMacvlan: (n, p, m, mode) => rtnl.addMacvlan(n, p, m, mode),
    addIpvlan: (n, p, f) => rtnl.addIpvlan(n, p, f),
    setLinkUp: (i) => rtnl.setLinkUp(i),
    deleteLink: (i) => rtnl.deleteLink(i),
    addresses: (i) => rtnl.addresses(i),
    addAddress: (i, c, o) => rtnl.addAddress(i, c, o),
    readConf: readIpv4Conf,
    writeConf: writeIpv4Conf,
    writeConf6: writeIpv6Conf,
    nftScript: (script) => runNftScript(script),
    close: () => {
      rtnl.close();
    },
  };
}

const isLinkLocal = (a: IfAddress): boolean => a.family === 6 && a.address[0] === 0xfe && ((a.address[1] ?? 0) & 0xc0) === 0x80;

export class VmacLinks {
  /** The macvlans this engine holds (created or adopted), by name. */
  private readonly ours = new Map<string, VmacSpec>();
  /** conf/all/rp_filter before the first VMAC, put back when the last one goes. */
  private savedAllRpFilter: number | undefined;
  private readonly igmp: VmacIgmp;
  /** The settings of the table, from the options last prepared (a stop clears the table they named). */
  private nft: NormalizedOptions['nftables'] | undefined;
  /** The options last prepared, as configured (before onVmac): what remake() sets an instance up from. */
  private options: NormalizedOptions | undefined;

  constructor(
    private readonly io: VmacIo,
    private readonly log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void,
  ) {
    this.igmp = new VmacIgmp((script) => io.nftScript(script), (msg) => { log('warn', msg, {}); });
  }

  /** Makes sure every VMAC of `o` is there and up; returns the options as the runtime runs them. */
  async prepare(o: NormalizedOptions): Promise<NormalizedOptions> {
    this.options = o;
    const sources = await this.setUp(vmacSpecs(o));
    return { ...o, instances: o.instances.map((i) => onVmac(i, sources.get(i.name) ?? null)) };
  }

  /**
   * dynamic_interfaces for a VMAC or ipvlan (keepalived 2.2.7 alike, docs/vrrp.md): the instance's link
   * made (or adopted) again from the options last prepared, once its parent is there; the instance as the
   * runtime then runs it, or null when it has no such link or it cannot be made (still no parent).
   */
  async remake(instance: string): Promise<NormalizedInstance | null> {
    const o = this.options;
    const i = o?.instances.find((x) => x.name === instance);
    const specs = o === undefined ? [] : vmacSpecs(o).filter((s) => s.instance === instance);
    if (i === undefined || specs.length === 0) return null;
    // A link made anew has a new index: the IGMP/MLD table, which holds indexes, is written again.
    this.igmp.forget();
    const sources = await this.setUp(specs);
    return sources.has(instance) ? onVmac(i, sources.get(instance) ?? null) : null;
  }

  /** The links of `specs` made or adopted and up; the adverts' source of each instance set up (by instance). */
  private async setUp(specs: readonly VmacSpec[]): Promise<Map<string, string | null>> {
    const sources = new Map<string, string | null>();
    const ready: [VmacSpec, LinkDetail, LinkDetail][] = [];
    for (const s of specs) {
      const pair = await this.ensure(s);
      if (pair !== null) ready.push([s, ...pair]);
    }
    const o = this.options;
    if (o === undefined) return sources;
    // The IGMP/MLD table before any link comes up or gets its link-local: the first reports (measured: the
    // link-local's solicited-node group) would otherwise leave with the virtual MAC.
    this.nft = o.nftables;
    await this.igmp.sync(vmacMembers(o).filter((m) => this.ours.has(m.name)), o.nftables, o.disableLocalIgmp);
    for (const [s, vmac, parent] of ready) sources.set(s.instance, await this.bringUp(s, vmac, parent));
    return sources;
  }

  /** One VMAC created or adopted (null: refused): the link and its parent. */
  private async ensure(s: VmacSpec): Promise<[LinkDetail, LinkDetail] | null> {
    const fields = { instance: s.instance, vmac: s.name, parent: s.parent, mac: s.mac };
    let links = await this.io.linkDetails();
    const plan = planVmac(s, links);
    if (plan.action === 'conflict') {
      // The instance then sits in FAULT ("interface … missing" or down) rather than take over a stranger's link.
      this.log('error', `cannot use virtual MAC interface ${s.name}: ${plan.reason}`, fields);
      return null;
    }
    if (plan.action === 'create' && s.ipvlan !== undefined) {
      await this.io.addIpvlan(s.name, plan.parentIndex, s.ipvlan.type);
      this.log('info', `created ipvlan interface ${s.name}`, fields);
      links = await this.io.linkDetails();
    } else if (plan.action === 'create') {
      await this.io.addMacvlan(s.name, plan.parentIndex, Buffer.from(s.mac.split(':').map((h) => parseInt(h, 16))), VMAC_MODE);
      // Before it comes up: no kernel-made link-local (addr_gen_mode none), as keepalived's VMACs.
      try {
        this.io.writeConf6(s.name, 'addr_gen_mode', 1);
      } catch (e) {
        this.log('warn', `cannot turn off IPv6 address generation on ${s.name}: ${e instanceof Error ? e.message : String(e)}`, fields);
      }
      this.log('info', `created virtual MAC interface ${s.name}`, fields);
      links = await this.io.linkDetails();
    } else if (!this.ours.has(s.name)) this.log('info', `adopted virtual MAC interface ${s.name} left by an earlier run`, fields);
    const vmac = links.find((l) => l.name === s.name);
    const parent = links.find((l) => l.name === s.parent);
    if (vmac === undefined || parent === undefined) throw new Error(`virtual MAC interface ${s.name} vanished while being set up`);
    this.ours.set(s.name, s);
    this.tune(s);
    return [vmac, parent];
  }

  /** Up, with the parent's link-local (IPv6); returns the parent's IPv4 address for the adverts' source (null if none or IPv6). */
  private async bringUp(s: VmacSpec, vmac: LinkDetail, parent: LinkDetail): Promise<string | null> {
    const fields = { instance: s.instance, vmac: s.name, parent: s.parent, mac: s.mac };
    if (s.ipvlan !== undefined) return this.bringUpIpvlan(s, vmac, s.ipvlan.address);
    // keepalived 2.2.7 leaves an adopted link that is down as it is (the instance goes to FAULT);
    // lvsd brings it up: the only way it is down is a crash of ours between create and up.
    if (!vmac.adminUp) await this.io.setLinkUp(vmac.index);
    const parentAddrs = await this.io.addresses(parent.index);
    if (s.family === 6) {
      // As keepalived: the parent's link-local goes on the VMAC too, the adverts' source there.
      const ll = parentAddrs.find(isLinkLocal);
      if (ll !== undefined) await this.io.addAddress(vmac.index, `${formatIP(ll.address)}/64`);
      else this.log('warn', `${s.parent} has no IPv6 link-local address to give ${s.name}`, fields);
      return null;
    }
    const v4 = parentAddrs.find((a) => a.family === 4);
    return v4 === undefined ? null : formatIP(v4.address);
  }

  /**
   * keepalived 2.2.7's ipvlan, measured in the guest: created up, IPv6 off on it for an IPv4 instance (no
   * excluded IPv6 address), its address added; no ARP or reverse-path settings changed. An IPv6 instance
   * keeps IPv6 and the kernel's own link-local (addrgenmode eui64; the kernel gives each ipvlan a dev_id,
   * so it is not the parent's), which is the adverts' source when no address is configured; a configured
   * one goes on nodad and deprecated (preferred_lft 0, so the kernel picks it as no other traffic's source).
   */
  private async bringUpIpvlan(s: VmacSpec, link: LinkDetail, address: string | undefined): Promise<null> {
    if (!link.adminUp) await this.io.setLinkUp(link.index);
    if (address !== undefined) await this.io.addAddress(link.index, address, s.family === 6 ? { preferredLft: 0 } : {});
    // After it is up, as keepalived does it (its log: the kernel's link-local "Deassigned" right after).
    if (s.family === 4 && !s.otherFamily) {
      try {
        this.io.writeConf6(s.name, 'disable_ipv6', 1);
      } catch (e) {
        this.log('warn', `cannot turn IPv6 off on ${s.name}: ${e instanceof Error ? e.message : String(e)}`, { instance: s.instance });
      }
    }
    return null;
  }

  private tune(s: VmacSpec): void {
    if (s.family !== 4 || s.ipvlan !== undefined) return;
    try {
      if (this.savedAllRpFilter === undefined) {
        const all = this.io.readConf('all', 'rp_filter');
        // The effective rp_filter of a device is the larger of its own and all's: a VMAC needs both 0.
        if (all !== 0) {
          this.savedAllRpFilter = all;
          this.io.writeConf('all', 'rp_filter', 0);
        }
      }
      for (const [k, v] of Object.entries(VMAC_CONF)) this.io.writeConf(s.name, k, v);
      for (const [k, v] of Object.entries(PARENT_CONF)) this.io.writeConf(s.parent, k, v);
    } catch (e) {
      this.log('warn', `cannot set the ARP and reverse-path settings for ${s.name}: ${e instanceof Error ? e.message : String(e)}`, { instance: s.instance });
    }
  }

  /** Removes our VMACs that `wanted` (the options now running) no longer has; all of them when null. */
  async release(wanted: NormalizedOptions | null): Promise<void> {
    const keep = new Set(wanted === null ? [] : vmacSpecs(wanted).map((s) => s.name));
    const links = await this.io.linkDetails();
    for (const [name, s] of this.ours) {
      if (keep.has(name)) continue;
      this.ours.delete(name);
      const l = links.find((x) => x.name === name);
      if (l !== undefined && (await this.io.deleteLink(l.index))) this.log('info', `removed virtual MAC interface ${name}`, { instance: s.instance, vmac: name });
    }
    if (wanted === null && this.nft !== undefined) await this.igmp.sync([], this.nft, false);
    if (this.ours.size === 0 && this.savedAllRpFilter !== undefined) {
      try {
        this.io.writeConf('all', 'rp_filter', this.savedAllRpFilter);
      } catch (e) {
        this.log('warn', `cannot restore conf/all/rp_filter: ${e instanceof Error ? e.message : String(e)}`, {});
      }
      this.savedAllRpFilter = undefined;
    }
  }

  close(): void {
    this.io.close();
  }
}
