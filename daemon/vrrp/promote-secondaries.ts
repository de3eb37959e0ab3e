// keepalived promote_secondaries (an instance option): net.ipv4.conf.<interface>.promote_secondaries = 1
// while an instance that asks for it runs, so that removing a VIP which is the primary address of its
// subnet promotes the next address instead of flushing every secondary of that subnet with it.
// keepalived 2.2.7, measured (docs/vrrp.md, "promote_secondaries"): set at start, put back to 0 at stop;
// an interface where it was 1 already is left at 1. A VMAC/ipvlan instance has none (its link has it).
import type { NormalizedOptions } from './options.js';

export interface PromoteIo {
  read(ifname: string): number;
  write(ifname: string, value: number): void;
}

/** The interfaces that want promote_secondaries under `o` (none when null: stopping). */
export function promoteInterfaces(o: NormalizedOptions | null): Set<string> {
  return new Set((o?.instances ?? []).filter((i) => i.promoteSecondaries && i.vmac === undefined).map((i) => i.interface));
}

export class PromoteSecondaries {
  /** The interfaces where this engine turned it on, to turn it off again when no instance wants it. */
  private readonly ours = new Set<string>();

  constructor(
    private readonly io: PromoteIo,
    private readonly warn: (msg: string) => void,
  ) {}

  /** Makes the interfaces match `o` (the options now running; null on stop). */
  sync(o: NormalizedOptions | null): void {
    const want = promoteInterfaces(o);
    for (const ifname of want) {
      if (this.ours.has(ifname)) continue;
      try {
        if (this.io.read(ifname) === 1) continue; // was on already: not ours to turn off later
        this.io.write(ifname, 1);
        this.ours.add(ifname);
      } catch (e) {
        this.warn(`cannot set promote_secondaries on ${ifname}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    for (const ifname of this.ours) {
      if (want.has(ifname)) continue;
      this.ours.delete(ifname);
      try {
        this.io.write(ifname, 0);
      } catch (e) {
        // The interface went away with its setting: nothing to put back.
        this.warn(`cannot put promote_secondaries back to 0 on ${ifname}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
