// One VRRP instance as the runtime holds it: its options, its pure machine, what it reads of its
// interface (index, source address, the validation view) and its counters. Built here from the options
// and the interface's addresses, without I/O; the runtime gives it its socket and timers.
import { createMachine, type Machine } from './machine.js';
import type { InstanceView } from './validate.js';
import { applyTracking, type TrackedState } from './tracking.js';
import type { NormalizedInstance, NormalizedVip } from './options.js';
import type { InstanceSnapshot, TransitionEvent } from './protocol.js';
import { formatIP, parseIP } from '../net/addr.js';
import type { IfAddress, LinkInfo } from '../net/rtnl.js';
import type { AddressOptions } from '../net/addr-request.js';
import type { VrrpTransport } from '../net/vrrp-socket.js';

export interface Inst {
  o: NormalizedInstance;
  m: Machine;
  ifindex: number;
  src: Buffer | null;
  /** track_src_ip: the configured source address is not on the interface. */
  srcMissing: boolean;
  dsts: Buffer[];
  view: InstanceView;
  socket: VrrpTransport | null;
  timer: NodeJS.Timeout | null;
  vipChain: Promise<void>;
  vipsHeld: boolean;
  garpTimers: NodeJS.Timeout[];
  rx: number;
  tx: number;
  txErrors: number;
  drops: Record<string, number>;
  tracked: Map<string, TrackedState>;
  offset: number;
  forcedFault: boolean;
  faultReasons: string[];
  last: TransitionEvent | null;
  timerLateMs: number;
  lowerPriorityAdverts: number;
  /** garp_extra_if: the next periodic announcement on the other interfaces is due after this (null: not master). */
  extraIfAt: number | null;
}

/** Every address the instance holds while MASTER: the advertised VIPs, then the excluded ones. */
export function held(o: NormalizedInstance): NormalizedVip[] {
  return o.excludedVips.length === 0 ? o.vips : [...o.vips, ...o.excludedVips];
}

/** A VIP's address options for the kernel (everything of it but where it goes). */
export function addressOptions(v: NormalizedVip): AddressOptions {
  const { address: _a, prefixLength: _p, cidr: _c, dev: _d, ...o } = v;
  return o;
}
export const peerOf = (v: NormalizedVip): Pick<AddressOptions, 'peer'> => (v.peer === undefined ? {} : { peer: v.peer });

/** The instance in INIT on interface `ifindex` (0: missing) with these addresses on it; no socket yet. */
export function newInst(o: NormalizedInstance, ifindex: number, addrs: readonly IfAddress[]): Inst {
  const vipBytes = o.vips.map((v) => parseIP(v.address));
  // Excluded VIPs are ours like the VIPs (never a source, never "own"), only not in the adverts.
  const heldBytes = held(o).map((v) => parseIP(v.address));
  const isVip = (a: Buffer): boolean => heldBytes.some((v) => v.equals(a));
  let src: Buffer | null = null;
  if (o.unicastSrcIp !== undefined) src = parseIP(o.unicastSrcIp);
  else if (o.family === 4) src = addrs.find((a) => a.family === 4 && !isVip(a.address))?.address ?? null;
  else src = addrs.find((a) => a.family === 6 && a.address[0] === 0xfe && ((a.address[1] ?? 0) & 0xc0) === 0x80)?.address ?? null;
  const peers = o.unicastPeers.map(parseIP);
  const view: InstanceView = {
    family: o.family,
    version: o.version,
    vrid: o.vrid,
    intervalCs: o.intervalCs,
    ownAddresses: addrs.filter((a) => a.family === o.family && !isVip(a.address)).map((a) => a.address),
    unicastPeers: peers,
    vips: vipBytes,
  };
  if (o.authPass !== undefined) view.authPass = o.authPass;
  if (o.version === 3 && o.family === 4 && peers.length > 0 && o.oldUnicastChecksum !== 'never') {
    view.oldChecksum = { group: parseIP(o.multicastGroup), mode: o.oldUnicastChecksum === 'always' ? 'old' : 'either' };
  }
  if (src !== null && !view.ownAddresses.some((a) => Buffer.compare(a, src) === 0)) view.ownAddresses.push(src);
  return {
    o,
    m: createMachine(
      {
        version: o.version,
        intervalCs: o.intervalCs,
        preempt: o.preempt,
        preemptDelayMs: o.preemptDelayMs,
        primaryAddress: src ?? Buffer.alloc(o.family === 4 ? 4 : 16),
        lowerPrioNoAdvert: o.lowerPrioNoAdvert,
        higherPrioSendAdvert: o.higherPrioSendAdvert,
        downTimerAdverts: o.downTimerAdverts,
      },
      o.priority,
    ),
    ifindex,
    src,
    // keepalived track_src_ip: a configured source the interface does not have is a FAULT.
    srcMissing: o.trackSrcIp && src !== null && !addrs.some((a) => a.address.equals(src)),
    dsts: peers.length > 0 ? peers : [parseIP(o.multicastGroup)],
    view,
    socket: null,
    timer: null,
    vipChain: Promise.resolve(),
    vipsHeld: false,
    garpTimers: [],
    rx: 0,
    tx: 0,
    txErrors: 0,
    drops: {},
    tracked: new Map(),
    offset: 0,
    forcedFault: false,
    faultReasons: [],
    last: null,
    timerLateMs: 0,
    lowerPriorityAdverts: 0,
    extraIfAt: null,
  };
}

