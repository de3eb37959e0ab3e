// keepalived's disable_local_igmp: net.ipv4.igmp_link_local_mcast_reports set to 0 while the engine runs, so
// no IGMP report for 224.0.0.0/24 (the VRRP group among them) leaves a VMAC interface with its virtual MAC
// and teaches a snooping switch that MAC on a backup's port. Measured with keepalived 2.2.7 (per network
// namespace): 1 → 0 at start, back to 1 on a graceful stop, left at 0 after a crash, and a 0 set by hand
// stays 0. lvsd does the same; a file it cannot read or write is a warning and VRRP runs on.
export interface LocalIgmpIo {
  read(): string;
  write(value: string): void;
}

export const IGMP_LINK_LOCAL_REPORTS = '/proc/sys/net/ipv4/igmp_link_local_mcast_reports';

export class LocalIgmpReports {
  /** lvsd turned the reports off: they go back on when it no longer wants them off. */
  private turnedOff = false;

  constructor(
    private readonly io: LocalIgmpIo,
    private readonly warn: (msg: string) => void,
  ) {}

  /** Wanted off (true) or left as the host has them (false); idempotent, so a reload just says what it wants. */
  want(off: boolean): void {
    try {
      if (off && !this.turnedOff && this.io.read().trim() === '1') {
        this.io.write('0');
        this.turnedOff = true;
      } else if (!off && this.turnedOff) {
        this.io.write('1');
        this.turnedOff = false;
      }
    } catch (e) {
      this.warn(`disableLocalIgmp: ${IGMP_LINK_LOCAL_REPORTS}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
