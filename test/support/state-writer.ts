// Child process for the kill-safety test: opens the store and changes overrides as fast as it can
// until killed. Prints "ready" once the first write landed.
import { openStore } from '../../daemon/state/store.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: state-writer FILE');
const { store } = await openStore(file);
let i = 0;
for (;;) {
  await store.setOverride({ service: 'tcp:10.0.0.1:80', realServer: `10.0.1.${i % 200}:80` }, { weight: i % 65536 }, 'writer');
  if (i === 0) process.stdout.write('ready\n');
  i++;
}
