// The GARP queue (garp-queue.ts) on a real clock: one OS timer for its next due time; an announcement
// is a thunk the runtime gives, run now or when its queue frees.
import { createGarpQueue, dropOwner, due, nextDue, offer, regroup, type Announcement, type GarpGroupOptions, type GarpQueue } from './garp-queue.js';

export class GarpQueueTimer {
  private q: GarpQueue<() => void>;
  private timer: NodeJS.Timeout | null = null;

  constructor(groups: readonly GarpGroupOptions[], private readonly now: () => number) {
    this.q = createGarpQueue(groups);
  }

  announce(a: Announcement<() => void>): void {
    if (offer(this.q, a, this.now()) === 'now') a.item();
    else this.arm();
  }

  drop(owner: string): void {
    dropOwner(this.q, owner);
    this.arm();
  }

  regroup(groups: readonly GarpGroupOptions[]): void {
    this.q = regroup(this.q, groups);
    this.arm();
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.q.pending.length = 0;
  }

  private arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const at = nextDue(this.q);
    if (at === null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      for (const a of due(this.q, this.now())) a.item();
      this.arm();
    }, Math.max(0, at - this.now()));
  }
}
