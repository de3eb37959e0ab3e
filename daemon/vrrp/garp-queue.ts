// keepalived's GARP groups (garp_group, vrrp_garp_interval / vrrp_gna_interval) as pure scheduling:
// one queue per group and family that lets one gratuitous ARP (IPv4) or unsolicited NA (IPv6) out per
// interval, whatever instance sends it. Timers are data: the caller arms one OS timer for nextDue()
// and calls due() when it fires; time is the caller's monotonic clock in ms.
//
// What keepalived 2.2.7 does, read in vrrp_arp.c / vrrp_ndisc.c / vrrp_scheduler.c and measured here
// (docs/vrrp.md, test/netns/vrrp-garp-group.test.ts):
//  - An announcement goes out at once when its queue is free, and then holds the queue for the interval.
//  - Otherwise its address is marked pending: one mark per address, so a burst of garp_master_repeat 5
//    leaves at most one more for each address, and a later burst only re-marks what is still pending.
//  - When the queue is free again, the first pending address in configuration order goes out (instances
//    in the order they are written, each one's VIPs then its excluded VIPs), one per interval.
//  - An instance that leaves MASTER forgets its pending addresses.

/** One GARP group: its interfaces share one queue per family; none = each other interface alone. */
export interface GarpGroupOptions {
  /** keepalived `interface` / `interfaces { }`; absent: every interface no group lists (vrrp_garp_interval). */
  interfaces?: string[];
  /** garp_interval: gap between two gratuitous ARPs of the group (0 = not paced). */
  intervalMs: number;
  /** gna_interval: gap between two unsolicited NAs of the group (0 = not paced). */
  naIntervalMs: number;
}

/** One address to announce. `id` names it within its owner (the same id again is the same mark). */
export interface Announcement<T> {
  /** The instance that announces it. */
  owner: string;
  /** Configuration order: lower goes first when the queue frees. */
  order: number;
  /** The interface whose queue it waits in (a VMAC's parent, as keepalived's base interface). */
  ifname: string;
  family: 4 | 6;
  id: string;
  item: T;
}

export interface GarpQueue<T> {
  readonly groups: readonly GarpGroupOptions[];
  /** When each queue ("g<index>/<family>" for a listed group, "i:<ifname>/<family>" for the default one) is free again. */
  readonly freeAt: Map<string, number>;
  /** Pending announcements, in configuration order. */
  readonly pending: Announcement<T>[];
}

export function createGarpQueue<T>(groups: readonly GarpGroupOptions[]): GarpQueue<T> {
  return { groups: groups.map((g) => ({ ...g, ...(g.interfaces !== undefined ? { interfaces: [...g.interfaces] } : {}) })), freeAt: new Map(), pending: [] };
}

/** The queue of (interface, family) and its gap, or null when announcements there are not paced. */
function queueOf(q: GarpQueue<unknown>, ifname: string, family: 4 | 6): { key: string; gapMs: number } | null {
  let index = q.groups.findIndex((g) => g.interfaces?.includes(ifname) === true);
  const listed = index >= 0;
  if (!listed) index = q.groups.findIndex((g) => g.interfaces === undefined);
  const g = q.groups[index];
  if (g === undefined) return null;
  const gapMs = family === 4 ? g.intervalMs : g.naIntervalMs;
  if (gapMs <= 0) return null;
  return { key: `${listed ? `g${index}` : `i:${ifname}`}/${family}`, gapMs };
}

const same = (a: Announcement<unknown>, b: Announcement<unknown>): boolean => a.owner === b.owner && a.id === b.id;

/**
 * An announcement wants out at `now`: 'now' when the caller sends it at once (its queue is free, or it
 * is not paced), 'queued' when it waits for due() (or was waiting already: one mark per address).
 */
export function offer<T>(q: GarpQueue<T>, a: Announcement<T>, now: number): 'now' | 'queued' {
  const queue = queueOf(q, a.ifname, a.family);
  if (queue === null) return 'now';
  if (q.pending.some((p) => same(p, a))) return 'queued';
  if (now >= (q.freeAt.get(queue.key) ?? -Infinity)) {
    q.freeAt.set(queue.key, now + queue.gapMs);
    return 'now';
  }
  const at = q.pending.findIndex((p) => p.order > a.order);
  q.pending.splice(at < 0 ? q.pending.length : at, 0, a);
  return 'queued';
}

/** The pending announcements to send at `now`: the first of each queue that is free; they leave the queue. */
export function due<T>(q: GarpQueue<T>, now: number): Announcement<T>[] {
  const out: Announcement<T>[] = [];
  for (let i = 0; i < q.pending.length; ) {
    const a = q.pending[i] as Announcement<T>;
    const queue = queueOf(q, a.ifname, a.family);
    if (queue !== null && now < (q.freeAt.get(queue.key) ?? -Infinity)) {
      i++;
      continue;
    }
    if (queue !== null) q.freeAt.set(queue.key, now + queue.gapMs);
    q.pending.splice(i, 1);
    out.push(a);
  }
  return out;
}

/** When due() has something to send (possibly already past), or null when nothing is pending. */
export function nextDue(q: GarpQueue<unknown>): number | null {
  let next: number | null = null;
  for (const a of q.pending) {
    const queue = queueOf(q, a.ifname, a.family);
    const at = queue === null ? -Infinity : (q.freeAt.get(queue.key) ?? -Infinity);
    if (next === null || at < next) next = at;
  }
  return next;
}

/** The owner left MASTER (or stopped): its pending announcements are forgotten. */
export function dropOwner(q: GarpQueue<unknown>, owner: string): void {
  for (let i = q.pending.length - 1; i >= 0; i--) if (q.pending[i]?.owner === owner) q.pending.splice(i, 1);
}

/** New groups (a reload): pending announcements and the queues' times are kept. */
export function regroup<T>(q: GarpQueue<T>, groups: readonly GarpGroupOptions[]): GarpQueue<T> {
  return { ...createGarpQueue<T>(groups), freeAt: q.freeAt, pending: q.pending };
}
