// `lvsd user add` for the CLI. While lvsd runs, its store lives in the daemon's memory: writing the file
// behind its back would be overwritten by the daemon's next write. So: through the local admin socket when
// lvsd is running, straight into the state file when it is not.
import { localRequest, LocalApiError } from './local-client.js';
import { addUser, openStore, type Role } from '../state/store.js';

export interface AddUserResult {
  name: string;
  role: Role;
  /** 'socket' = the running daemon added it; 'file' = written to the state file directly. */
  via: 'socket' | 'file';
}

export async function addUserLocally(opts: { socket: string | null; stateFile: string; name: string; password: string; role: Role }): Promise<AddUserResult> {
  if (opts.socket !== null) {
    try {
      await localRequest(opts.socket, 'POST', '/api/v1/users', { name: opts.name, password: opts.password, role: opts.role });
      return { name: opts.name, role: opts.role, via: 'socket' };
    } catch (e) {
      // status 0 = nothing listens: lvsd is not running; any answer from lvsd is final
      if (!(e instanceof LocalApiError) || e.status !== 0) throw e;
    }
  }
  const { store } = await openStore(opts.stateFile);
  await addUser(store, opts.name, opts.password, opts.role);
  return { name: opts.name, role: opts.role, via: 'file' };
}
