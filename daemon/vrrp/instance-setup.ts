// Setting one instance up on its interface as it is now: its addresses read, the record built (instance.ts),
// what an earlier crash left swept (vip-apply.ts), the GARP path warmed and its VRRP socket opened. A
// missing interface leaves it without a socket (FAULT) until the link appears (rebind.ts); for a VMAC or
// ipvlan, the link is made first when its parent is there (RuntimeIo.remakeVmac).
import { familyOf, parseIP } from '../net/addr.js';
import type { ReceivedPacket } from '../net/vrrp-socket.js';
import { held, newInst, type Inst } from './instance.js';
import type { NormalizedInstance } from './options.js';
import type { LogLevel } from './protocol.js';
import type { RuntimeIo } from './runtime-io.js';
import { removeStale } from './vip-apply.js';

export interface SetUpHost {
  /** The index of a link by name (0: none). */
  indexOf(ifname: string): number;
  /** Called as soon as the record exists, before any I/O: the runtime holds it from then on. */
  register(inst: Inst): void;
  receive(inst: Inst, p: ReceivedPacket): void;
  log(level: LogLevel, inst: Inst, msg: string, fields: Record<string, unknown>): void;
}

/** Sets one instance up (addresses, socket) in INIT; the caller gives it its tracking and feeds it `startup`. */
export async function setUpInstance(io: RuntimeIo, o: NormalizedInstance, host: SetUpHost): Promise<Inst> {
  const ifindex = host.indexOf(o.interface);
  const addrs = ifindex > 0 ? await io.addresses(ifindex) : [];
  const inst = newInst(o, ifindex, addrs);
  host.register(inst);
  const log = (level: LogLevel, msg: string, fields: Record<string, unknown>): void => { host.log(level, inst, msg, fields); };
  if (ifindex > 0) await removeStale(io, o, ifindex, (n) => host.indexOf(n), log);
  for (const v of held(o)) {
    try {
      io.prepareAnnounce?.(v.dev, familyOf(v.address) ?? o.family);
    } catch (e) {
      log('warn', `cannot prepare gratuitous ARP/NA on ${v.dev}`, { err: e instanceof Error ? e.message : String(e) });
    }
  }
  if (ifindex > 0) {
    inst.socket = io.openSocket(
      {
        family: o.family,
        ifname: o.interface,
        ifindex,
        vrid: o.vrid,
        multicast: o.unicastPeers.length === 0,
        group: parseIP(o.multicastGroup),
        ...(o.unicastTtl !== undefined ? { unicastTtl: o.unicastTtl } : {}),
      },
      (p) => {
        host.receive(inst, p);
      },
      (e) => {
        log('error', 'VRRP socket error', { err: e.message });
      },
    );
  }
  return inst;
}

/**
 * A VMAC / ipvlan instance's link made (again) if its parent is there; the options it then runs with
 * (`o` itself when it has none, the host cannot make it, or it cannot be made yet). `learn`: the link
 * just made may not have come as an event yet.
 */
export async function remakeVmac(io: RuntimeIo, o: NormalizedInstance, learn: () => Promise<void>, log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void): Promise<NormalizedInstance> {
  if (o.vmac === undefined || io.remakeVmac === undefined) return o;
  try {
    const made = await io.remakeVmac(o.name);
    if (made === null) return o;
    await learn();
    return made;
  } catch (e) {
    log('error', `cannot make the virtual MAC interface of ${o.name}: ${e instanceof Error ? e.message : String(e)}`, { instance: o.name });
    return o;
  }
}
