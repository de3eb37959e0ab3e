// garp_group blocks and global_defs' vrrp_garp_interval / vrrp_gna_interval → vrrp.garpGroups: keepalived's
// per-interface queue of gratuitous ARPs / unsolicited NAs (vrrp_arp.c), which lvsd's engine keeps the same
// way (daemon/vrrp/garp-queue.ts).
import type { Directive } from './parser.js';
import type { GarpGroupOut } from './lvsd-shape.js';
import { BlockReader, type Context } from './reader.js';

/** vrrp_garp_interval / vrrp_gna_interval of global_defs: the queue of every interface no garp_group lists. */
export interface GarpDefault {
  interval?: { value: string; d: Directive };
  naInterval?: { value: string; d: Directive };
}

/** The two global_defs directives (read here so map-global.ts only hands them over). */
export function readGarpDefault(r: BlockReader): GarpDefault | undefined {
  const out: GarpDefault = {};
  for (const [kw, key] of [['vrrp_garp_interval', 'interval'], ['vrrp_gna_interval', 'naInterval']] as const) {
    const d = r.last(kw);
    const v = r.timer(d);
    // keepalived: 0 sets no queue ("if (global_data->vrrp_garp_interval)").
    if (d && v !== undefined && Number(d.args[0]) > 0) out[key] = { value: v, d };
  }
  return out.interval === undefined && out.naInterval === undefined ? undefined : out;
}

/** Every garp_group block (top level) in order, then the default group of vrrp_garp_interval / vrrp_gna_interval. */
export function mapGarpGroups(ctx: Context, blocks: Directive[], dflt: GarpDefault | undefined): GarpGroupOut[] {
  const out: GarpGroupOut[] = [];
  const owner = new Map<string, Directive>();
  for (const b of blocks) {
    const r = new BlockReader(ctx, b.block ?? [], 'garp_group');
    const g: GarpGroupOut = {};
    ctx.source.self(g, b.pos);
    for (const [kw, key] of [['garp_interval', 'interval'], ['gna_interval', 'naInterval']] as const) {
      const d = r.last(kw);
      const v = r.timer(d);
      if (!d || v === undefined) continue;
      g[key] = v;
      ctx.source.at(g, key, d.pos);
    }
    const names: string[] = [];
    const add = (name: string, d: Directive): void => {
      const first = owner.get(name);
      // keepalived: "garp_group already specified for IF - ignoring" (the first group keeps it).
      if (first !== undefined) {
        ctx.reportDirective(d, `${name} is in the garp_group at ${ctx.displayPos(first.pos)} already; ignored here (keepalived ignores it too)`);
        return;
      }
      owner.set(name, d);
      ctx.source.at(names, String(names.length), d.pos);
      names.push(name);
    };
    for (const d of r.all('interface')) {
      const name = r.str(d);
      if (name !== undefined) add(name, d);
    }
    // `interfaces { … }`: one group across them, as when they lead to one switch.
    for (const d of r.all('interfaces')) for (const line of d.block ?? []) for (const name of [line.keyword, ...line.args]) add(name, line);
    r.finish();
    if (g.interval === undefined && g.naInterval === undefined) {
      ctx.reportDirective(b, 'garp_group sets neither garp_interval nor gna_interval; not carried over (keepalived removes it: "does not have any delay set")');
      continue;
    }
    if (names.length === 0) {
      ctx.reportDirective(b, 'garp_group names no interface; not carried over');
      continue;
    }
    g.interfaces = names;
    out.push(g);
  }
  if (dflt !== undefined) {
    const g: GarpGroupOut = {};
    const first = dflt.interval?.d ?? dflt.naInterval?.d;
    if (first) ctx.source.self(g, first.pos);
    if (dflt.interval) {
      g.interval = dflt.interval.value;
      ctx.source.at(g, 'interval', dflt.interval.d.pos);
    }
    if (dflt.naInterval) {
      g.naInterval = dflt.naInterval.value;
      ctx.source.at(g, 'naInterval', dflt.naInterval.d.pos);
    }
    ctx.note(g, 'every interface no garp_group lists, each with a queue of its own (keepalived vrrp_garp_interval / vrrp_gna_interval)');
    out.push(g);
  }
  return out;
}
