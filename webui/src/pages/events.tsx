// Live events (newest first) with a type filter and a text search.
import { useState } from 'preact/hooks';
import { useLive } from '../live.js';
import { fmtTime } from '../ui.js';
import type { ApiEvent } from '../types.js';

const TYPES = ['vrrp', 'health', 'quorum', 'override', 'failover', 'config', 'dataplane', 'audit'];

export function describe(e: ApiEvent): string {
  const s = (k: string): string => {
    const v = e[k];
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : v === null || v === undefined ? '' : JSON.stringify(v);
  };
  switch (e.type) {
    case 'vrrp.transition': return `${s('instance')}: ${s('from')} → ${s('to')} (${s('reason')})`;
    case 'vrrp.priority': return `${s('instance')}: priority ${s('priority')} (${s('reason')})`;
    case 'health.result': return `${s('service')} ${s('realServer')}: ${s('result')}${e.error ? ` — ${s('error')}` : ''}`;
    case 'health.change': return `${s('service')} ${s('realServer')}: ${s('status').toUpperCase()} (${s('reason')})`;
    case 'health.weight': return `${s('service')} ${s('realServer')}: weight ${s('previous')} → ${s('weight')} (${s('reason')})`;
    case 'quorum.change': return `${s('service')}: quorum ${e.up === true ? 'met' : 'lost'}`;
    case 'override': {
      const t = e.target as { service?: string; realServer?: string } | undefined;
      return `${t?.service ?? ''}${t?.realServer !== undefined ? ` ${t.realServer}` : ''}: ${e.override === null ? 'override cleared' : s('override')} by ${s('by')}`;
    }
    case 'failover': return `${s('instance')}: ${s('how')} by ${s('by')}`;
    case 'config.reload': return `${e.ok === true ? 'reloaded' : 'reload FAILED'} by ${s('by')}: ${s('message')}`;
    case 'dataplane.apply': return `${s('operations')} operation(s) in ${s('durationMs')} ms`;
    case 'dataplane.error': return s('message');
    case 'audit': return `${s('who')} ${s('action')} ${s('target')}`;
    default: return JSON.stringify(e);
  }
}

export function Events() {
  const { events, connected } = useLive();
  const [type, setType] = useState('');
  const [q, setQ] = useState('');
  const shown = events.filter((e) => (type === '' || e.type === type || e.type.startsWith(type + '.')) && (q === '' || describe(e).toLowerCase().includes(q.toLowerCase())));
  return (
    <section class="card" aria-labelledby="ev-h">
      <header class="card-head wrap">
        <h2 id="ev-h">Events <span class={`dot ${connected ? 'dot-on' : 'dot-off'}`} /> <span class="small muted">{connected ? 'live' : 'reconnecting…'}</span></h2>
        <div class="filters">
          <label class="field inline"><span>Type</span>
            <select value={type} onChange={(e) => { setType((e.target as HTMLSelectElement).value); }}>
              <option value="">all</option>
              {TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
            </select>
          </label>
          <label class="field inline"><span>Search</span>
            <input type="search" value={q} onInput={(e) => { setQ((e.target as HTMLInputElement).value); }} placeholder="instance, server, user…" />
          </label>
        </div>
      </header>
      {shown.length === 0 ? <p class="muted">No events{type !== '' || q !== '' ? ' match' : ' yet'}.</p> : (
        <ol class="events">
          {shown.map((e) => (
            <li key={e.seq} class={`ev ev-${e.type.split('.')[0] ?? ''}`}>
              <time dateTime={e.at}>{fmtTime(e.at)}</time>
              <span class="chip">{e.type}</span>
              <span class="ev-text">{describe(e)}</span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
