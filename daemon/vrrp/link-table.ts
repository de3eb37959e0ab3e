// The links as the VRRP instances see them: the kernel's, from the first dump and then rtnetlink events,
// with each link's up/down debounced by its interface_up_down_delays (link-debounce.ts). It tells the
// runtime when a link it did not know appears (an instance waiting for it is set up on it) and when a
// link's state, as the instances see it, changes (deleted counts as down).
import type { LinkInfo } from '../net/rtnl.js';
import { capDelays, LinkDebouncer } from './link-debounce.js';
import type { NormalizedOptions } from './options.js';
import type { LogLevel } from './protocol.js';

export interface LinkTableEvents {
  /** A link not in the table before: new, or made again under a new index. */
  appeared(l: LinkInfo): void;
  /** A link's state as the instances see it changed (at once, or once its delay ran out), or it was deleted. */
  changed(name: string, up: boolean): void;
  log(level: LogLevel, msg: string, fields: Record<string, unknown>): void;
}

export class LinkTable {
  private readonly links = new Map<number, LinkInfo>();
  /** interface_up_down_delays: what `links` says of a link's state is its debounced state. */
  private readonly debounce: LinkDebouncer;

  /** `active`: false once the runtime stops (a delay running out then changes nothing). */
  constructor(private readonly events: LinkTableEvents, now: () => number, private readonly active: () => boolean) {
    this.debounce = new LinkDebouncer({}, (index, up) => { this.settled(index, up); }, now, {
      set: (ms, fire) => setTimeout(fire, ms),
      clear: (t) => { clearTimeout(t as NodeJS.Timeout); },
    });
  }

  setDelays(o: NormalizedOptions): void {
    const { delays, capped } = capDelays(o.interfaceUpDownDelays, o.instances);
    for (const c of capped) {
      this.events.log('warn', `interface ${c.interface} up/down delays not less than ${c.capMs === 0 ? 'what down_timer_adverts 1 allows' : '(down_timer_adverts - 1) adverts'}: capped to ${c.capMs} ms, as keepalived does`, { instance: c.instance, capMs: c.capMs });
    }
    this.debounce.setDelays(delays);
  }

  /** Links from a dump: the ones the table does not know yet are added (no events). */
  learn(links: readonly LinkInfo[]): void {
    for (const l of links) if (!this.links.has(l.index)) this.links.set(l.index, { ...l, up: this.debounce.report(l.index, l.name, l.up) });
  }

  byName(n: string): LinkInfo | undefined {
    return [...this.links.values()].find((l) => l.name === n);
  }

  get(index: number): LinkInfo | undefined {
    return this.links.get(index);
  }

  /** An rtnetlink link event. */
  event(l: LinkInfo, deleted: boolean): void {
    const before = this.links.get(l.index);
    if (deleted) {
      this.links.delete(l.index);
      this.debounce.forget(l.index);
    } else this.links.set(l.index, { ...l, up: this.debounce.report(l.index, l.name, l.up) });
    const up = !deleted && this.links.get(l.index)?.up === true;
    if (!deleted && before === undefined) this.events.appeared(l);
    if (before?.up === up && !deleted) return;
    this.events.changed(l.name, up);
  }

  stop(): void {
    this.debounce.stop();
  }

  /** A link's change that waited out its interface_up_down_delays. */
  private settled(index: number, up: boolean): void {
    const l = this.links.get(index);
    if (l === undefined || !this.active()) return;
    this.links.set(index, { ...l, up });
    this.events.changed(l.name, up);
  }
}
