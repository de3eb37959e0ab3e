// The shell: session, navigation (hash routes so the static server needs no fallback), the live status line.
import { useEffect, useState } from 'preact/hooks';
import { api, setCsrf } from './api.js';
import { live, useLive } from './live.js';
import { AskHost, ToastHost } from './ui.js';
import { allows, type Role, type Session } from './types.js';
import { Login } from './pages/login.js';
import { Overview } from './pages/overview.js';
import { Cluster } from './pages/cluster.js';
import { Services } from './pages/services.js';
import { ConfigPage } from './pages/config.js';
import { Events } from './pages/events.js';
import { Graphs } from './pages/graphs.js';
import { Audit } from './pages/audit.js';
import { Users } from './pages/users.js';

interface Page {
  id: string;
  label: string;
  need: Role;
}
const PAGES: Page[] = [
  { id: 'overview', label: 'Overview', need: 'viewer' },
  { id: 'cluster', label: 'Cluster', need: 'viewer' },
  { id: 'services', label: 'Services', need: 'viewer' },
  { id: 'graphs', label: 'Graphs', need: 'viewer' },
  { id: 'config', label: 'Config', need: 'operator' },
  { id: 'events', label: 'Events', need: 'viewer' },
  { id: 'audit', label: 'Audit', need: 'viewer' },
  { id: 'users', label: 'Users', need: 'admin' },
];

function useRoute(): string {
  const get = (): string => window.location.hash.replace(/^#\/?/, '') || 'overview';
  const [r, setR] = useState(get);
  useEffect(() => {
    const on = (): void => { setR(get()); };
    window.addEventListener('hashchange', on);
    return () => { window.removeEventListener('hashchange', on); };
  }, []);
  return r;
}

function Shell({ session, onLogout }: { session: Session; onLogout: () => void }) {
  const route = useRoute();
  const { snap, connected, error } = useLive();
  const pages = PAGES.filter((p) => allows(session.role, p.need));
  const page = pages.find((p) => p.id === route) ?? pages[0];
  useEffect(() => {
    document.title = `${page?.label ?? 'lvsd'} · ${snap?.node ?? 'lvsd'}`;
  }, [page, snap?.node]);
  const masters = snap?.vrrp.filter((i) => i.state === 'MASTER').length ?? 0;
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <div class="brand"><span class="logo" aria-hidden="true">◆</span> lvsd <span class="node">{snap?.node ?? ''}</span></div>
        <div class="status-line" aria-live="polite">
          <span class={`dot ${connected ? 'dot-on' : 'dot-off'}`} aria-hidden="true" />
          <span class="small">{connected ? 'live' : 'offline'}</span>
          {snap !== null && <span class="small muted hide-sm">· {masters} MASTER · {snap.dataplane.kind}</span>}
        </div>
        <div class="user">
          <span class="small"><strong>{session.user}</strong> <span class="muted">{session.role}</span></span>
          <button class="btn btn-sm" onClick={onLogout}>Sign out</button>
        </div>
        <nav class="tabs" aria-label="Sections">
          {pages.map((p) => (
            <a key={p.id} href={`#/${p.id}`} aria-current={p.id === page?.id ? 'page' : undefined}>{p.label}</a>
          ))}
        </nav>
      </header>
      {error !== null && <div class="banner" role="alert">Cannot reach the director API: {error}</div>}
      <main id="main" tabIndex={-1}>
        {page?.id === 'overview' && <Overview role={session.role} />}
        {page?.id === 'cluster' && <Cluster role={session.role} />}
        {page?.id === 'services' && <Services role={session.role} />}
        {page?.id === 'graphs' && <Graphs />}
        {page?.id === 'config' && <ConfigPage role={session.role} />}
        {page?.id === 'events' && <Events />}
        {page?.id === 'audit' && <Audit />}
        {page?.id === 'users' && <Users me={session.user} />}
      </main>
    </>
  );
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => {
    api<Session>('GET', '/api/v1/session').then((s) => { setCsrf(s.csrfToken); setSession(s); }, () => { setSession(null); });
  }, []);
  useEffect(() => {
    if (session) live.start();
    return () => { live.stop(); };
  }, [session]);
  const logout = (): void => {
    void api('DELETE', '/api/v1/session').finally(() => { setCsrf(''); setSession(null); });
  };
  return (
    <>
      {session === undefined && <p class="muted center">Loading…</p>}
      {session === null && <Login onLogin={(s) => { setCsrf(s.csrfToken); setSession(s); }} />}
      {session && <Shell session={session} onLogout={logout} />}
      <AskHost />
      <ToastHost />
    </>
  );
}
