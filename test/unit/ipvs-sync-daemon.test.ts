// The connection sync daemon: which kernel daemons a role asks for (follow-vrrp and both), what changes to get
// there, the net.ipv4.vs.sync_* sysctls written before a daemon starts, the config's rules for them and the
// keepalived import of lvs_sync_daemon. The real kernel carrying connections across a failover: test/vm/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IpvsClient } from '../../daemon/ipvs/client.js';
import { daemonPayload, decodeDaemon, type IpvsDaemon } from '../../daemon/ipvs/codec.js';
import { Cmd, CmdAttr, DaemonAttr, SyncState } from '../../daemon/ipvs/constants.js';
import { Attrs } from '../../daemon/net/nlattr.js';
import { NetlinkErrno, type IpvsRequest, type IpvsTransport } from '../../daemon/ipvs/transport.js';
import { createIpvsDataplane } from '../../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../../daemon/dataplane/ipvs/ownership.js';
import { planSync, syncSysctls, wantedDaemons, type SyncDaemonConfig } from '../../daemon/dataplane/ipvs/sync.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { syncDaemonConfig } from '../../daemon/director/vrrp-supervisor.js';
import { importText } from './keepalived-memfs.js';

const EEXIST = 17, ESRCH = 3;
const CFG: SyncDaemonConfig = { interface: 'eth1', syncId: 51 };

test('follow-vrrp asks for one daemon with the configured id; both asks for the master with it and the backup with id 0', () => {
  assert.deepEqual(wantedDaemons('none', undefined), []);
  assert.deepEqual(wantedDaemons('master', CFG).map((d) => `${d.role} ${d.syncId}`), ['master 51']);
  assert.deepEqual(wantedDaemons('backup', CFG).map((d) => `${d.role} ${d.syncId}`), ['backup 51']);
  assert.deepEqual(wantedDaemons('both', CFG).map((d) => `${d.role} ${d.syncId}`), ['master 51', 'backup 0']);
  assert.deepEqual(wantedDaemons('both', CFG)[0], { role: 'master', ifname: 'eth1', syncId: 51, mcastGroup: '224.0.0.81', mcastPort: 8848, mcastTtl: 1 });
  assert.throws(() => wantedDaemons('both', undefined), /needs the sync daemon configuration/);
});

test('planSync leaves an identical daemon alone, replaces a different one, stops what is no longer wanted', () => {
  const [master, backup0] = wantedDaemons('both', CFG) as [IpvsDaemon, IpvsDaemon];
  const backup51 = wantedDaemons('backup', CFG)[0] as IpvsDaemon;
  assert.deepEqual(planSync([], [master, backup0]), { stop: [], start: [master, backup0] });
  assert.deepEqual(planSync([master, backup0], [master, backup0]), { stop: [], start: [] });
  // both → follow-vrrp on a backup: the master goes, the backup's id changes from 0 to 51.
  assert.deepEqual(planSync([master, backup0], [backup51]), { stop: ['master', 'backup'], start: [backup51] });
  // follow-vrrp backup → both: the backup daemon (id 51) is replaced by id 0, the master added.
  assert.deepEqual(planSync([backup51], [master, backup0]), { stop: ['backup'], start: [master, backup0] });
  assert.deepEqual(planSync([master], []), { stop: ['master'], start: [] });
  // An older kernel that reports no multicast attributes still counts as the same daemon.
  assert.deepEqual(planSync([{ role: 'master', ifname: 'eth1', syncId: 51 }], [master]), { stop: [], start: [] });
  // sync_ports changed: every wanted daemon restarts (the kernel reads it when a daemon starts).
  assert.deepEqual(planSync([master, backup0], [master, backup0], true), { stop: ['master', 'backup'], start: [master, backup0] });
});

test('the sysctls are written as the kernel reads them', () => {
  assert.deepEqual(syncSysctls({ threshold: 3, thresholdPeriod: 0, refreshPeriodS: 60, persistMode: 1, ports: 4 }), [
    ['sync_threshold', '3 0'],
    ['sync_refresh_period', '60'],
    ['sync_persist_mode', '1'],
    ['sync_ports', '4'],
  ]);
});

