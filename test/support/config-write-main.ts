// Run by test/netns/config-write.test.ts as another user or in a mount namespace: tries to write a config
// file the way an API apply does (ConfigFile.write) and prints one JSON line with what happened.
import { ConfigFile } from '../../daemon/director/config-file.js';
import { DirectorRejection } from '../../daemon/director/port.js';
import { loadConfig } from './director-fakes.js';

const [path, text] = [process.argv[2] ?? '', process.argv[3] ?? ''];
const file = new ConfigFile({ config: { ...loadConfig('{}'), source: path }, text: '' });
try {
  await file.write(text);
  console.log(JSON.stringify({ ok: true }));
} catch (e) {
  const status = e instanceof DirectorRejection ? e.status : null;
  console.log(JSON.stringify({ ok: false, status, message: e instanceof Error ? e.message : String(e) }));
}
