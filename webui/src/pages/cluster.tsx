// The cluster in one view: every director a column (this one first), its VRRP instances, virtual servers
// and real servers a row each, and what disagrees (the server's differences) highlighted where it is.
// Refreshed every few seconds; a peer that cannot be read is a column saying why. Operators drain / enable
// a real server or fail an instance over on one director or on all: here through this director's own
// routes, on a peer through POST /api/v1/cluster/forward (the peer audits it as USER@THIS-DIRECTOR).
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api, enc, errorText } from '../api.js';
import { HealthBadge, StateBadge, ago, ask, toast } from '../ui.js';
import { allows, type ClusterDirector, type ClusterView, type Difference, type RealServerSnapshot, type Role, type VirtualServerSnapshot, type VrrpInstanceSnapshot } from '../types.js';

const REFRESH_MS = 5000;

const KIND_TEXT: Record<Difference['kind'], string> = {
  'config-hash': 'config',
  'instance-set': 'instance set',
  vrid: 'VRID',
  vips: 'VIPs',
  auth: 'auth',
  'priority-tie': 'priority tie',
  'priority-order': 'priority order',
  'two-masters': 'two masters',
  'service-set': 'service set',
  service: 'service',
  'real-server-set': 'real servers',
  health: 'health',
};

type Action =
  | { action: 'drain' | 'enable'; service: string; realServer: string }
  | { action: 'failover'; instance: string; how: 'lower-priority' | 'restore' };

const describe = (a: Action): string => (a.action === 'failover' ? `${a.how === 'restore' ? 'Restore' : 'Fail over'} ${a.instance}` : `${a.action === 'drain' ? 'Drain' : 'Enable'} ${a.realServer}`);

function explain(a: Action): string {
  if (a.action !== 'failover') return a.action === 'drain' ? 'Weight 0: no new connections; established ones continue.' : 'Clear the override: back to the configured weight and health.';
  return a.how === 'restore' ? 'Back to the configured priority.' : 'Lower the priority so another director takes over.';
}

/** Does `a` on each of `directors` (this one through its own routes, peers through the forward route), after one confirmation. */
async function act(a: Action, directors: string[], self: string, done: () => void): Promise<void> {
  const { ok } = await ask({
    title: `${describe(a)} on ${directors.length > 1 ? 'all directors' : directors.join('')}?`,
    body: <p>{explain(a)} On: <strong>{directors.join(', ')}</strong>.</p>,
    confirm: describe(a),
    danger: a.action === 'failover' ? a.how !== 'restore' : a.action === 'drain',
  });
  if (!ok) return;
  for (const d of directors) {
    try {
      if (d !== self) await api('POST', '/api/v1/cluster/forward', { director: d, ...a });
      else if (a.action === 'failover') await api('POST', `/api/v1/vrrp/${enc(a.instance)}/failover`, { how: a.how });
      else await api(a.action === 'drain' ? 'PUT' : 'DELETE', `/api/v1/services/${enc(a.service)}/real-servers/${enc(a.realServer)}/override`, a.action === 'drain' ? { drain: true } : undefined);
      toast(`${d}: ${describe(a).toLowerCase()} done`);
    } catch (e) {
      toast(`${d}: ${errorText(e)}`, 'error');
    }
  }
  done();
}

/** The differences that concern this row (its subjects) on this director (null: any director). */
function hits(diffs: readonly Difference[], subjects: readonly string[], director: string | null): Difference[] {
  return diffs.filter((d) => subjects.includes(d.subject) && (director === null || d.directors.includes(director)));
}

function Cell({ diffs, children, testid }: { diffs: Difference[]; children: ComponentChildren; testid?: string }) {
  const flagged = diffs.length > 0;
  return (
    <td class={flagged ? 'differs' : ''} title={flagged ? diffs.map((d) => d.detail).join('\n') : undefined} data-testid={testid} data-differs={flagged ? 'yes' : undefined}>
      {children}
      {flagged && <span class="sr-only"> (differs: {diffs.map((d) => d.detail).join('; ')})</span>}
    </td>
  );
}

function Missing() {
  return <span class="muted">—</span>;
}

