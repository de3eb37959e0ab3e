// One reload path (SIGHUP, `lvsd reload`, the API): the file is read once and the text that runs is the text
// that was parsed; every changed setting is applied by a part of the reload or named as waiting for a
// restart; the IPVS sync daemon follows the VRRP role from the transitions themselves, one change at a time.
// A real Director with a fake engine, dataplane and sync daemon (test/support/director-fakes.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SyncDaemonConfig } from '../../daemon/dataplane/ipvs/backend.js';
import type { SyncRole } from '../../daemon/director/vrrp-supervisor.js';
import { ONE_OF_EACH, startFakeDirector } from '../support/director-fakes.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

test('a SIGHUP reload runs the text it read: a file changed while the reload runs is not what the hash names', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    const next = ONE_OF_EACH.replace('priority: 150', 'priority: 140');
    writeFileSync(t.file, next);
    t.engine().reconfigureMs = 150;
    const reloading = t.d.reloadFile('SIGHUP');
    while (t.engine().reconfigured.length === 0) await sleep(5);
    // Someone edits the file again while the VRRP part runs (the file was read before it).
    writeFileSync(t.file, ONE_OF_EACH.replace('priority: 150', 'priority: 120'));
    const r = await reloading;
    assert.equal(r.ok, true);
    assert.equal(r.hash, sha(next));
    const running = await t.d.runningConfig();
    assert.equal(running.text, next, 'the running text is the one parsed, not the file as it is now');
    assert.equal(t.d.snapshot().config.hash, sha(next));
    assert.equal(t.d.snapshot().vrrp[0]?.basePriority, 140);
  } finally {
    await t.cleanup();
  }
});

test('settings no reload part applies are named as taking effect at the next restart, everywhere an operator looks', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    const cases: [string, string, string, string[]?][] = [
      // api.port is derived from api.listen: both are named.
      ['api.listen', 'api: { listen: 127.0.0.1:9180,', 'api: { listen: 127.0.0.1:9999,', ['api.listen', 'api.port']],
      ['api.socket', 'socket: /tmp/none.sock', 'socket: /tmp/other.sock'],
      ['dataplane', 'dataplane: nftables', 'dataplane: userspace'],
      ['stateFile', 'dataplane: nftables', 'dataplane: nftables\nstateFile: /tmp/elsewhere.json'],
      ['nftables.table', 'dataplane: nftables', 'dataplane: nftables\nnftables: { table: other }'],
      ['nftables.masquerade', 'dataplane: nftables', 'dataplane: nftables\nnftables: { masquerade: false }'],
      ['userspace.idleTimeoutMs', 'dataplane: nftables', 'dataplane: nftables\nuserspace: { idleTimeout: 5s }'],
      ['userspace.proxyProtocol', 'dataplane: nftables', 'dataplane: nftables\nuserspace: { proxyProtocol: v2 }'],
    ];
    for (const [setting, from, to, named = [setting]] of cases) {
      const text = ONE_OF_EACH.replace(from, to);
      assert.notEqual(text, ONE_OF_EACH, setting);
      const diff = await t.d.diffConfig(text);
      assert.deepEqual(diff.restartNeeded, named, `diff of ${setting}`);
      const r = await t.d.applyConfig(text, 'alice');
      assert.equal(r.ok, true, setting);
      assert.deepEqual(r.restartNeeded, named, `apply of ${setting}`);
      assert.ok(r.changes.some((c) => c.name === setting && c.restart === true), `${setting} is marked in the change list`);
      const last = t.d.snapshot().config.lastReload;
      assert.deepEqual(last?.restartNeeded, named);
      assert.match(last.message, new RegExp(`; takes effect at the next restart: ${named.join(', ').replace(/\./g, '\\.')}$`));
      // Back to the start for the next case (also a reload that needs a restart, of the same setting).
      const back = await t.d.applyConfig(ONE_OF_EACH, 'alice');
      assert.deepEqual(back.restartNeeded, named);
    }
  } finally {
    await t.cleanup();
  }
});

