// This director's BGP announcements (BIRD's sessions and lvsd's prefixes), with the operator's withdraw of
// one prefix from this director — the other directors keep announcing it, so ECMP moves its flows there —
// and its restore. The withdraw is kept across restarts (state file) until restored.
import { api, errorText } from '../api.js';
import { live } from '../live.js';
import { ask, toast } from '../ui.js';
import { allows, type BgpSnapshot, type Role } from '../types.js';

type Announcement = BgpSnapshot['announcements'][number];
type How = 'withdraw' | 'restore';

const HOW_TEXT: Record<How, { label: string; explain: string }> = {
  withdraw: { label: 'Withdraw', explain: 'BIRD withdraws this prefix from this director only; the routers move its flows to the other directors. It stays withdrawn, across restarts, until restored.' },
  restore: { label: 'Restore', explain: 'Announce this prefix again while its virtual servers have quorum.' },
};

async function force(a: Announcement, how: How): Promise<void> {
  const t = HOW_TEXT[how];
  const { ok } = await ask({
    title: `${t.label} ${a.prefix}?`,
    body: <p>{t.explain} Now <strong>{a.announced ? 'announced' : 'withdrawn'}</strong> ({a.reason}).</p>,
    confirm: t.label,
    danger: how === 'withdraw',
  });
  if (!ok) return;
  try {
    const r = await api<{ announced: boolean; withdrawnBy: string | null }>('POST', '/api/v1/bgp/withdraw', { prefix: a.prefix, how });
    toast(`${a.prefix}: ${r.announced ? 'announced' : `withdrawn${r.withdrawnBy === null ? '' : ` by ${r.withdrawnBy}`}`}`);
    live.soon();
  } catch (e) {
    toast(`${a.prefix}: ${errorText(e)}`, 'error');
  }
}

export function Bgp({ bgp, role }: { bgp: BgpSnapshot; role: Role }) {
  const canAct = allows(role, 'operator');
  return (
    <section class="card" aria-labelledby="bgp-h" data-testid="bgp">
      <h2 id="bgp-h">BGP <span class="muted small">BIRD at <code>{bgp.socket}</code></span></h2>
      {bgp.problem !== null && <p class="error" role="alert">{bgp.problem}</p>}
      <p class="small">{bgp.sessions.length === 0 ? <span class="muted">No BGP sessions reported.</span> : bgp.sessions.map((s) => <span key={s.name} class="peer">{s.name} <span class={`badge ${s.info.startsWith('Established') ? 'health-up' : 'health-down'}`}>{s.info || s.state}</span> </span>)}</p>
      <table class="rs">
        <caption class="sr-only">Prefixes this director announces</caption>
        <thead><tr><th scope="col">Prefix</th><th scope="col">State</th><th scope="col">Why</th>{canAct && <th scope="col">Actions</th>}</tr></thead>
        <tbody>
          {bgp.announcements.map((a) => (
            <tr key={a.prefix} data-testid={`bgp-${a.prefix}`}>
              <th scope="row" data-label="Prefix"><code>{a.prefix}</code></th>
              <td data-label="State"><span class={`badge ${a.announced ? 'health-up' : 'health-down'}`}>{a.announced ? 'ANNOUNCED' : 'WITHDRAWN'}</span></td>
              <td data-label="Why" class="small">{a.reason}</td>
              {canAct && (
                <td data-label="Actions">
                  {a.withdrawnBy === null
                    ? <button class="btn btn-sm" onClick={() => void force(a, 'withdraw')} aria-label={`Withdraw ${a.prefix}`}>Withdraw…</button>
                    : <button class="btn btn-sm btn-primary" onClick={() => void force(a, 'restore')} aria-label={`Restore ${a.prefix}`}>Restore…</button>}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
