// The start and stop scripts' runner (daemon/cli/lifecycle-script.ts) on real processes: a failing script is
// logged and lvsd goes on; one that ignores the timeout's SIGTERM is killed with its whole process group 2 s
// later; a script whose user does not exist is not run. (The order against the daemon's own start and stop
// is measured against keepalived in test/netns/lifecycle-scripts.test.ts.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../daemon/log.js';
import { lifecycleBudgetMs, runLifecycleScript } from '../../daemon/cli/lifecycle-script.js';

const dir = mkdtempSync(join(tmpdir(), 'lvsd-lifecycle-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

function logger(): { log: ReturnType<typeof createLogger>; msgs: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger({ destination: stream, level: 'info' }), msgs: () => chunks.join('').trim().split('\n').map((l) => (JSON.parse(l) as { msg: string }).msg) };
}

function script(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const env = (log: ReturnType<typeof createLogger>) => ({ scriptUser: undefined, scriptSecurity: false, log });

test('a failing script: its status is logged, and the runner returns', async () => {
  const l = logger();
  const out = await runLifecycleScript('startup', { command: `${script('fail.sh', 'exit 3')} ignored-arg`, timeoutMs: 5000 }, env(l.log));
  assert.deepEqual(out, { exit: 3, signal: null, timedOut: false });
  assert.ok(l.msgs().includes('startup script failed, status 3; lvsd goes on'), l.msgs().join('\n'));
});

test('a script that ignores SIGTERM: its process group is killed 2 s after the timeout', async () => {
  const l = logger();
  const child = join(dir, 'child.pid');
  const p = script('stubborn.sh', `trap '' TERM\nsleep 30 &\necho $! > ${child}\nwhile :; do sleep 0.1; done`);
  const t0 = Date.now();
  const out = await runLifecycleScript('shutdown', { command: p, timeoutMs: 300 }, env(l.log));
  const took = Date.now() - t0;
  assert.deepEqual(out, { exit: null, signal: 'SIGKILL', timedOut: true });
  assert.ok(took >= 2300, `${took} ms: SIGTERM at 300 ms, SIGKILL 2 s later`);
  assert.ok(l.msgs().some((m) => m.startsWith('shutdown script timed out after 300 ms')), l.msgs().join('\n'));
  // The script's own child went with the group.
  const pid = Number(readFileSync(child, 'utf8'));
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(!existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')), `sleep ${pid} is gone`);
  assert.equal(lifecycleBudgetMs({ command: p, timeoutMs: 300 }), 2300);
});

test('a script whose user does not exist is not run', async () => {
  const l = logger();
  const marker = join(dir, 'ran');
  const out = await runLifecycleScript('startup', { command: script('marker.sh', `touch ${marker}`), timeoutMs: 1000, user: 'no-such-user-lvsd' }, env(l.log));
  assert.deepEqual(out, { notRun: 'script user no-such-user-lvsd does not exist' });
  assert.equal(existsSync(marker), false);
});