/** What the control plane sees of one instance. */
export function instanceSnapshot(i: Inst): InstanceSnapshot {
  const s: InstanceSnapshot = {
    name: i.o.name,
    interface: i.o.interface,
    vrid: i.o.vrid,
    version: i.o.version,
    family: i.o.family,
    state: i.m.state,
    basePriority: i.o.priority,
    priority: i.m.priority,
    faultReasons: i.m.state === 'FAULT' ? i.faultReasons : [],
    advertIntervalMs: i.o.intervalCs * 10,
    masterAdvertIntervalMs: i.m.masterAdverIntervalCs * 10,
    sourceAddress: i.src === null ? null : formatIP(i.src),
    masterAddress: i.m.state === 'MASTER' ? (i.src === null ? null : formatIP(i.src)) : i.m.master === null ? null : formatIP(i.m.master.address),
    masterPriority: i.m.state === 'MASTER' ? i.m.priority : (i.m.master?.priority ?? null),
    vips: i.o.vips.map((v) => v.cidr),
    excludedVips: i.o.excludedVips.map((v) => v.cidr),
    vipsHeld: i.vipsHeld,
    counters: { advertsSent: i.tx, advertsReceived: i.rx, sendErrors: i.txErrors, drops: { ...i.drops }, maxTimerLateMs: Math.round(i.timerLateMs * 100) / 100, lowerPriorityAdverts: i.lowerPriorityAdverts },
    lastTransition: i.last,
  };
  if (i.o.group !== undefined) s.group = i.o.group;
  return s;
}

/**
 * The instance's priority and fault reasons from its tracking, the operator's overrides and its own
 * interface (`link`: as the runtime sees it now; undefined: missing).
 */
export function effectiveState(inst: Inst, link: LinkInfo | undefined): { priority: number; reasons: string[] } {
  const r = applyTracking(inst.o.priority, [...inst.tracked.values()]);
  const reasons = [...r.reasons];
  // Like keepalived, an instance without its interface, without a source address, or whose own
  // interface is down is in FAULT.
  if (inst.ifindex === 0 || link === undefined) reasons.push(`interface ${inst.o.interface} missing`);
  else if (inst.srcMissing) reasons.push(`source address ${inst.o.unicastSrcIp ?? ''} not on ${inst.o.interface} (track_src_ip)`);
  else if (inst.src === null) reasons.push(`no IPv${inst.o.family} ${inst.o.family === 6 ? 'link-local ' : ''}address on ${inst.o.interface}`);
  // dont_track_primary: keepalived leaves the own interface out of the tracked ones.
  else if (!link.up && !inst.o.dontTrackPrimary) reasons.push(`interface ${inst.o.interface} down`);
  if (inst.forcedFault) reasons.push('forced by operator');
  const priority = inst.o.priority === 255 ? 255 : Math.max(1, Math.min(254, r.priority + inst.offset));
  return { priority, reasons };
}
