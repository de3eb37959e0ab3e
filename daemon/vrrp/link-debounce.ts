// keepalived's interface_up_down_delays: a link going down (or up) counts for the instances only once
// it has stayed so for its delay, so a flapping port or a switch's short reconvergence does not throw
// a master into FAULT and the VIPs across the pair. Pure: the runtime feeds it the reported state and
// arms one timer per link from the steps it returns (timers as data, like machine.ts).
//
// Measured with keepalived 2.2.7 here (down 1.5 s, up 2 s, advert_int 1): a 0.7 s outage left the
// master alone; a 2.5 s one was FAULT 1.5 s after the link went down; a link back up and down again
// within its up delay cancelled the pending change, and the next up waited a whole delay again.
import type { NormalizedInstance, UpDownDelays } from './options.js';

/** What the instances see of one link, and the change waiting for its delay. */
export interface DebouncedLink {
  /** The state the instances act on. */
  up: boolean;
  /** The link was up once (keepalived's seen_up): until then, and after it is deleted, nothing waits. */
  seenUp: boolean;
  pending: { up: boolean; at: number } | null;
}

export type DebounceStep =
  /** Nothing for the instances, no timer to touch. */
  | { kind: 'none' }
  /** The instances' view changes now; disarm the link's timer if armed. */
  | { kind: 'apply'; up: boolean }
  /** Arm the link's timer for `at`. */
  | { kind: 'wait'; at: number }
  /** The link went back before its delay ran out: disarm the timer, the instances never hear of it. */
  | { kind: 'cancel' };

export function firstSeen(up: boolean): DebouncedLink {
  return { up, seenUp: up, pending: null };
}

/** A link's reported state (from a netlink event) against what the instances see. */
export function reportLink(link: DebouncedLink, reportedUp: boolean, delays: UpDownDelays | undefined, now: number): { link: DebouncedLink; step: DebounceStep } {
  if (reportedUp === link.up) {
    if (link.pending === null) return { link, step: { kind: 'none' } };
    return { link: { ...link, pending: null }, step: { kind: 'cancel' } };
  }
  // Still going the way the pending change goes: its timer keeps running from the first report.
  if (link.pending !== null) return { link, step: { kind: 'none' } };
  const delay = reportedUp ? (delays?.upMs ?? 0) : (delays?.downMs ?? 0);
  if (link.seenUp && delay > 0) {
    const at = now + delay;
    return { link: { ...link, pending: { up: reportedUp, at } }, step: { kind: 'wait', at } };
  }
  return { link: { up: reportedUp, seenUp: link.seenUp || reportedUp, pending: null }, step: { kind: 'apply', up: reportedUp } };
}

/** The link's timer fired: the pending change has lasted its delay. */
export function delayElapsed(link: DebouncedLink): { link: DebouncedLink; step: DebounceStep } {
  if (link.pending === null) return { link, step: { kind: 'none' } };
  const up = link.pending.up;
  return { link: { up, seenUp: link.seenUp || up, pending: null }, step: { kind: 'apply', up } };
}

/**
 * keepalived caps each delay below the time a backup waits for a silent master ((down_timer_adverts − 1)
 * adverts): a longer down delay would leave a dead link's master in charge after its backups took over.
 * A delay at or over the cap becomes the cap less 1/256 of an advert; with down_timer_adverts 1 both
 * delays are 0. Measured: 3 s with advert_int 1 ran as 1.996094 s. A VMAC interface takes its parent's
 * delays (keepalived too). Returns the delays by link name and the instances whose cap changed something
 * (keepalived logs each).
 */
export function capDelays(
  delays: Readonly<Record<string, UpDownDelays>>,
  instances: readonly Pick<NormalizedInstance, 'name' | 'interface' | 'intervalCs' | 'downTimerAdverts' | 'vmac'>[],
): { delays: Record<string, UpDownDelays>; capped: { instance: string; interface: string; capMs: number }[] } {
  const out: Record<string, UpDownDelays> = Object.fromEntries(Object.entries(delays).map(([k, v]) => [k, { ...v }]));
  const capped: { instance: string; interface: string; capMs: number }[] = [];
  for (const i of instances) {
    const d = out[i.interface];
    if (d === undefined || (d.downMs === 0 && d.upMs === 0)) continue;
    const advertMs = i.intervalCs * 10;
    const limit = (i.downTimerAdverts - 1) * advertMs;
    if (d.downMs < limit && d.upMs < limit) continue;
    const capMs = i.downTimerAdverts === 1 ? 0 : limit - advertMs / 256;
    if (d.downMs >= limit) d.downMs = capMs;
    if (d.upMs >= limit) d.upMs = capMs;
    capped.push({ instance: i.name, interface: i.interface, capMs });
  }
  for (const i of instances) {
    const d = out[i.interface];
    if (i.vmac !== undefined && d !== undefined) out[i.vmac.name] = { ...d };
  }
  return { delays: out, capped };
}

/** The timers the debouncer arms (injected: tests drive them by hand). */
export interface DebounceTimers {
  set(ms: number, fire: () => void): unknown;
  clear(handle: unknown): void;
}

/**
 * Every link's debounced state with its one timer. `report` returns the state the instances see now;
 * a change that waited its delay comes later through `onChange`.
 */
export class LinkDebouncer {
  private readonly links = new Map<number, { link: DebouncedLink; timer: unknown }>();

  constructor(
    private delays: Readonly<Record<string, UpDownDelays>>,
    private readonly onChange: (index: number, up: boolean) => void,
    private readonly now: () => number,
    private readonly timers: DebounceTimers,
  ) {}

  setDelays(delays: Readonly<Record<string, UpDownDelays>>): void {
    this.delays = delays;
  }

  report(index: number, name: string, reportedUp: boolean): boolean {
    const cur = this.links.get(index);
    if (cur === undefined) {
      this.links.set(index, { link: firstSeen(reportedUp), timer: null });
      return reportedUp;
    }
    const { link, step } = reportLink(cur.link, reportedUp, this.delays[name], this.now());
    cur.link = link;
    if (step.kind === 'wait') cur.timer = this.timers.set(Math.max(0, step.at - this.now()), () => { this.elapsed(index); });
    else if (step.kind !== 'none') this.disarm(cur);
    return link.up;
  }

  /** A deleted link: forgotten, with any pending change (keepalived resets seen_up on RTM_DELLINK). */
  forget(index: number): void {
    const cur = this.links.get(index);
    if (cur !== undefined) this.disarm(cur);
    this.links.delete(index);
  }

  stop(): void {
    for (const cur of this.links.values()) this.disarm(cur);
  }

  private elapsed(index: number): void {
    const cur = this.links.get(index);
    if (cur === undefined) return;
    cur.timer = null;
    const { link, step } = delayElapsed(cur.link);
    cur.link = link;
    if (step.kind === 'apply') this.onChange(index, step.up);
  }

  private disarm(cur: { timer: unknown }): void {
    if (cur.timer !== null) this.timers.clear(cur.timer);
    cur.timer = null;
  }
}
