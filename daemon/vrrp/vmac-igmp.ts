// keepalived's IGMP/MLD handling for VMAC interfaces. A backup's macvlan joins the VRRP group like any
// interface, and its IGMP (IPv6: MLDv2) reports would leave with the virtual MAC: a snooping switch then
// learns that MAC on the backup's port and sends the master's traffic there. keepalived 2.2.7 (measured
// in a namespace, docs/vrrp.md "Virtual MAC") installs, whenever a use_vmac instance runs, a table per
// family in its own name whose output chain (filter, priority -1) duplicates each report leaving a macvlan
// out of that macvlan's parent (so it leaves with the parent's MAC) and drops the original; in ip6 it also
// drops router solicitations leaving a VMAC. With disable_local_igmp the ip table is not installed (no
// 224.0.0.0/24 report is sent then); the ip6 one still is. It deletes both tables on stop; a crash leaves
// them, and the next start replaces them. This file decides the ruleset; VmacIgmp applies it.
export interface VmacNftSettings {
  /** keepalived `nftables NAME`. */
  table: string;
  /** keepalived `nftables_priority`: the output chain's priority. */
  priority: number;
  /** keepalived `nftables_counters`: a counter on every rule. */
  counters: boolean;
}

export const DEFAULT_VMAC_NFT: VmacNftSettings = { table: 'lvsd_vrrp', priority: -1, counters: false };

export interface VmacMember {
  /** The macvlan and the interface it sits on. */
  name: string;
  parent: string;
  /** The families whose reports it sends: the instance's, and the other one if it has excluded VIPs of it (keepalived's EVIP_OTHER_FAMILY). */
  families: (4 | 6)[];
}

const q = (s: string): string => JSON.stringify(s);

/**
 * The nft script that makes the tables exactly what `members` need: each family's table is first created
 * empty and deleted (so one left by a crash, or by an older ruleset, goes without an error when absent),
 * then written whole — one nft transaction, so a report never passes an empty chain. `previous` is the
 * table name written before, removed too when the name changed. No members in a family: no table.
 */
export function vmacNftScript(members: readonly VmacMember[], s: VmacNftSettings, disableLocalIgmp: boolean, previous?: string): string {
  const lines: string[] = [];
  const counter = s.counters ? ' counter' : '';
  for (const [family, nf] of [[4, 'ip'], [6, 'ip6']] as const) {
    for (const name of new Set([s.table, previous ?? s.table])) lines.push(`table ${nf} ${name}`, `delete table ${nf} ${name}`);
    const m = members.filter((x) => x.families.includes(family));
    if (m.length === 0 || (family === 4 && disableLocalIgmp)) continue;
    lines.push(`table ${nf} ${s.table} {`);
    lines.push('  map vmac_map {', '    type iface_index : iface_index', `    elements = { ${m.map((x) => `${q(x.name)} : ${q(x.parent)}`).join(', ')} }`, '  }');
    if (family === 6) lines.push('  set vmac_set {', '    type iface_index', `    elements = { ${m.map((x) => q(x.name)).join(', ')} }`, '  }');
    lines.push('  chain out {', `    type filter hook output priority ${s.priority}; policy accept;`);
    if (family === 4) lines.push(`    ip protocol igmp meta oifkind "macvlan"${counter} dup to ip daddr device oif map @vmac_map drop`);
    else {
      lines.push(`    icmpv6 type mld2-listener-report meta oifkind "macvlan"${counter} dup to ip6 daddr device oif map @vmac_map drop`);
      lines.push(`    icmpv6 type nd-router-solicit meta oifkind "macvlan" oif @vmac_set${counter} drop`);
    }
    lines.push('  }', '}');
  }
  return lines.join('\n') + '\n';
}

/** Only the clearing half of the script: what a stop runs (keepalived deletes its tables on stop). */
export function vmacNftClear(table: string): string {
  return ['ip', 'ip6'].map((nf) => `table ${nf} ${table}\ndelete table ${nf} ${table}\n`).join('');
}

/** Applies the script for the VMACs the engine holds; skips nft when nothing changed, and when no VMAC ever ran. */
export class VmacIgmp {
  private applied: { script: string; table: string } | null = null;

  constructor(
    private readonly run: (script: string) => Promise<void>,
    private readonly warn: (msg: string) => void,
  ) {}

  /** The next sync writes the table even if its script is the same (a member's link was made anew). */
  forget(): void {
    if (this.applied !== null) this.applied = { ...this.applied, script: '' };
  }

  async sync(members: readonly VmacMember[], s: VmacNftSettings, disableLocalIgmp: boolean): Promise<void> {
    if (members.length === 0 && this.applied === null) return;
    const script = members.length === 0 ? vmacNftClear(s.table) + (this.applied !== null && this.applied.table !== s.table ? vmacNftClear(this.applied.table) : '') : vmacNftScript(members, s, disableLocalIgmp, this.applied?.table);
    if (this.applied?.script === script) return;
    try {
      await this.run(script);
      this.applied = members.length === 0 ? null : { script, table: s.table };
    } catch (e) {
      // As keepalived, VRRP runs on without the table: only the switch's view of the virtual MAC suffers.
      this.warn(`cannot install the nftables table ${s.table} that sends VMAC interfaces' IGMP/MLD reports from their parent: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
