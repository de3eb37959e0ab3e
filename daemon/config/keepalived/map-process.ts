// vrrp_track_process → vrrp.processes (keepalived.conf(5), "VRRP track processes"). `delay` sets both
// fork_delay and terminate_delay, as keepalived's; the last of them written wins, as keepalived reads in order.
import type { NamedBlock } from './ast.js';
import type { ProcessOut } from './lvsd-shape.js';
import { BlockReader, type Context } from './reader.js';

export function mapTrackProcess(ctx: Context, b: NamedBlock): ProcessOut | undefined {
  const r = new BlockReader(ctx, b.body, 'vrrp_track_process');
  const procD = r.last('process');
  const [process, ...parameters] = procD?.args ?? [];
  if (procD === undefined || process === undefined || process === '') {
    r.discard();
    ctx.report(b.pos, 'vrrp_track_process', `${b.name} has no process; not carried over`);
    return undefined;
  }
  const p: ProcessOut = { process };
  ctx.source.self(p, b.pos);
  ctx.source.at(p, 'process', procD.pos);
  if (parameters.length > 0) p.parameters = parameters;
  const pm = r.last('param_match');
  if (pm !== undefined) {
    const v = pm.args[0];
    if (v === 'initial' || v === 'partial' || v === 'exact') p.paramMatch = v;
    else ctx.reportDirective(pm, `${v ?? '(missing)'} is not initial|partial; not carried over`);
  }
  if (r.last('full_command') !== undefined) p.fullCommand = true;
  const quorum = r.int(r.last('quorum'), 0, 65535);
  if (quorum !== undefined) p.quorum = quorum;
  const quorumMax = r.int(r.last('quorum_max'), 0, 65535);
  if (quorumMax !== undefined) {
    p.quorumMax = quorumMax;
    // "quorum_max 0: failure if the matching process were running at all": OK with none running.
    if (quorumMax < (p.quorum ?? 1)) {
      p.quorum = quorumMax;
      ctx.note(p, `quorum lowered to ${quorumMax}, the quorum_max (keepalived: OK while at most ${quorumMax} run)`);
    }
  }
  const weightD = r.last('weight');
  const weight = r.int(weightD, -254, 254);
  if (weight !== undefined) p.weight = weight;
  if (weightD?.args.slice(1).includes('reverse')) p.reverse = true;
  // delay, fork_delay and terminate_delay in the order written: a later one overrides an earlier.
  for (const d of r.all('delay', 'fork_delay', 'terminate_delay')) {
    const v = r.timer(d);
    if (v === undefined) continue;
    if (d.keyword !== 'terminate_delay') p.forkDelay = v;
    if (d.keyword !== 'fork_delay') p.terminateDelay = v;
  }
  r.finish();
  return p;
}
