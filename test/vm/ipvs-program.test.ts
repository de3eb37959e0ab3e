// Real IPVS in a QEMU guest, one boot: every method and scheduler programmed through lvsd and read back
// through lvsd and ipvsadm, typed errors, ownership/adoption/drift, sync daemon, timeouts, and the
// keepalived differential. The checks run in the guest (test/vm/guest/program.ts); each is a subtest here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { distPath, runInGuest } from './harness.js';
import { parseReport } from './guest/checks.js';
import { requireRoot } from '../support/prereq.js';

test('IPVS programming on a real kernel (QEMU guest)', { timeout: 300_000 }, async (t) => {
  requireRoot();
  const r = await runInGuest({ command: `node ${distPath('test/vm/guest/program.js')}`, timeoutMs: 240_000 });
  t.diagnostic(`guest run: ${r.durationMs} ms, status ${r.status}`);
  if (r.status !== 0 && !r.stdout.includes('@@LVSD-VM-REPORT@@')) {
    assert.fail(`guest failed before reporting (status ${r.status}, timed out: ${r.timedOut})\n${r.stderr.slice(-3000)}\n${r.console.slice(-2000)}`);
  }
  for (const c of parseReport(r.stdout)) {
    await t.test(c.name, (st) => {
      st.diagnostic(`${c.ms} ms in the guest${c.ok && c.detail !== undefined ? `: ${c.detail.split('\n').slice(0, 3).join(' | ')}` : ''}`);
      assert.ok(c.ok, c.detail);
    });
  }
  assert.equal(r.status, 0, r.stderr.slice(-3000));
});
