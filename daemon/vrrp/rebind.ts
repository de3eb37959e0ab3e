// keepalived's dynamic_interfaces, always on: an instance whose interface was missing (or deleted and made
// again, under a new index) or had no address to advertise from is set up again on it once they come.
// It keeps its tracking results; its machine starts afresh (FAULT → BACKUP, as keepalived's). This file
// decides who goes again and keeps one setting-up per instance at a time; the runtime does the setting up
// (for a VMAC or ipvlan, making its link first: keepalived 2.2.7 makes it when the parent appears).
import type { LinkInfo } from '../net/rtnl.js';
import type { Inst } from './instance.js';

export interface RebindHost {
  instances(): Iterable<Inst>;
  /** The instance of that name the runtime holds now (another object once it was set up again). */
  current(name: string): Inst | undefined;
  stopping(): boolean;
  byName(ifname: string): LinkInfo | undefined;
  /** Lets the instance go (timers, socket) and sets it up anew from its options, fed `startup`. */
  setUpAgain(inst: Inst, why: string): Promise<void>;
}

export class Rebinder {
  /** Instances being set up again (with the interface they read), and those asked again meanwhile. */
  private readonly rebinding = new Map<string, string>();
  private readonly again = new Set<string>();

  constructor(private readonly host: RebindHost) {}

  /**
   * A link appeared, or an address on it: the instances on it without it (or without a source address)
   * go again. An instance on a VMAC or ipvlan goes again when its parent (or an address on the parent)
   * appears, or its own link, while it lacks its link, the link's current index or a source address.
   */
  linkAppeared(l: LinkInfo): void {
    // One being set up now read the link before this news: it goes again once done.
    for (const [name, ifname] of this.rebinding) if (ifname === l.name) this.again.add(name);
    for (const inst of this.host.instances()) {
      const v = inst.o.vmac;
      if (v !== undefined) {
        if (l.name !== v.parent && l.name !== inst.o.interface) continue;
        const own = this.host.byName(inst.o.interface);
        if (this.host.byName(v.name) !== undefined && own?.index === inst.ifindex && inst.src !== null) continue;
        void this.rebind(inst, own === undefined || own.index !== inst.ifindex ? `interface ${l.name} appeared` : `an address appeared on ${l.name}`);
        continue;
      }
      if (inst.o.interface !== l.name) continue;
      if (inst.ifindex === l.index && inst.src !== null) continue;
      void this.rebind(inst, inst.ifindex === 0 || inst.ifindex !== l.index ? `interface ${l.name} appeared` : `an address appeared on ${l.name}`);
    }
  }

  private async rebind(inst: Inst, why: string): Promise<void> {
    const name = inst.o.name;
    if (this.rebinding.has(name)) {
      this.again.add(name);
      return;
    }
    if (this.host.stopping() || this.host.current(name) !== inst) return;
    this.rebinding.set(name, inst.o.interface);
    try {
      await this.host.setUpAgain(inst, why);
    } finally {
      this.rebinding.delete(name);
    }
    const link = this.host.byName(inst.o.interface);
    if (this.again.delete(name) && link !== undefined) this.linkAppeared(link);
  }
}
