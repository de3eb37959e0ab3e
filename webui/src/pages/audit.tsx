// The audit log: who changed what, when, before → after; filtered on the server.
import { useEffect, useState } from 'preact/hooks';
import { api, enc, errorText } from '../api.js';
import { useLive } from '../live.js';
import { fmtTime } from '../ui.js';
import type { AuditEntry } from '../types.js';

// sha256 hashes are long and alike: 12 hex digits tell them apart
const shorten = (s: string): string => s.replace(/\b([0-9a-f]{12})[0-9a-f]{52}\b/g, '$1…');

function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'string') return shorten(v);
  if (typeof v === 'object' && !Array.isArray(v)) {
    return Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k}: ${Array.isArray(x) ? x.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('; ') : typeof x === 'string' ? x : JSON.stringify(x)}`)
      .map(shorten)
      .join(', ');
  }
  return shorten(JSON.stringify(v));
}

/** Lets long ids break after "/" and ":" instead of anywhere. */
function breakable(id: string) {
  return id.split(/(?<=[/:])/).map((part, i) => <span key={i}>{part}<wbr /></span>);
}

export function Audit() {
  const { auditSeq } = useLive();
  const [who, setWho] = useState('');
  const [action, setAction] = useState('');
  const [rows, setRows] = useState<AuditEntry[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const qs = [who !== '' ? `who=${enc(who)}` : '', action !== '' ? `action=${enc(action)}` : ''].filter((x) => x !== '').join('&');
    api<AuditEntry[]>('GET', `/api/v1/audit${qs === '' ? '' : `?${qs}`}`).then((r) => { setRows(r); setError(null); }, (e: unknown) => { setError(errorText(e)); });
  }, [who, action, auditSeq]);
  return (
    <section class="card" aria-labelledby="audit-h">
      <header class="card-head wrap">
        <h2 id="audit-h">Audit log</h2>
        <div class="filters">
          <label class="field inline"><span>Who</span><input value={who} onChange={(e) => { setWho((e.target as HTMLInputElement).value.trim()); }} placeholder="user" /></label>
          <label class="field inline"><span>Action</span>
            <select value={action} onChange={(e) => { setAction((e.target as HTMLSelectElement).value); }}>
              <option value="">all</option>
              {['override', 'failover', 'config', 'user'].map((a) => <option key={a} value={a}>{a}</option>)}
            </select>
          </label>
        </div>
      </header>
      {error !== null && <p class="error">{error}</p>}
      {rows.length === 0 ? <p class="muted">Nothing recorded{who !== '' || action !== '' ? ' for this filter' : ''}.</p> : (
        <div class="table-scroll">
          <table class="audit">
            <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Before → after</th></tr></thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id}>
                  <td data-label="When"><time dateTime={r.at}>{fmtTime(r.at)}</time></td>
                  <td data-label="Who">{r.who}</td>
                  <td data-label="What"><span class="chip">{r.action}</span></td>
                  <td data-label="Target"><code>{breakable(r.target)}</code></td>
                  <td data-label="Change"><code class="before">{show(r.before)}</code> → <code class="after">{show(r.after)}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
