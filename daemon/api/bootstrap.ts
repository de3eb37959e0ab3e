// First start without any admin: print a one-time token that creates the first admin in the panel
// (POST /api/v1/bootstrap). Never a default password. `lvsd user add NAME --role admin` is the other way.
import type { StateStore } from '../state/store.js';

/**
 * When no admin exists, issues a fresh one-time token (the previous one dies) and hands the lines to
 * `print` (lvsd's stderr/log). Returns the token, or null when an admin already exists.
 */
export async function announceBootstrapToken(store: StateStore, panelUrl: string, print: (line: string) => void): Promise<string | null> {
  const token = await store.issueBootstrapToken();
  if (token === null) return null;
  print('lvsd: no admin user exists yet. Create the first one either way:');
  print(`  - open ${panelUrl} and use this one-time bootstrap token: ${token}`);
  print('  - or on this host: lvsd user add NAME --role admin');
  return token;
}
