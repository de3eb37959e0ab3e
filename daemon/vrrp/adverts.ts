// An instance's adverts on the wire: encoded and sent to its group or peers, and a received one checked
// (validate.ts) and counted before it reaches the machine. Dropped and odd adverts are logged through the
// rate-limited log: a peer can send them at any rate.
import { formatIP } from '../net/addr.js';
import type { ReceivedPacket } from '../net/vrrp-socket.js';
import type { Inst } from './instance.js';
import type { MachineEvent } from './machine.js';
import { encodeAdvert, AUTH_PASS, type Advert } from './packet.js';
import type { LogLevel } from './protocol.js';
import { validateAdvert } from './validate.js';

export type InstLog = (level: LogLevel, inst: Inst, msg: string, fields: Record<string, unknown>) => void;
export type InstLimitedLog = (level: LogLevel, inst: Inst, msg: string, reason: string, peer: Uint8Array) => void;

export function sendAdvert(inst: Inst, priority: number, logLimited: InstLimitedLog): void {
  if (inst.socket === null || inst.src === null) return;
  const advert: Advert = { version: inst.o.version, vrid: inst.o.vrid, priority, intervalCs: inst.o.intervalCs, addresses: inst.view.vips.map((v) => Buffer.from(v)) };
  if (inst.o.authPass !== undefined) {
    advert.authType = AUTH_PASS;
    advert.password = inst.o.authPass;
  }
  for (const dst of inst.dsts) {
    try {
      // The old checksum (old_unicast_checksum) covers the multicast group, though the advert goes to the peer.
      const sumDst = inst.view.oldChecksum?.mode === 'old' ? inst.view.oldChecksum.group : dst;
      inst.socket.send(encodeAdvert(advert, { family: inst.o.family, src: inst.src, dst: sumDst }), dst, inst.src);
      inst.tx++;
    } catch (e) {
      inst.txErrors++;
      logLimited('warn', inst, `sending advert failed: ${e instanceof Error ? e.message : String(e)}`, 'send', dst);
    }
  }
}

/** The machine's event for a received advert, or null when it is dropped (counted by reason). */
export function receiveAdvert(inst: Inst, p: ReceivedPacket, log: InstLog, logLimited: InstLimitedLog): MachineEvent | null {
  const v = validateAdvert(inst.view, p);
  if (!v.ok) {
    inst.drops[v.reason] = (inst.drops[v.reason] ?? 0) + 1;
    // Other routers' VRIDs share the group; our own adverts may come back in some set-ups: count only.
    if (v.reason !== 'other-vrid' && v.reason !== 'own') logLimited('warn', inst, `dropped advert: ${v.detail}`, v.reason, p.src);
    return null;
  }
  inst.rx++;
  for (const w of v.warnings) {
    if (w === 'interval-differs') logLimited('info', inst, `advertisement interval differs: ${v.advert.intervalCs * 10} ms, ours ${inst.o.intervalCs * 10} ms (learned, RFC 5798)`, w, p.src);
    else if (w === 'old-checksum' && inst.view.oldChecksum !== undefined) {
      // keepalived 2.2.7 alike: from now on the old checksum both ways, till a restart of the instance.
      inst.view.oldChecksum = { ...inst.view.oldChecksum, mode: 'old' };
      log('info', inst, 'Setting unicast VRRPv3 checksum to old version', { peer: formatIP(p.src) });
    } else if (w === 'address-list' && v.advert.priority !== 0) logLimited('warn', inst, `advert's address list differs from ours (${v.advert.addresses.map(formatIP).join(', ')})`, w, p.src);
  }
  return { type: 'advert', from: p.src, priority: v.advert.priority, intervalCs: v.advert.intervalCs };
}
