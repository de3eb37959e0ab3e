// Child process for the state file owner test: opens the store as whichever user it runs as and prints
// one JSON line — {"ok":true,"users":[…]} or {"ok":false,"name":…,"message":…}.
import { openStore } from '../../daemon/state/store.js';

const [file, mode] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: open-state-main FILE [start-empty]');
try {
  const { store } = await openStore(file, { startEmpty: mode === 'start-empty' });
  process.stdout.write(JSON.stringify({ ok: true, users: store.users().map((u) => u.name) }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, name: (e as Error).name, message: (e as Error).message }) + '\n');
}