/** The kernel's two sync daemon slots (one per state), over the real codec; EEXIST on a second start as the kernel does. */
class DaemonKernel implements IpvsTransport {
  readonly slots = new Map<'master' | 'backup', IpvsDaemon>();
  readonly log: string[] = [];
  request(cmd: number, payload: Buffer, dump: boolean): Promise<Buffer[]> {
    return new Promise((resolve) => {
      resolve(this.handle(cmd, payload, dump));
    });
  }
  async requestMany(reqs: readonly IpvsRequest[]): Promise<(Buffer[] | NetlinkErrno)[]> {
    return Promise.all(reqs.map((r) => this.request(r.cmd, r.payload, false).catch((e: unknown) => e as NetlinkErrno)));
  }
  close(): void {
    /* nothing */
  }
  private handle(cmd: number, payload: Buffer, dump: boolean): Buffer[] {
    if (cmd === Cmd.GET_DAEMON && dump) return [...this.slots.values()].map(daemonPayload);
    const nestBuf = Attrs.parse(payload, 'cmd').raw(CmdAttr.DAEMON) ?? assert.fail('no daemon nest');
    if (cmd === Cmd.NEW_DAEMON) {
      const d = decodeDaemon(nestBuf);
      if (this.slots.has(d.role)) throw new NetlinkErrno(EEXIST);
      this.slots.set(d.role, d);
      this.log.push(`start ${d.role} ${d.syncId}`);
      return [];
    }
    if (cmd === Cmd.DEL_DAEMON) {
      const role = Attrs.parse(nestBuf, 'daemon').u32(DaemonAttr.STATE, 'daemon') === SyncState.MASTER ? 'master' : 'backup';
      if (!this.slots.delete(role)) throw new NetlinkErrno(ESRCH);
      this.log.push(`stop ${role}`);
      return [];
    }
    throw new Error(`daemon kernel: command ${cmd} not modelled`);
  }
}

/** A stand-in for /proc/sys/net/ipv4/vs with the kernel's defaults (as a 6.1 kernel prints them: tab-separated). */
function sysctlDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-vs-sysctl-'));
  writeFileSync(join(dir, 'sync_threshold'), '3\t50\n');
  writeFileSync(join(dir, 'sync_refresh_period'), '0\n');
  writeFileSync(join(dir, 'sync_persist_mode'), '0\n');
  writeFileSync(join(dir, 'sync_ports'), '1\n');
  return dir;
}