function InstanceCell({ i, run }: { i: VrrpInstanceSnapshot; run: ((a: Action) => void) | null }) {
  return (
    <>
      <StateBadge state={i.state} /> <span class="small">prio {i.effectivePriority}{i.effectivePriority !== i.basePriority && <span class="muted"> ({i.basePriority})</span>}</span>
      <div class="small muted">VRID {i.vrid} · {i.interface}{i.syncGroup !== null && ` · ${i.syncGroup}`}</div>
      <div class="small">{i.vips.map((v) => <code key={v} class="vip">{v}</code>)}</div>
      {run !== null && i.forced !== null && <button class="btn btn-sm" onClick={() => { run({ action: 'failover', instance: i.name, how: 'restore' }); }}>Restore</button>}
      {run !== null && i.forced === null && i.state === 'MASTER' && <button class="btn btn-sm" onClick={() => { run({ action: 'failover', instance: i.name, how: 'lower-priority' }); }}>Fail over</button>}
    </>
  );
}

function ServiceCell({ s }: { s: VirtualServerSnapshot }) {
  const up = s.realServers.filter((r) => r.health.status !== 'down').length;
  return <span class="small">{s.method.toUpperCase()} · {s.scheduler} · {up}/{s.realServers.length} up{!s.quorum.up && <span class="error"> · NO QUORUM</span>}</span>;
}

function RealServerCell({ r, label, run }: { r: RealServerSnapshot; label: string; run: ((what: 'drain' | 'enable') => void) | null }) {
  const eff = r.weight.effective;
  const drained = r.override?.drain === true;
  return (
    <>
      <HealthBadge status={r.health.status} /> <span class="small muted">weight {eff === null ? 'out' : eff}</span>{drained && <> <span class="chip chip-drain">drain</span></>}
      {run !== null && <> <button class="btn btn-sm btn-link" aria-label={`${drained ? 'Enable' : 'Drain'} ${label}`} onClick={() => { run(drained ? 'enable' : 'drain'); }}>{drained ? 'Enable' : 'Drain'}</button></>}
    </>
  );
}

function Head({ d, self }: { d: ClusterDirector; self: string }) {
  const snap = d.member?.snapshot;
  return (
    <th scope="col" data-testid={`director-${d.name}`}>
      <div class="cluster-name">{d.name}{d.name === self && <span class="muted small"> (this one)</span>}</div>
      {d.reachable && snap !== undefined ? (
        <div class="small muted">lvsd {snap.version} · {snap.dataplane.kind} · config {snap.config.hash.slice(0, 12)}</div>
      ) : (
        <div class="small error" role="status">unreachable: {d.error ?? 'unknown error'}</div>
      )}
      {d.url !== null && <div class="small muted">{d.url}{d.reachable && ` · ${Math.round(d.latencyMs)} ms`}</div>}
    </th>
  );
}