test('IPVS removal, drain timeout and timeouts are applied by the dataplane part, not waiting for a restart', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    for (const ipvs of ['ipvs: { drainTimeout: 5s }', 'ipvs: { removal: immediate }', 'ipvs: { timeouts: { tcp: 900s } }']) {
      const before = t.retuned.length;
      const text = ONE_OF_EACH.replace('dataplane: nftables', `dataplane: nftables\n${ipvs}`);
      const r = await t.d.applyConfig(text, 'alice');
      assert.equal(r.ok, true, ipvs);
      assert.deepEqual(r.restartNeeded, [], ipvs);
      assert.equal(t.retuned.length, before + 1, `${ipvs}: the backend was retuned`);
      await t.d.applyConfig(ONE_OF_EACH, 'alice');
    }
    const last = t.retuned.at(-1);
    assert.equal(last?.ipvs.timeouts.tcpMs, undefined, 'the rollback to the first config retuned it back');
    assert.equal(t.retuned.at(-2)?.ipvs.timeouts.tcpMs, 900_000);
  } finally {
    await t.cleanup();
  }
});

/** A sync daemon that records its roles and notices when two changes overlap (the EEXIST race at start). */
function recordingSync() {
  const calls: { role: SyncRole; cfg?: SyncDaemonConfig }[] = [];
  let inFlight = 0;
  let overlapped = 0;
  return {
    calls,
    overlapped: () => overlapped,
    port: {
      async setSyncRole(role: SyncRole, cfg?: SyncDaemonConfig): Promise<void> {
        if (++inFlight > 1) overlapped++;
        await sleep(20);
        calls.push(cfg === undefined ? { role } : { role, cfg });
        inFlight--;
      },
    },
  };
}

const WITH_SYNC = ONE_OF_EACH.replace('dataplane: nftables', 'dataplane: nftables\nipvs: { syncDaemon: { interface: eth0, syncId: 51 } }');

test('the sync daemon follows the transition being announced, not the engine snapshot that lags it; changes never overlap', async () => {
  const sync = recordingSync();
  const t = await startFakeDirector(WITH_SYNC, { sync: sync.port });
  try {
    const engine = t.engine();
    engine.reportedState = 'BACKUP';
    // As the real engine does at start: INIT → BACKUP, announced while start() runs, then more right after.
    engine.transition('VI_1', 'INIT', 'BACKUP');
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['backup']);
    // BACKUP → MASTER: the engine's snapshot still says BACKUP when the transition arrives.
    engine.transition('VI_1', 'BACKUP', 'MASTER');
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['backup', 'master']);
    // keepalived's order: the sync daemon turns master once the new master's VIPs and first ARPs are out.
    engine.transition('VI_1', 'MASTER', 'BACKUP');
    await sleep(100);
    engine.transition('VI_1', 'BACKUP', 'MASTER', false);
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['backup', 'master', 'backup'], 'master before the VIPs were up');
    engine.announced('VI_1');
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['backup', 'master', 'backup', 'master']);
    // A quick flap: the changes queue behind each other, each taking the role that holds when its turn comes.
    engine.transition('VI_1', 'MASTER', 'BACKUP');
    engine.transition('VI_1', 'BACKUP', 'MASTER');
    engine.transition('VI_1', 'MASTER', 'BACKUP');
    await sleep(200);
    assert.equal(sync.calls.at(-1)?.role, 'backup');
    assert.equal(sync.overlapped(), 0, 'one role change at a time');
    assert.deepEqual(sync.calls[1]?.cfg, {
      interface: 'eth0', syncId: 51, mcastGroup: '224.0.0.81', mcastPort: 8848, mcastTtl: 1, syncMaxLen: 1472,
      tuning: { threshold: 3, thresholdPeriod: 0, refreshPeriodS: 60, persistMode: 0, ports: 1 },
    });
  } finally {
    await t.cleanup();
  }
});

test('a reload that changes ipvs.syncDaemon restarts the sync daemon with the new settings; removing it stops the daemon', async () => {
  const sync = recordingSync();
  const t = await startFakeDirector(WITH_SYNC, { sync: sync.port });
  try {
    t.engine().transition('VI_1', 'INIT', 'MASTER');
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => `${c.role} ${String(c.cfg?.syncId)}`), ['backup 51', 'master 51']);
    const r = await t.d.applyConfig(WITH_SYNC.replace('syncId: 51', 'syncId: 52'), 'alice');
    assert.equal(r.ok, true);
    assert.deepEqual(r.restartNeeded, []);
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => `${c.role} ${String(c.cfg?.syncId)}`), ['backup 51', 'master 51', 'master 52']);
    await t.d.applyConfig(ONE_OF_EACH, 'alice');
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['backup', 'master', 'master', 'none']);
  } finally {
    await t.cleanup();
  }
});