test('the backend writes the sysctls before starting, runs both daemons at once, and restarts them when sync_ports changes', async () => {
  const k = new DaemonKernel();
  const dir = sysctlDir();
  try {
    const dp = await createIpvsDataplane({ client: new IpvsClient(k), ownership: memoryOwnership(), resyncIntervalMs: 0, sysctlDir: dir });
    const tuning = { threshold: 3, thresholdPeriod: 0, refreshPeriodS: 60, persistMode: 0 as const, ports: 1 };
    await dp.setSyncRole('both', { ...CFG, tuning });
    assert.deepEqual(k.log, ['start master 51', 'start backup 0']);
    assert.equal(readFileSync(join(dir, 'sync_threshold'), 'utf8'), '3 0\n');
    assert.equal(readFileSync(join(dir, 'sync_refresh_period'), 'utf8'), '60\n');
    assert.deepEqual((await dp.syncDaemons()).map((d) => `${d.role} ${d.syncId}`), ['master 51', 'backup 0']);
    // The same again: nothing moves (the kernel would answer EEXIST to a second start).
    await dp.setSyncRole('both', { ...CFG, tuning });
    assert.equal(k.log.length, 2);
    // sync_ports 2: the daemons restart to open their second port.
    await dp.setSyncRole('both', { ...CFG, tuning: { ...tuning, ports: 2 } });
    assert.deepEqual(k.log.slice(2), ['stop master', 'stop backup', 'start master 51', 'start backup 0']);
    assert.equal(readFileSync(join(dir, 'sync_ports'), 'utf8'), '2\n');
    // A refresh period change alone is live in the kernel: no restart.
    await dp.setSyncRole('both', { ...CFG, tuning: { ...tuning, ports: 2, refreshPeriodS: 10 } });
    assert.equal(k.log.length, 6);
    // Follow VRRP again, as a backup.
    await dp.setSyncRole('backup', { ...CFG, tuning: { ...tuning, ports: 2 } });
    assert.deepEqual(k.log.slice(6), ['stop master', 'stop backup', 'start backup 51']);
    await dp.setSyncRole('none');
    assert.deepEqual(k.log.slice(9), ['stop backup']);
    await dp.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a sysctl the kernel refuses fails the role change with its name, before any daemon starts', async () => {
  const k = new DaemonKernel();
  const dir = sysctlDir();
  try {
    rmSync(join(dir, 'sync_persist_mode'));
    const dp = await createIpvsDataplane({ client: new IpvsClient(k), ownership: memoryOwnership(), resyncIntervalMs: 0, sysctlDir: dir });
    await assert.rejects(dp.setSyncRole('master', { ...CFG, tuning: { threshold: 3, thresholdPeriod: 0, refreshPeriodS: 60, persistMode: 1, ports: 1 } }), /sync_persist_mode/);
    assert.deepEqual(k.log, []);
    await dp.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const SYNC = (extra: string): string => `ipvs:\n  syncDaemon:\n    interface: eth1\n${extra}`;

test('ipvs.syncDaemon: defaults, every setting normalised, and the dataplane gets the kernel units', () => {
  const r = loadConfigText(SYNC('    role: both\n    threshold: 2\n    thresholdPeriod: 20\n    refreshPeriod: 2m\n    persistMode: templates\n    ports: 4\n'), 'lvsd.yaml');
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  const sd = r.config.ipvs.syncDaemon ?? assert.fail();
  assert.deepEqual({ role: sd.role, threshold: sd.threshold, thresholdPeriod: sd.thresholdPeriod, refreshPeriodMs: sd.refreshPeriodMs, persistMode: sd.persistMode, ports: sd.ports },
    { role: 'both', threshold: 2, thresholdPeriod: 20, refreshPeriodMs: 120_000, persistMode: 'templates', ports: 4 });
  assert.deepEqual(syncDaemonConfig(sd).tuning, { threshold: 2, thresholdPeriod: 20, refreshPeriodS: 120, persistMode: 1, ports: 4 });
});

test('sync sysctl values the kernel would refuse are errors naming file, line and field', () => {
  const errs = (extra: string): string[] => {
    const r = loadConfigText(SYNC(extra), 'lvsd.yaml');
    return r.ok ? [] : r.errors.map(formatError);
  };
  assert.deepEqual(errs('    threshold: 50\n    thresholdPeriod: 50\n'), ['lvsd.yaml:4:16: ipvs.syncDaemon.threshold: threshold 50 must be less than thresholdPeriod 50 (or thresholdPeriod 0); the kernel refuses sync_threshold "50 50"']);
  assert.deepEqual(errs('    thresholdPeriod: 2\n'), ['lvsd.yaml:4:22: ipvs.syncDaemon.thresholdPeriod: threshold 3 must be less than thresholdPeriod 2 (or thresholdPeriod 0); the kernel refuses sync_threshold "3 2"']);
  assert.deepEqual(errs('    ports: 3\n'), ['lvsd.yaml:4:12: ipvs.syncDaemon.ports: ports must be a power of two (1, 2, 4 … 64), got 3; the kernel refuses sync_ports 3']);
  assert.deepEqual(errs('    refreshPeriod: 1500ms\n'), ['lvsd.yaml:4:20: ipvs.syncDaemon.refreshPeriod: refreshPeriod must be whole seconds (the kernel counts seconds), got 1500ms']);
  assert.equal(errs('    role: master\n').length, 1);
  assert.deepEqual(errs('    threshold: 3\n    thresholdPeriod: 0\n    ports: 64\n'), []);
});

test('keepalived lvs_sync_daemon: every argument; with inst it follows VRRP, without it both daemons run', () => {
  const vi = 'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n';
  const withInst = importText(`global_defs {\n lvs_sync_daemon eth1 inst VI_1 id 7 maxlen 1400 port 8850 ttl 2 group 239.1.2.3\n}\n${vi}`);
  assert.deepEqual(withInst.config.ipvs?.syncDaemon, { interface: 'eth1', syncId: 7, maxLen: 1400, port: 8850, ttl: 2, mcastGroup: '239.1.2.3' });
  assert.deepEqual(withInst.diagnostics, []);
  const without = importText(`global_defs {\n lvs_sync_daemon eth1 id 7\n}\n${vi}`);
  assert.deepEqual(without.config.ipvs?.syncDaemon, { interface: 'eth1', syncId: 7, role: 'both' });
  // The old positional form: interface, instance, sync id; the id defaults to the instance's VRID.
  const positional = importText(`global_defs {\n lvs_sync_daemon eth1 VI_1\n}\n${vi}`);
  assert.deepEqual(positional.config.ipvs?.syncDaemon, { interface: 'eth1', syncId: 51 });
});

test('the backend sets expire_nodest_conn and expire_quiescent_template to 1 when it starts; one it cannot write is a warning naming it', async () => {
  const dir = sysctlDir();
  try {
    writeFileSync(join(dir, 'expire_nodest_conn'), '0\n');
    writeFileSync(join(dir, 'expire_quiescent_template'), '0\n');
    const logged: string[] = [];
    const logger = { info: (o: object, m: string) => logged.push(`info ${m} ${JSON.stringify(o)}`), warn: (o: object, m: string) => logged.push(`warn ${m}`), error: () => undefined };
    const dp = await createIpvsDataplane({ client: new IpvsClient(new DaemonKernel()), ownership: memoryOwnership(), resyncIntervalMs: 0, sysctlDir: dir, logger });
    assert.equal(readFileSync(join(dir, 'expire_nodest_conn'), 'utf8'), '1\n');
    assert.equal(readFileSync(join(dir, 'expire_quiescent_template'), 'utf8'), '1\n');
    assert.equal(logged.filter((l) => l.startsWith('info removal sysctl set')).length, 2, logged.join('\n'));
    await dp.close();
    // Already 1: nothing written, nothing logged. Then one missing (no such sysctl): a warning, and the backend starts.
    rmSync(join(dir, 'expire_quiescent_template'));
    logged.length = 0;
    const dp2 = await createIpvsDataplane({ client: new IpvsClient(new DaemonKernel()), ownership: memoryOwnership(), resyncIntervalMs: 0, sysctlDir: dir, logger });
    assert.deepEqual(logged, ['warn net.ipv4.vs.expire_quiescent_template could not be set to 1: the kernel\'s behaviour for connections to removed real servers stays']);
    await dp2.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