function Grid({ view, canAct, reload }: { view: ClusterView; canAct: boolean; reload: () => void }) {
  const ds = view.directors;
  const diffs = view.differences;
  const instances = [...new Set(ds.flatMap((d) => d.member?.snapshot.vrrp.map((i) => i.name) ?? []))].sort();
  const services = [...new Map(ds.flatMap((d) => d.member?.snapshot.virtualServices.map((s) => [s.id, s] as const) ?? [])).values()];
  const inst = (d: ClusterDirector, name: string) => d.member?.snapshot.vrrp.find((i) => i.name === name);
  const svc = (d: ClusterDirector, id: string) => d.member?.snapshot.virtualServices.find((s) => s.id === id);
  const reachable = ds.filter((d) => d.reachable).map((d) => d.name);
  const runOn = (d: ClusterDirector) => (canAct && d.reachable ? (a: Action) => { void act(a, [d.name], view.self, reload); } : null);
  const configCell = (d: ClusterDirector) => (d.member === null ? <Missing /> : <code>{d.member.snapshot.config.hash.slice(0, 12)}</code>);
  return (
    <div class="table-scroll">
      <table class="cluster">
        <caption class="sr-only">Directors side by side</caption>
        <thead><tr><th scope="col">Object</th>{ds.map((d) => <Head key={d.name} d={d} self={view.self} />)}</tr></thead>
        <tbody>
          <tr>
            <th scope="row">Config</th>
            {ds.map((d) => <Cell key={d.name} diffs={hits(diffs, ['config'], d.name)}>{configCell(d)}</Cell>)}
          </tr>
          {instances.length > 0 && <tr class="cluster-group"><th scope="rowgroup" colSpan={ds.length + 1}>VRRP instances</th></tr>}
          {instances.map((name) => {
            const subjects = (d: ClusterDirector): string[] => {
              const i = inst(d, name);
              return [`instance:${name}`, ...(i === undefined ? [] : [`vrid:${i.family}:${i.vrid}`, ...(i.syncGroup === null ? [] : [`syncGroup:${i.syncGroup}`])])];
            };
            return (
              <tr key={name} data-testid={`cluster-instance-${name}`}>
                <th scope="row">{name}</th>
                {ds.map((d) => {
                  const i = inst(d, name);
                  return <Cell key={d.name} diffs={hits(diffs, subjects(d), d.name)} testid={`cell-${name}-${d.name}`}>{i === undefined ? <Missing /> : <InstanceCell i={i} run={runOn(d)} />}</Cell>;
                })}
              </tr>
            );
          })}
          {services.length > 0 && <tr class="cluster-group"><th scope="rowgroup" colSpan={ds.length + 1}>Virtual servers</th></tr>}
          {services.flatMap((s) => {
            const rsIds = [...new Set(ds.flatMap((d) => svc(d, s.id)?.realServers.map((r) => r.id) ?? []))];
            return [
              <tr key={s.id} class="cluster-service">
                <th scope="row">{s.name} <span class="muted small">{s.id}</span></th>
                {ds.map((d) => {
                  const x = svc(d, s.id);
                  return <Cell key={d.name} diffs={hits(diffs, [`service:${s.id}`], d.name)}>{x === undefined ? <Missing /> : <ServiceCell s={x} />}</Cell>;
                })}
              </tr>,
              ...rsIds.map((id) => (
                <tr key={`${s.id}/${id}`} data-testid={`cluster-rs-${id}`}>
                  <th scope="row" class="cluster-rs">
                    <code>{id}</code>
                    {canAct && reachable.length > 1 && (
                      <div class="cluster-all">
                        <button class="btn btn-sm" onClick={() => void act({ action: 'drain', service: s.id, realServer: id }, reachable, view.self, reload)}>Drain on all</button>
                        <button class="btn btn-sm" onClick={() => void act({ action: 'enable', service: s.id, realServer: id }, reachable, view.self, reload)}>Enable on all</button>
                      </div>
                    )}
                  </th>
                  {ds.map((d) => {
                    const r = svc(d, s.id)?.realServers.find((x) => x.id === id);
                    return <Cell key={d.name} diffs={hits(diffs, [`realServer:${s.id}/${id}`], d.name)} testid={`cell-${id}-${d.name}`}>{r === undefined ? <Missing /> : <RealServerCell r={r} label={`${id} on ${d.name}`} run={canAct && d.reachable ? (what) => { void act({ action: what, service: s.id, realServer: id }, [d.name], view.self, reload); } : null} />}</Cell>;
                  })}
                </tr>
              )),
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}

export function Cluster({ role }: { role: Role }) {
  const [view, setView] = useState<ClusterView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = (): void => {
    setBusy(true);
    api<ClusterView>('GET', '/api/v1/cluster').then((v) => { setView(v); setError(null); }, (e: unknown) => { setError(errorText(e)); }).finally(() => { setBusy(false); });
  };
  useEffect(() => {
    load();
    const t = window.setInterval(load, REFRESH_MS);
    return () => { window.clearInterval(t); };
  }, []);
  if (view === null) return error === null ? <p class="muted">Loading…</p> : <p class="error" role="alert">{error}</p>;
  const unreachable = view.directors.filter((d) => !d.reachable).length;
  return (
    <>
      <section class="card" aria-labelledby="cluster-h">
        <header class="card-head wrap">
          <h2 id="cluster-h">Cluster <span class="node">{view.name}</span></h2>
          <div class="small muted">
            {view.directors.length} director{view.directors.length === 1 ? '' : 's'}{unreachable > 0 && <span class="error"> · {unreachable} unreachable</span>} · read {ago(view.at)}{' '}
            <button class="btn btn-sm" onClick={load} disabled={busy}>Refresh</button>
          </div>
        </header>
        {error !== null && <p class="error" role="alert">Refresh failed: {error}</p>}
        {view.directors.length === 1 && <p class="muted">No peers configured: add a <code>cluster</code> section to the config (docs/cluster.md).</p>}
        <h3 class="section-h">Differences</h3>
        {view.differences.length === 0 ? (
          <p class="ok-text" data-testid="no-differences">The directors that could be read agree.</p>
        ) : (
          <ul class="differences" data-testid="differences">
            {view.differences.map((d) => (
              <li key={`${d.kind} ${d.subject}`}><span class="badge diff-kind">{KIND_TEXT[d.kind]}</span> {d.detail}</li>
            ))}
          </ul>
        )}
      </section>
      <section class="card" aria-label="Directors side by side">
        <Grid view={view} canAct={allows(role, 'operator')} reload={load} />
      </section>
    </>
  );
}
