// Reload as a transaction: the pure runner (order, rollback, report) with recording fakes, then the real
// Director with a fake VRRP engine and a fake dataplane that refuses DR like the nftables backend does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { diffConfig } from '../../daemon/config/diff.js';
import { describeOutcome, runReload } from '../../daemon/director/reload-transaction.js';
import { partsToReload, type ReloadPart } from '../../daemon/director/reload-parts.js';
import { statusLine } from '../../daemon/director/status-line.js';
import { loadConfig, ONE_OF_EACH, startFakeDirector } from '../support/director-fakes.js';

// ---- the pure runner -----------------------------------------------------------------------------

function recorder(failOn: { part: ReloadPart; config: string }[] = []) {
  const calls: string[] = [];
  const actions = {
    adopt: (c: string) => {
      calls.push(`adopt ${c}`);
    },
    apply: (part: ReloadPart, c: string) => {
      calls.push(`${part} ${c}`);
      if (failOn.some((f) => f.part === part && f.config === c)) return Promise.reject(new Error(`${part} says no to ${c}`));
      return Promise.resolve();
    },
  };
  return { calls, actions };
}

test('every part applies in order and the outcome lists them', async () => {
  const r = recorder();
  const out = await runReload(['health', 'vrrp', 'dataplane'], 'old', 'new', r.actions);
  assert.deepEqual(out, { ok: true, applied: ['health', 'vrrp', 'dataplane'] });
  assert.deepEqual(r.calls, ['adopt new', 'health new', 'vrrp new', 'dataplane new']);
  assert.equal(describeOutcome(out, ['~ instance VI_1: priority']), '~ instance VI_1: priority');
  assert.equal(describeOutcome(out, []), 'no changes');
});

test('a failing part: the old config is adopted again and re-applied to every part, newest first, the failed one included', async () => {
  const r = recorder([{ part: 'dataplane', config: 'new' }]);
  const out = await runReload(['health', 'vrrp', 'dataplane'], 'old', 'new', r.actions);
  assert.deepEqual(r.calls, ['adopt new', 'health new', 'vrrp new', 'dataplane new', 'adopt old', 'dataplane old', 'vrrp old', 'health old']);
  assert.deepEqual(out, {
    ok: false,
    applied: ['health', 'vrrp'],
    failed: { part: 'dataplane', error: 'dataplane says no to new' },
    rolledBack: ['dataplane', 'vrrp', 'health'],
    rollbackFailures: [],
  });
  assert.equal(describeOutcome(out, []), 'reload failed at dataplane: dataplane says no to new; rolled back dataplane, vrrp, health; running the previous config');
});

test('parts after the failed one never get the new config, but are put back on the old one (they may have moved meanwhile)', async () => {
  const r = recorder([{ part: 'vrrp', config: 'new' }]);
  const out = await runReload(['health', 'vrrp', 'dataplane'], 'old', 'new', r.actions);
  assert.deepEqual(r.calls, ['adopt new', 'health new', 'vrrp new', 'adopt old', 'dataplane old', 'vrrp old', 'health old']);
  assert.ok(!out.ok);
  assert.deepEqual(out.applied, ['health']);
  assert.deepEqual(out.rolledBack, ['dataplane', 'vrrp', 'health']);
});

test('a rollback that fails too is reported part by part, and the other parts still go back', async () => {
  const r = recorder([{ part: 'dataplane', config: 'new' }, { part: 'vrrp', config: 'old' }]);
  const out = await runReload(['health', 'vrrp', 'dataplane'], 'old', 'new', r.actions);
  assert.ok(!out.ok);
  assert.deepEqual(out.rolledBack, ['dataplane', 'health']);
  assert.deepEqual(out.rollbackFailures, [{ part: 'vrrp', error: 'vrrp says no to old' }]);
  assert.match(describeOutcome(out, []), /; rollback FAILED for vrrp \(vrrp says no to old\): those parts may hold a mix of both configs/);
});

const BASE = ONE_OF_EACH;
const load = loadConfig;

test('partsToReload: the parts a difference touches, in apply order', () => {
  const base = load(BASE);
  assert.deepEqual(partsToReload(diffConfig(base, base)), []);
  assert.deepEqual(partsToReload(diffConfig(base, load(BASE.replace('priority: 150', 'priority: 140')))), ['vrrp']);
  assert.deepEqual(partsToReload(diffConfig(base, load(BASE.replace('port: 80 }]', 'port: 80, weight: 3 }]')))), ['health', 'dataplane']);
  assert.deepEqual(partsToReload(diffConfig(base, load(BASE.replace('priority: 150', 'priority: 140').replace('method: nat', 'method: dr')))), ['health', 'vrrp', 'dataplane']);
});

// ---- the Director, with a fake engine and a fake dataplane ---------------------------------------

const director = () => startFakeDirector(BASE);
/** What an operator does: edit the file, then SIGHUP. */
const sighup = (t: Awaited<ReturnType<typeof director>>, text: string) => {
  writeFileSync(t.file, text);
  return t.d.reloadFile('SIGHUP');
};

