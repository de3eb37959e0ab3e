// Users (admin): add, change role, reset password, delete.
import { useEffect, useState } from 'preact/hooks';
import { api, enc, errorText } from '../api.js';
import { ask, fmtTime, toast } from '../ui.js';
import type { Role, UserView } from '../types.js';

const ROLES: Role[] = ['viewer', 'operator', 'admin'];

export function Users({ me }: { me: string }) {
  const [users, setUsers] = useState<UserView[]>([]);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const load = (): void => {
    api<UserView[]>('GET', '/api/v1/users').then(setUsers, (e: unknown) => { toast(errorText(e), 'error'); });
  };
  useEffect(load, []);

  const add = async (e: Event): Promise<void> => {
    e.preventDefault();
    try {
      await api('POST', '/api/v1/users', { name, password, role });
      toast(`user ${name} added as ${role}`);
      setName('');
      setPassword('');
      load();
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };
  const changeRole = async (u: UserView, r: Role): Promise<void> => {
    try {
      await api('PATCH', `/api/v1/users/${enc(u.name)}`, { role: r });
      toast(`${u.name} is now ${r}`);
    } catch (err) {
      toast(errorText(err), 'error');
    }
    load();
  };
  const remove = async (u: UserView): Promise<void> => {
    const { ok } = await ask({ title: `Delete user ${u.name}?`, body: <p>Their sessions end at once.</p>, confirm: 'Delete', danger: true });
    if (!ok) return;
    try {
      await api('DELETE', `/api/v1/users/${enc(u.name)}`);
      toast(`${u.name} deleted`);
    } catch (err) {
      toast(errorText(err), 'error');
    }
    load();
  };
  const reset = async (u: UserView): Promise<void> => {
    const res = await ask({ title: `New password for ${u.name}`, body: <p>Their sessions end at once.</p>, confirm: 'Set password', password: { label: 'New password', minLength: 8 } });
    if (!res.ok) return;
    try {
      await api('PATCH', `/api/v1/users/${enc(u.name)}`, { password: res.text });
      toast(`password of ${u.name} changed; their sessions ended`);
    } catch (err) {
      toast(errorText(err), 'error');
    }
  };

  return (
    <>
      <section class="card" aria-labelledby="users-h">
        <h2 id="users-h">Users</h2>
        <div class="table-scroll">
          <table class="users">
            <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {users.map((u) => (
                <tr key={u.name}>
                  <th scope="row" data-label="Name">{u.name}{u.name === me && <span class="muted"> (you)</span>}</th>
                  <td data-label="Role">
                    <label class="sr-only" for={`role-${u.name}`}>Role of {u.name}</label>
                    <select id={`role-${u.name}`} value={u.role} onChange={(e) => void changeRole(u, (e.target as HTMLSelectElement).value as Role)}>
                      {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
                    </select>
                  </td>
                  <td data-label="Since">{fmtTime(u.createdAt)}</td>
                  <td data-label="Actions" class="actions compact">
                    <button class="btn btn-sm" onClick={() => void reset(u)}>Reset password…</button>
                    <button class="btn btn-sm btn-danger" onClick={() => void remove(u)} disabled={u.name === me}>Delete…</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card" aria-labelledby="add-h">
        <h2 id="add-h">Add a user</h2>
        <form class="form-row" onSubmit={(e) => void add(e)}>
          <label class="field"><span>Name</span><input required value={name} autoComplete="off" onInput={(e) => { setName((e.target as HTMLInputElement).value); }} /></label>
          <label class="field"><span>Password</span><input required type="password" minLength={8} autoComplete="new-password" value={password} onInput={(e) => { setPassword((e.target as HTMLInputElement).value); }} /></label>
          <label class="field"><span>Role</span>
            <select id="add-role" value={role} onChange={(e) => { setRole((e.target as HTMLSelectElement).value as Role); }}>{ROLES.map((r) => <option key={r} value={r}>{r}</option>)}</select>
          </label>
          <button class="btn btn-primary" type="submit">Add</button>
        </form>
        <p class="small muted">Viewers read; operators drain, weigh, put in maintenance and fail over; admins also apply configs and manage users.</p>
      </section>
    </>
  );
}
