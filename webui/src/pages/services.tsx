// Virtual servers and their real servers: health, weights, connections, a rate chart; drain / enable /
// weight / maintenance with confirmation. The effect arrives over SSE within a second.
import { api, enc, errorText } from '../api.js';
import { live, useLive } from '../live.js';
import { HealthBadge, OverrideChips, Sparkline, ago, ask, fmtBytes, fmtNum, toast } from '../ui.js';
import { allows, type Override, type RealServerSnapshot, type Role, type VirtualServerSnapshot } from '../types.js';

type Act = 'drain' | 'enable' | 'weight' | 'maintenance';

async function act(svc: VirtualServerSnapshot, rs: RealServerSnapshot | null, what: Act): Promise<void> {
  const name = rs === null ? `${svc.name} (whole service)` : `${rs.id} in ${svc.name}`;
  const current: Override = (rs === null ? svc.override : rs.override) ?? {};
  const texts: Record<Act, { title: string; body: string; confirm: string; danger: boolean }> = {
    drain: { title: `Drain ${name}?`, body: 'Weight 0: no new connections; established ones continue.', confirm: 'Drain', danger: true },
    enable: { title: `Enable ${name}?`, body: 'Clear the override: back to the configured weight and health.', confirm: 'Enable', danger: false },
    weight: { title: `Set weight of ${name}`, body: 'Overrides the configured weight until cleared.', confirm: 'Set weight', danger: false },
    maintenance: { title: `Maintenance for ${name}?`, body: 'Out of the table; existing connections drain per the removal policy.', confirm: 'Maintenance', danger: true },
  };
  const t = texts[what];
  const configured = rs?.weight.configured ?? 1;
  const res = await ask({
    title: t.title,
    body: <p>{t.body}</p>,
    confirm: t.confirm,
    danger: t.danger,
    ...(what === 'weight' ? { number: { label: 'Weight (0–65535)', min: 0, max: 65535, value: current.weight ?? configured } } : {}),
  });
  if (!res.ok) return;
  const base = rs === null ? `/api/v1/services/${enc(svc.id)}/override` : `/api/v1/services/${enc(svc.id)}/real-servers/${enc(rs.id)}/override`;
  try {
    if (what === 'enable') await api('DELETE', base);
    else if (what === 'drain') await api('PUT', base, { ...current, drain: true, maintenance: undefined });
    else if (what === 'maintenance') await api('PUT', base, { ...current, maintenance: true });
    else await api('PUT', base, { ...current, weight: res.value });
    toast(`${name}: ${what === 'weight' ? `weight ${res.value}` : what === 'enable' ? 'enabled' : what === 'drain' ? 'drained' : 'in maintenance'}`);
    live.soon();
  } catch (e) {
    toast(`${name}: ${errorText(e)}`, 'error');
  }
}

function Actions({ svc, rs }: { svc: VirtualServerSnapshot; rs: RealServerSnapshot | null }) {
  const o = rs === null ? svc.override : rs.override;
  const label = rs === null ? svc.name : rs.id;
  return (
    <div class="actions compact">
      {o === null || (o.drain !== true && o.maintenance !== true) ? (
        <button class="btn btn-sm" onClick={() => void act(svc, rs, 'drain')} aria-label={`Drain ${label}`}>Drain</button>
      ) : null}
      {o !== null && <button class="btn btn-sm btn-primary" onClick={() => void act(svc, rs, 'enable')} aria-label={`Enable ${label}`}>Enable</button>}
      <button class="btn btn-sm" onClick={() => void act(svc, rs, 'weight')} aria-label={`Set weight of ${label}`}>Weight…</button>
      {o?.maintenance !== true && <button class="btn btn-sm" onClick={() => void act(svc, rs, 'maintenance')} aria-label={`Maintenance for ${label}`}>Maint.</button>}
    </div>
  );
}

