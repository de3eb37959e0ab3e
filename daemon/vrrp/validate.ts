// Receive-side checks of RFC 5798 §7.1 / RFC 3768 §7.1 and keepalived, on one received packet for one
// instance. Pure: the runtime counts and logs what this returns.
import { decodeAdvert, type Advert, type DecodeReason } from './packet.js';
import type { Family } from '../net/addr.js';

export type DropReason =
  | DecodeReason
  | 'ttl'
  | 'other-vrid'
  | 'version-mismatch'
  | 'auth-mismatch'
  | 'interval-mismatch'
  | 'own'
  | 'unknown-peer';

export interface InstanceView {
  family: Family;
  version: 2 | 3;
  vrid: number;
  intervalCs: number;
  authPass?: string;
  /** Our own addresses on the interface (adverts from them are ours, looped back). */
  ownAddresses: Uint8Array[];
  /** Unicast peers as bytes; empty = multicast (any source). */
  unicastPeers: Uint8Array[];
  /** Our VIPs as bytes, to compare with the advert's list. */
  vips: Uint8Array[];
  /**
   * keepalived's old_unicast_checksum (IPv4 VRRPv3 unicast only): keepalived ≤ 1.3.6 put the multicast `group` in
   * the checksum's pseudo-header instead of the peer's address. 'old': that is the checksum sent and expected;
   * 'either': the RFC's until an advert verifies only the old way (keepalived 2.2.7's default, which then switches).
   */
  oldChecksum?: { group: Uint8Array; mode: 'old' | 'either' };
}

export interface Received {
  src: Uint8Array;
  dst: Uint8Array;
  ttl: number;
  payload: Uint8Array;
}

export type Verdict =
  | { ok: true; advert: Advert; /** accepted, but worth a log line; 'old-checksum': it verified only the old way */ warnings: ('interval-differs' | 'address-list' | 'old-checksum')[] }
  | { ok: false; reason: DropReason; detail: string };

const eq = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

export function validateAdvert(inst: InstanceView, r: Received): Verdict {
  if (inst.ownAddresses.some((a) => eq(a, r.src))) return { ok: false, reason: 'own', detail: 'advert from one of our addresses' };
  // RFC 5798 §7.1 asks for TTL 255 to prove the sender is on the link; unicast adverts may be routed, and
  // keepalived neither checks it on them nor sends IPv6 unicast with hop limit 255 (it sends 64): multicast only.
  if (inst.unicastPeers.length === 0 && r.ttl !== 255) return { ok: false, reason: 'ttl', detail: `invalid TTL/hop limit ${r.ttl}, expect 255` };
  const old = inst.oldChecksum;
  let d = decodeAdvert(r.payload, { family: inst.family, src: r.src, dst: old?.mode === 'old' ? old.group : r.dst });
  let oldWay = false;
  if (!d.ok && d.error.reason === 'checksum' && old?.mode === 'either') {
    const retry = decodeAdvert(r.payload, { family: inst.family, src: r.src, dst: old.group });
    if (retry.ok) [d, oldWay] = [retry, true];
  }
  if (!d.ok) return { ok: false, reason: d.error.reason, detail: d.error.message };
  const a = d.advert;
  if (a.vrid !== inst.vrid) return { ok: false, reason: 'other-vrid', detail: `VRID ${a.vrid}` };
  if (a.version !== inst.version) return { ok: false, reason: 'version-mismatch', detail: `wrong version: received ${a.version}, expect ${inst.version}` };
  if (inst.unicastPeers.length > 0 && !inst.unicastPeers.some((p) => eq(p, r.src))) {
    return { ok: false, reason: 'unknown-peer', detail: 'source is not a configured unicast peer' };
  }
  if (a.version === 2) {
    const want = inst.authPass === undefined ? 0 : 1;
    if ((a.authType ?? 0) !== want) return { ok: false, reason: 'auth-mismatch', detail: `auth type ${a.authType ?? 0}, expect ${want}` };
    if (want === 1 && a.password !== inst.authPass) return { ok: false, reason: 'auth-mismatch', detail: 'wrong password' };
    // RFC 3768 §7.1: the interval must match ours, else drop.
    if (a.intervalCs !== inst.intervalCs) {
      return { ok: false, reason: 'interval-mismatch', detail: `advertisement interval mismatch: received ${a.intervalCs / 100} s, ours ${inst.intervalCs / 100} s` };
    }
  }
  const warnings: ('interval-differs' | 'address-list' | 'old-checksum')[] = oldWay ? ['old-checksum'] : [];
  // v3 learns the master's interval instead (§6.4.2); say so once in the log.
  if (a.version === 3 && a.intervalCs !== inst.intervalCs) warnings.push('interval-differs');
  const sameList = a.addresses.length === inst.vips.length && a.addresses.every((x) => inst.vips.some((v) => eq(v, x)));
  // §7.1: "MAY verify … SHOULD log": a priority-0 advert or an owner may differ; we log, not drop.
  if (!sameList) warnings.push('address-list');
  return { ok: true, advert: a, warnings };
}
