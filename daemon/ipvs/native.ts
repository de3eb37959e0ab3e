// Loads lvsd_ipvs (daemon/ipvs/native/ipvs_dump.c and ipvs_lines.c, built by `npm ci` through binding.gyp into build/Release): the
// IPVS table read in C on a worker thread. Optional: without it (not built, or LVSD_IPVS_NATIVE=0) the client reads
// the table through the JavaScript transport, which gives the same replies (test/vm/guest/program.ts compares them).
//
// The buffer dumpTable resolves with, host byte order, every blob padded with zeros to 4 bytes:
//   u32 services, then per service: blob(its SERVICE nest's attributes), u32 destinations,
//   then per destination: blob(its DEST nest's attributes)          where blob = u32 length, the bytes, padding.
// Services come in the kernel's GET_SERVICE order, destinations in its GET_DEST order (the same as the transport's
// dumpTable). A service deleted between the dumps has none.
import { loadAddon } from '../native-addon.js';

export interface IpvsNative {
  /** The whole table (the layout above); rejects with an Error carrying `errno` when a dump fails. */
  dumpTable(familyId: number): Promise<Buffer>;
  /**
   * One line per service of a dumpTable buffer, joined by "\n": reconcile.ts's configText of the service observe.ts
   * reads from the same bytes, or an empty line where observe.ts refuses them. Throws if the layout is broken.
   */
  fingerprints(table: Buffer): string;
  /**
   * For each service of a dumpTable buffer, the index of the first of `lines` ("\n"-joined) equal to its fingerprint
   * line, -1 for none (an empty line matches nothing): the adoption's compare done natively.
   */
  match(table: Buffer, lines: string): Int32Array;
}

let cached: IpvsNative | null | undefined;

/** The addon, or null when it is not built or LVSD_IPVS_NATIVE=0. */
export function ipvsNative(): IpvsNative | null {
  if (cached === undefined) cached = loadAddon('lvsd_ipvs', 'LVSD_IPVS_NATIVE') as IpvsNative | null;
  return cached;
}