function RealServerRow({ svc, rs, canAct }: { svc: VirtualServerSnapshot; rs: RealServerSnapshot; canAct: boolean }) {
  const lc = rs.health.lastCheck;
  const eff = rs.weight.effective;
  return (
    <tr data-testid={`rs-${rs.id}`} class={rs.health.status === 'down' ? 'row-down' : ''}>
      <th scope="row" data-label="Real server"><code>{rs.id}</code> <span class="muted">{rs.method}</span></th>
      <td data-label="Health">
        <HealthBadge status={rs.health.status} />
        {lc !== null && <div class="small muted" title={lc.error ?? lc.result}>{rs.health.checker}: {lc.result} · {lc.latencyMs.toFixed(1)} ms · {ago(lc.at)}</div>}
        {lc?.error != null && <div class="small error">{lc.error}</div>}
      </td>
      <td data-label="Weight" class="num">
        <span data-testid="weight-effective" class={eff === null ? 'muted' : eff !== rs.weight.configured ? 'changed' : ''}>{eff === null ? 'out' : eff}</span>
        <span class="muted"> / {rs.weight.configured}</span>
        <OverrideChips o={rs.override} />
      </td>
      <td data-label="Connections" class="num">{fmtNum(rs.connections.active)} <span class="muted">active</span> · {fmtNum(rs.connections.inactive)} <span class="muted">inactive</span></td>
      {canAct && <td data-label="Actions"><Actions svc={svc} rs={rs} /></td>}
    </tr>
  );
}

function Service({ svc, rates, canAct }: { svc: VirtualServerSnapshot; rates: number[]; canAct: boolean }) {
  const c = svc.counters;
  const where = svc.fwmark !== null ? `fwmark ${svc.fwmark}` : `${svc.protocol.toUpperCase()} ${svc.address ?? ''}:${svc.port ?? ''}`;
  return (
    <section class="card service" data-testid={`service-${svc.name}`} aria-labelledby={`svc-${svc.name}`}>
      <header class="card-head wrap">
        <div>
          <h3 id={`svc-${svc.name}`}>{svc.name} <span class="muted small">{where}</span></h3>
          <p class="small muted">{svc.method.toUpperCase()} · {svc.scheduler} · quorum {svc.quorum.liveWeight}/{svc.quorum.required}{' '}
            <span class={`badge ${svc.quorum.up ? 'health-up' : 'health-down'}`}>{svc.quorum.up ? 'QUORUM' : 'NO QUORUM'}</span>
            {svc.quorum.sorryServerActive && <span class="chip chip-maint">sorry server</span>}
            {svc.checksSuspended && <span class="chip chip-maint" title="ha_suspend: this director does not hold the virtual address">checks suspended</span>} <OverrideChips o={svc.override} />
          </p>
        </div>
        <Sparkline values={rates} label={`${svc.name} connections per second`} />
      </header>
      {c !== null && (
        <p class="small counters">{fmtNum(c.conns)} connections · in {fmtBytes(c.inBps)}/s · out {fmtBytes(c.outBps)}/s · {fmtNum(c.inPps)} pkt/s in</p>
      )}
      <table class="rs">
        <caption class="sr-only">Real servers of {svc.name}</caption>
        <thead><tr><th scope="col">Real server</th><th scope="col">Health</th><th scope="col">Weight (effective / configured)</th><th scope="col">Connections</th>{canAct && <th scope="col">Actions</th>}</tr></thead>
        <tbody>{svc.realServers.map((rs) => <RealServerRow key={rs.id} svc={svc} rs={rs} canAct={canAct} />)}</tbody>
      </table>
      {canAct && (
        <div class="service-actions">
          <span class="small muted">Whole service:</span>
          <Actions svc={svc} rs={null} />
        </div>
      )}
    </section>
  );
}

export function Services({ role }: { role: Role }) {
  const { snap, rates } = useLive();
  if (snap === null) return <p class="muted">Loading…</p>;
  if (snap.virtualServices.length === 0) return <p class="muted">No virtual servers configured.</p>;
  const canAct = allows(role, 'operator');
  return <>{snap.virtualServices.map((s) => <Service key={s.id} svc={s} rates={rates.get(s.id) ?? []} canAct={canAct} />)}</>;
}
