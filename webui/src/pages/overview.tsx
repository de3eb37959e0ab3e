// This director, its VRRP instances (state badge, priorities, master, VIPs, peers) and a timeline of
// transitions across all instances. Operators can force a failover from here, and withdraw a BGP prefix.
import { api, enc, errorText } from '../api.js';
import { live, useLive } from '../live.js';
import { StateBadge, ago, ask, fmtNum, fmtTime, toast } from '../ui.js';
import { Bgp } from './bgp.js';
import { allows, type FailoverHow, type Role, type VrrpInstanceSnapshot } from '../types.js';

const HOW_TEXT: Record<FailoverHow, { label: string; explain: string }> = {
  'lower-priority': { label: 'Fail over', explain: 'Lower this director’s priority so the peer takes over (if it is healthy).' },
  maintenance: { label: 'Maintenance', explain: 'Give up mastership whatever the peer does, until restored.' },
  restore: { label: 'Restore', explain: 'Return to the configured priority; preemption decides who is master.' },
};

async function failover(i: VrrpInstanceSnapshot, how: FailoverHow): Promise<void> {
  const t = HOW_TEXT[how];
  const { ok } = await ask({
    title: `${t.label}: ${i.name}?`,
    body: <p>{t.explain} Now <strong>{i.state}</strong> at priority {i.effectivePriority}.</p>,
    confirm: t.label,
    danger: how !== 'restore',
  });
  if (!ok) return;
  try {
    await api('POST', `/api/v1/vrrp/${enc(i.name)}/failover`, { how });
    toast(`${i.name}: ${t.label.toLowerCase()} requested`);
    live.soon();
  } catch (e) {
    toast(`${i.name}: ${errorText(e)}`, 'error');
  }
}

function Instance({ i, role }: { i: VrrpInstanceSnapshot; role: Role }) {
  const dropped = Object.entries(i.adverts.dropped).filter(([, n]) => n > 0);
  return (
    <article class={`card instance state-border-${i.state.toLowerCase()}`} data-testid={`instance-${i.name}`} aria-labelledby={`inst-${i.name}`}>
      <header class="card-head">
        <h3 id={`inst-${i.name}`}>{i.name}</h3>
        <StateBadge state={i.state} large />
      </header>
      <dl class="facts">
        <div><dt>Interface</dt><dd>{i.interface} · VRID {i.vrid} · v{i.version}</dd></div>
        <div><dt>Priority</dt><dd>{i.effectivePriority}{i.effectivePriority !== i.basePriority && <span class="muted"> (configured {i.basePriority})</span>}</dd></div>
        <div><dt>Master</dt><dd>{i.masterAddress ?? 'unknown'}</dd></div>
        <div><dt>VIPs</dt><dd>{i.vips.length === 0 ? '—' : i.vips.map((v) => <code key={v} class="vip">{v}</code>)}</dd></div>
        <div><dt>Peers</dt><dd>{i.peers.length === 0 ? 'none heard' : i.peers.map((p) => <span key={p.address} class="peer">{p.address} <span class="muted">prio {p.priority}, {ago(p.lastSeen)}</span></span>)}</dd></div>
        <div><dt>Adverts</dt><dd>{fmtNum(i.adverts.sent)} sent · {fmtNum(i.adverts.received)} received{dropped.length > 0 && <span class="muted"> · dropped {dropped.map(([r, n]) => `${r} ${n}`).join(', ')}</span>}</dd></div>
        {i.syncGroup !== null && <div><dt>Sync group</dt><dd>{i.syncGroup}</dd></div>}
      </dl>
      {i.forced !== null && <p class="note">Operator forced: <strong>{i.forced}</strong></p>}
      {allows(role, 'operator') && (
        <div class="actions">
          {i.forced === null ? (
            <>
              <button class="btn" onClick={() => void failover(i, 'lower-priority')}>Fail over…</button>
              <button class="btn" onClick={() => void failover(i, 'maintenance')}>Maintenance…</button>
            </>
          ) : (
            <button class="btn btn-primary" onClick={() => void failover(i, 'restore')}>Restore…</button>
          )}
        </div>
      )}
    </article>
  );
}

