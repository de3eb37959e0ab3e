// interface_up_down_delays (a top-level block: `IF DOWN [UP]` per line, seconds) → vrrp.interfaceUpDownDelays.
// keepalived 2.2.7 reads each delay as a timer of at most 255 s and takes a missing UP as 0; a line that
// names no delay has no effect there, so none here.
import type { Directive } from './parser.js';
import { BlockReader, type Context } from './reader.js';

export type LinkDelaysOut = Record<string, { down: string; up?: string }>;

export function mapInterfaceUpDownDelays(ctx: Context, blocks: Directive[]): LinkDelaysOut | undefined {
  const out: LinkDelaysOut = {};
  for (const b of blocks) {
    const r = new BlockReader(ctx, b.block ?? [], 'interface_up_down_delays');
    for (const line of b.block ?? []) {
      r.take(line);
      const ifname = line.keyword;
      if (line.args.length === 0) {
        ctx.reportDirective(line, `no delays for ${ifname}; keepalived ignores the line too`);
        continue;
      }
      if (line.args.length > 2) ctx.reportDirective(line, `only DOWN and UP delays are read; ${line.args.slice(2).join(' ')} ignored, as keepalived does`);
      const down = r.timer(line, 0);
      const up = line.args.length > 1 ? r.timer(line, 1) : undefined;
      if (down === undefined || (line.args.length > 1 && up === undefined)) continue;
      if (Number(line.args[0]) > 255 || Number(line.args[1] ?? 0) > 255) {
        ctx.reportDirective(line, 'a delay over 255 s; keepalived refuses it too; not carried over');
        continue;
      }
      const d: { down: string; up?: string } = { down };
      if (up !== undefined) d.up = up;
      ctx.source.self(d, line.pos);
      ctx.source.at(d, 'down', line.pos);
      if (up !== undefined) ctx.source.at(d, 'up', line.pos);
      out[ifname] = d;
      ctx.source.at(out, ifname, line.pos);
    }
    r.finish();
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