test('director: a reload the dataplane refuses puts VRRP and the table back, keeps the old config, and says why', async () => {
  const t = await director();
  try {
    const bad = BASE.replace('priority: 150', 'priority: 140').replace('method: nat', 'method: dr');
    const out = await sighup(t, bad);
    assert.equal(out.ok, false);
    assert.equal(out.failure?.part, 'dataplane');
    // VRRP went to 140 and back to 150.
    assert.deepEqual(t.engine().reconfigured.map((o) => o.instances[0]?.priority), [140, 150]);
    // The table was never handed the DR service; the rollback re-applied the NAT one.
    assert.ok(t.dataplane.applied.every((d) => d.services.every((s) => s.realServers.every((r) => r.method === 'nat'))));
    const snap = t.d.snapshot();
    assert.equal(snap.vrrp[0]?.basePriority, 150);
    assert.equal(snap.virtualServices[0]?.method, 'nat');
    assert.equal(snap.config.reloads, 0);
    assert.equal(snap.config.lastReload?.ok, false);
    assert.equal(snap.config.lastReload.by, 'SIGHUP');
    assert.match(snap.config.lastReload.message, /^reload failed at dataplane: nftables: tcp:192\.0\.2\.10:80 → 10\.0\.1\.11:80: DR forwarding needs the IPVS dataplane; rolled back dataplane, vrrp, health; running the previous config$/);
    assert.equal((await t.d.runningConfig()).text, BASE);
    assert.equal((await t.d.runningConfig()).canRollback, false, 'a failed reload is not a config to roll back from');
    assert.match(statusLine(snap), /· last reload FAILED$/);

    // The next good reload is diffed against the config really running.
    const good = BASE.replace('priority: 150', 'priority: 130');
    assert.equal((await sighup(t, good)).ok, true);
    assert.equal(t.d.snapshot().config.lastReload?.message, '~ instance VI_1: priority');
    assert.equal(t.d.snapshot().config.reloads, 1);
  } finally {
    await t.cleanup();
  }
});

test('director: an API apply that fails is rolled back, answers with the failure, and puts the file back', async () => {
  const t = await director();
  try {
    const bad = BASE.replace('priority: 150', 'priority: 140').replace('method: nat', 'method: dr');
    const r = await t.d.applyConfig(bad, 'alice');
    assert.equal(r.ok, false);
    assert.equal(r.failure?.part, 'dataplane');
    assert.deepEqual(r.failure.rolledBack, ['dataplane', 'vrrp', 'health']);
    assert.deepEqual(r.failure.rollbackFailures, []);
    assert.match(r.errors[0]?.message ?? '', /^reload failed at dataplane: /);
    assert.equal(readFileSync(t.file, 'utf8'), BASE, 'the file says what runs');
    assert.equal(t.d.snapshot().config.lastReload?.by, 'alice');
  } finally {
    await t.cleanup();
  }
});

test('director: a VRRP reconfigure that throws rolls VRRP back; the dataplane never gets the new table', async () => {
  const t = await director();
  try {
    const next = BASE.replace('priority: 150', 'priority: 140').replace('port: 80 }]', 'port: 80, weight: 5 }]');
    const appliesBefore = t.dataplane.applied.length;
    t.engine().failNext = true;
    const out = await sighup(t, next);
    assert.ok(!out.ok);
    assert.deepEqual({ part: out.failure?.part, error: out.failure?.error }, { part: 'vrrp', error: 'VRRP reconfigure failed: interface eth9 does not exist' });
    assert.deepEqual(t.engine().reconfigured.map((o) => o.instances[0]?.priority), [140, 150]);
    // The dataplane never saw weight 5: it was only handed the running table again.
    assert.ok(t.dataplane.applied.slice(appliesBefore).every((d) => d.services.every((sv) => sv.realServers.every((rs) => rs.weight === 1))));
  } finally {
    await t.cleanup();
  }
});

test('director: a refused SIGHUP is recorded in lastReload; liveness names a VRRP engine that does not answer', async () => {
  const t = await director();
  try {
    const r = await sighup(t, BASE.replace('virtualRouterId: 51', 'virtualRouterId: 0'));
    assert.equal(r.ok, false);
    const last = t.d.snapshot().config.lastReload;
    assert.equal(last?.ok, false);
    assert.equal(last.by, 'SIGHUP');
    assert.match(last.message, new RegExp(`^refused: config is invalid \\(1 error\\): ${t.file.replace(/[.]/g, '\\.')}:\\d+:\\d+: vrrp\\.instances\\[0\\]\\.virtualRouterId: `));
    assert.equal((await t.d.runningConfig()).text, BASE, 'the running config stays');
    assert.equal(await t.d.liveness(50), null);
    t.engine().hang = true;
    assert.equal(await t.d.liveness(50), 'the VRRP engine process did not answer within 50 ms');
    t.engine().hang = false;
    t.engine().emit('error', new Error('VRRP engine process exited (code 1)'));
    assert.equal(await t.d.liveness(50), 'VRRP engine failed: VRRP engine process exited (code 1)');
  } finally {
    await t.cleanup();
  }
});
