// The VRRP engine process (engine-process.ts, forked for real, no instances so no root needed) answers a
// snapshot request that reaches it before its runtime is up. The facade refreshes once a second from the
// moment it forks the engine, and coalesces its requests: one dropped request left every later snapshot
// (`lvsd status`, the netns tests' snapshots) waiting for good when the engine was slow to load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { forkEngine } from '../../daemon/vrrp/channel.js';
import type { FromWorker } from '../../daemon/vrrp/protocol.js';

test('engine process: a snapshot asked before `start` is answered once the runtime is up', { timeout: 30_000 }, async () => {
  const engine = forkEngine();
  try {
    const seen: string[] = [];
    const answered = new Promise<Extract<FromWorker, { type: 'snapshot' }>>((resolve, reject) => {
      engine.on('message', (m) => {
        seen.push(m.type);
        if (m.type === 'snapshot' && m.id === 7) resolve(m);
        if (m.type === 'fatal') reject(new Error(m.message));
      });
      engine.once('exit', (how) => { reject(new Error(`engine exited (${how}); saw ${seen.join(' ')}`)); });
    });
    engine.post({ type: 'snapshot', id: 7 });
    engine.post({ type: 'start', options: { instances: [] } });
    const timeout = new Promise<never>((_r, reject) => setTimeout(() => { reject(new Error(`no answer in 15 s; saw ${seen.join(' ')}`)); }, 15_000).unref());
    const m = await Promise.race([answered, timeout]);
    assert.deepEqual(m.snapshot.instances, []);
    assert.deepEqual(seen.filter((t) => t !== 'log'), ['ready', 'snapshot'], 'answered after the runtime is up');
  } finally {
    await engine.kill();
  }
});
