// Log in; or, on a fresh install, create the first admin with the bootstrap token lvsd printed at start.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import type { Session } from '../types.js';

export function Login({ onLogin }: { onLogin: (s: Session) => void }) {
  const [bootstrap, setBootstrap] = useState(false);
  const [token, setToken] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<{ needed: boolean }>('GET', '/api/v1/bootstrap').then((r) => { setBootstrap(r.needed); }, () => undefined);
  }, []);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = bootstrap
        ? await api<Session>('POST', '/api/v1/bootstrap', { token: token.trim(), name, password })
        : await api<Session>('POST', '/api/v1/session', { name, password });
      onLogin(s);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login" id="main">
      <form class="card login-card" onSubmit={(e) => void submit(e)} aria-labelledby="login-h">
        <div class="brand big"><span class="logo" aria-hidden="true">◆</span> lvsd</div>
        <h1 id="login-h">{bootstrap ? 'Create the first admin' : 'Sign in'}</h1>
        {bootstrap && <p class="small muted">Paste the one-time bootstrap token lvsd printed when it first started (or run <code>lvsd user add NAME --role admin</code> on the director).</p>}
        {bootstrap && <label class="field"><span>Bootstrap token</span><input required value={token} autoComplete="off" onInput={(e) => { setToken((e.target as HTMLInputElement).value); }} /></label>}
        <label class="field"><span>User</span><input name="username" required autoComplete="username" autoFocus value={name} onInput={(e) => { setName((e.target as HTMLInputElement).value); }} /></label>
        <label class="field"><span>Password</span><input name="password" required type="password" autoComplete={bootstrap ? 'new-password' : 'current-password'} value={password} onInput={(e) => { setPassword((e.target as HTMLInputElement).value); }} /></label>
        {error !== null && <p class="error" role="alert">{error}</p>}
        <button class="btn btn-primary wide" type="submit" disabled={busy}>{bootstrap ? 'Create admin and sign in' : 'Sign in'}</button>
      </form>
    </main>
  );
}
