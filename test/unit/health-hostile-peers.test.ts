// Real servers that misbehave on purpose, on loopback: what a hostile or broken peer can make a health
// check do. Each check must end with a verdict naming what went wrong, within its timeout, with bounded
// memory and without blocking the event loop.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildProbe } from '../../daemon/health/checkers/index.js';
import { HttpResponseReader } from '../../daemon/health/checkers/http-response.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import { LoopbackServers, runProbe } from '../support/loopback-servers.js';

const servers = new LoopbackServers();
after(() => {
  servers.closeAll();
});

function opts(o: Partial<CheckOptions> & Pick<CheckOptions, 'type'>): CheckOptions {
  return { ...CHECK_DEFAULTS, timeoutMs: 1500, ...o };
}

test('agent: a line followed at once by more bytes than a line may hold is read, not refused as too long', async () => {
  const port = await servers.listen((s) => {
    s.write(`50%\n${'x'.repeat(4096)}`);
  });
  const o = opts({ type: 'agent' });
  const v = await runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
  assert.deepEqual(v, { ok: true, reason: 'ok', detail: 'agent: 50%', weightPercent: 50 });
});

test('agent: an endless line fails the check naming the agent', async () => {
  const port = await servers.listen((s) => {
    s.write('x'.repeat(4096));
  });
  const o = opts({ type: 'agent' });
  const v = await runProbe(buildProbe('web/127.0.0.1', '127.0.0.1', port, o), o.timeoutMs);
  assert.deepEqual(v, { ok: false, reason: 'protocol', detail: `agent 127.0.0.1:${port}: answer longer than 514 bytes` });
});
