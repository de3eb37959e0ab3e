// The human view of `lvsd status`: the director's snapshot as an operator scans it, in the spirit of
// `ipvsadm -Ln` — one line per VRRP instance, per virtual service and per real server.
import type { DirectorSnapshot, RealServerSnapshot, VirtualServerSnapshot } from '../director/snapshot.js';

function serviceAddress(v: VirtualServerSnapshot): string {
  if (v.fwmark !== null) return `fwmark ${v.fwmark}`;
  const host = v.address?.includes(':') === true ? `[${v.address}]` : (v.address ?? '-');
  return `${v.protocol} ${host}:${v.port ?? '-'}`;
}

function overrideText(o: RealServerSnapshot['override']): string {
  if (o === null) return '';
  const parts = [o.maintenance === true ? 'maintenance' : '', o.drain === true ? 'drained' : '', o.weight !== undefined ? `weight=${o.weight}` : ''].filter(Boolean);
  return parts.length > 0 ? `  [override: ${parts.join(', ')}]` : '';
}

function realServerLine(r: RealServerSnapshot): string {
  const eff = r.weight.effective === null ? 'out' : String(r.weight.effective);
  const last = r.health.lastCheck === null ? '' : `  ${r.health.checker}: ${r.health.lastCheck.result} (${Math.round(r.health.lastCheck.latencyMs)} ms)`;
  return `    ${r.id.padEnd(22)} ${r.health.status.toUpperCase().padEnd(7)} weight ${eff}/${r.weight.configured}  conns ${r.connections.active}/${r.connections.inactive}${last}${overrideText(r.override)}`;
}

export function renderSnapshot(s: DirectorSnapshot): string {
  const out: string[] = [];
  out.push(`node ${s.node} · lvsd ${s.version} · up since ${s.startedAt}`);
  out.push(`dataplane ${s.dataplane.kind} (${s.dataplane.reason})`);
  const reload = s.config.lastReload === null ? '' : ` · last reload ${s.config.lastReload.ok ? 'ok' : 'FAILED'}: ${s.config.lastReload.message}`;
  out.push(`config ${s.config.path} (sha256 ${s.config.hash.slice(0, 12)}) · reloads ${s.config.reloads}${reload}`);
  out.push('', s.vrrp.length === 0 ? 'VRRP: no instances' : 'VRRP');
  if (s.vrrpProblem !== null) out.push(`  NOT RUNNING: ${s.vrrpProblem}${s.vrrp.length > 0 ? ' (the roles below are the last it reported)' : ''}`);
  for (const i of s.vrrp) {
    const forced = i.forced === null ? '' : `  [forced: ${i.forced}]`;
    out.push(
      `  ${i.name.padEnd(12)} ${i.state.padEnd(6)} ${i.interface} vrid ${i.vrid} v${i.version}  priority ${i.effectivePriority}/${i.basePriority}  master ${i.masterAddress ?? '-'}  VIPs ${i.vips.join(' ')}${forced}`,
    );
  }
  out.push('', s.virtualServices.length === 0 ? 'Virtual services: none' : 'Virtual services');
  for (const v of s.virtualServices) {
    const q = v.quorum;
    const quorum = `quorum ${q.up ? 'up' : 'LOST'} (${q.liveWeight}/${q.required})${q.sorryServerActive ? ' — sorry server active' : ''}`;
    out.push(`  ${v.name.padEnd(12)} ${serviceAddress(v)}  ${v.scheduler} ${v.method}  ${quorum}${overrideText(v.override)}`);
    for (const r of v.realServers) out.push(realServerLine(r));
  }
  return out.join('\n');
}
