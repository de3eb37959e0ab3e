// The one-line summary systemd shows as the unit's "Status:" (sd_notify STATUS=…): VRRP roles, how many
// real servers the dataplane holds, and a failed last reload. Pure, from the snapshot everyone reads.
import type { DirectorSnapshot } from './snapshot.js';

const SHOWN_INSTANCES = 3;

export function statusLine(s: DirectorSnapshot): string {
  const roles = s.vrrp.slice(0, SHOWN_INSTANCES).map((i) => `${i.name} ${i.state}`);
  if (s.vrrp.length > SHOWN_INSTANCES) roles.push(`+${s.vrrp.length - SHOWN_INSTANCES} more`);
  const vrrp = s.vrrpProblem !== null ? `VRRP FAILED: ${s.vrrpProblem}` : roles.length === 0 ? 'no VRRP' : roles.join(', ');
  const real = s.virtualServices.flatMap((v) => v.realServers);
  const inTable = real.filter((r) => r.weight.effective !== null && r.weight.effective > 0).length;
  const n = s.virtualServices.length;
  const services = `${n} virtual server${n === 1 ? '' : 's'}, ${inTable}/${real.length} real servers serving (${s.dataplane.kind})`;
  const reload = s.config.lastReload?.ok === false ? ' · last reload FAILED' : '';
  return `${vrrp} · ${services}${reload}`;
}