test('role: both runs both daemons whatever the VRRP role; a reload of the sync sysctls reaches the dataplane without a restart', async () => {
  const sync = recordingSync();
  const both = WITH_SYNC.replace('syncId: 51 }', 'syncId: 51, role: both }');
  const t = await startFakeDirector(both, { sync: sync.port });
  try {
    t.engine().transition('VI_1', 'INIT', 'BACKUP');
    await sleep(100);
    t.engine().transition('VI_1', 'BACKUP', 'MASTER');
    await sleep(100);
    t.engine().transition('VI_1', 'MASTER', 'BACKUP');
    await sleep(100);
    // One call at start; transitions change nothing, since both daemons already run.
    assert.deepEqual(sync.calls.map((c) => c.role), ['both']);
    const r = await t.d.applyConfig(both.replace('role: both }', 'role: both, refreshPeriod: 10s, ports: 2, persistMode: templates }'), 'alice');
    assert.equal(r.ok, true);
    assert.deepEqual(r.restartNeeded, []);
    await sleep(100);
    assert.deepEqual(sync.calls.map((c) => c.role), ['both', 'both']);
    assert.deepEqual(sync.calls[1]?.cfg?.tuning, { threshold: 3, thresholdPeriod: 0, refreshPeriodS: 10, persistMode: 1, ports: 2 });
    // Back to following VRRP: the backup's role again.
    await t.d.applyConfig(WITH_SYNC, 'alice');
    await sleep(100);
    assert.equal(sync.calls.at(-1)?.role, 'backup');
  } finally {
    await t.cleanup();
  }
});

test('two applies at once: the second waits for the first, and the file on disk always holds a config that ran', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    t.engine().reconfigureMs = 100;
    const a = ONE_OF_EACH.replace('priority: 150', 'priority: 140');
    const b = ONE_OF_EACH.replace('priority: 150', 'priority: 130');
    const first = t.d.applyConfig(a, 'alice', { expectedHash: sha(ONE_OF_EACH) });
    const second = t.d.applyConfig(b, 'bob', { expectedHash: sha(ONE_OF_EACH) });
    assert.equal((await first).ok, true);
    // Bob's expectation was the config Alice's apply replaced: refused, nothing changed.
    await assert.rejects(second, /the running config changed since you loaded it/);
    assert.equal(readFileSync(t.file, 'utf8'), a);
    assert.equal((await t.d.runningConfig()).text, a);
  } finally {
    await t.cleanup();
  }
});

test('a reload to "nothing" (a truncated file: no VRRP instance, no virtual server) is refused unless asked for explicitly', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    const nothing = 'node: { name: d1 }\n';
    writeFileSync(t.file, nothing);
    const r = await t.d.reloadFile('SIGHUP');
    assert.equal(r.ok, false);
    assert.match(r.errors[0]?.message ?? '', /has no VRRP instance and no virtual server, while the running config has 1 VRRP instance and 1 virtual server/);
    assert.equal((await t.d.runningConfig()).text, ONE_OF_EACH, 'the running config stays');
    assert.match(t.d.snapshot().config.lastReload?.message ?? '', /^refused: .* no VRRP instance and no virtual server/);
    assert.equal(t.engine().stopped, false, 'VRRP kept running');
    writeFileSync(t.file, ONE_OF_EACH);
    const api = await t.d.applyConfig(nothing, 'alice');
    assert.equal(api.ok, false);
    assert.equal(readFileSync(t.file, 'utf8'), ONE_OF_EACH, 'an apply refused is never written');
    writeFileSync(t.file, nothing);
    const asked = await t.d.reloadFile('alice', { allowEmpty: true });
    assert.equal(asked.ok, true);
    assert.equal(t.d.snapshot().virtualServices.length, 0);
  } finally {
    await t.cleanup();
  }
});