export function Overview({ role }: { role: Role }) {
  const { snap } = useLive();
  if (snap === null) return <p class="muted">Loading…</p>;
  const timeline = snap.vrrp
    .flatMap((i) => i.transitions.map((t) => ({ ...t, instance: i.name })))
    .sort((a, b) => b.at.localeCompare(a.at))
    .slice(0, 30);
  const masters = snap.vrrp.filter((i) => i.state === 'MASTER').length;
  const rsTotal = snap.virtualServices.reduce((n, s) => n + s.realServers.length, 0);
  const rsUp = snap.virtualServices.reduce((n, s) => n + s.realServers.filter((r) => r.health.status !== 'down').length, 0);
  return (
    <>
      <section class="summary" aria-label="Summary">
        <div class="stat"><span class="stat-n">{masters}/{snap.vrrp.length}</span><span class="stat-l">instances MASTER here</span></div>
        <div class="stat"><span class="stat-n">{snap.virtualServices.length}</span><span class="stat-l">virtual servers</span></div>
        <div class={`stat${rsUp < rsTotal ? ' stat-warn' : ''}`}><span class="stat-n">{rsUp}/{rsTotal}</span><span class="stat-l">real servers healthy</span></div>
        <div class="stat"><span class="stat-n">{snap.dataplane.kind}</span><span class="stat-l">dataplane</span></div>
      </section>

      <section class="card director" aria-labelledby="director-h">
        <h2 id="director-h">Director <span class="node">{snap.node}</span></h2>
        <dl class="facts cols">
          <div><dt>Dataplane</dt><dd><strong>{snap.dataplane.kind}</strong> <span class="muted">— {snap.dataplane.reason}</span></dd></div>
          <div><dt>Config</dt><dd><code>{snap.config.path}</code> <span class="muted">sha256 {snap.config.hash.slice(0, 12)}</span></dd></div>
          <div><dt>Reloads</dt><dd>{snap.config.reloads}{snap.config.lastReload !== null && <span class={snap.config.lastReload.ok ? 'muted' : 'error'}> · last {snap.config.lastReload.ok ? 'ok' : 'FAILED'} by {snap.config.lastReload.by}, {ago(snap.config.lastReload.at)}</span>}{snap.config.lastReload !== null && snap.config.lastReload.restartNeeded.length > 0 && <span class="error"> · restart needed for {snap.config.lastReload.restartNeeded.join(', ')}</span>}</dd></div>
          <div><dt>Running since</dt><dd>{fmtTime(snap.startedAt)} <span class="muted">· lvsd {snap.version}</span></dd></div>
        </dl>
      </section>

      <h2 class="section-h">VRRP instances</h2>
      {snap.vrrpProblem !== null && <p class="error" role="alert">VRRP is not running: {snap.vrrpProblem}{snap.vrrp.length > 0 ? ' — the roles below are the last it reported.' : ''}</p>}
      {snap.vrrp.length === 0 ? <p class="muted">No VRRP instances configured.</p> : (
        <div class="grid">{snap.vrrp.map((i) => <Instance key={i.name} i={i} role={role} />)}</div>
      )}
      {snap.bgp !== undefined && <Bgp bgp={snap.bgp} role={role} />}

      <section class="card" aria-labelledby="timeline-h">
        <h2 id="timeline-h">Transitions</h2>
        {timeline.length === 0 ? <p class="muted">No transitions yet.</p> : (
          <ol class="timeline">
            {timeline.map((t) => (
              <li key={`${t.instance}-${t.at}-${t.to}`}>
                <time dateTime={t.at}>{fmtTime(t.at)}</time>
                <span class="tl-what"><strong>{t.instance}</strong> {t.from} → <StateBadge state={t.to} /></span>
                <span class="tl-why">{t.reason}</span>
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  );
}
