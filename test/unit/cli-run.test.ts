// runDaemon in process, with signals from an EventEmitter and a recording Daemon behind the seam.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon } from '../../daemon/cli/run.js';
import type { Daemon, RunContext } from '../../daemon/cli/daemon.js';
import { createLogger } from '../../daemon/log.js';
import type { Capabilities } from '../../daemon/cli/capabilities.js';
import type { LoadedConfig } from '../../daemon/director/config-file.js';

const CAPS: Capabilities = { root: false, netRaw: false, netAdmin: false, ipvs: 'no', nftables: 'no', nftBinary: false };

const V1 = `
vrrp:
  instances: [{ name: VI_1, interface: eth0, virtualRouterId: 51, virtualIpaddresses: [192.0.2.10/24] }]
virtualServers:
  - { name: web, address: 192.0.2.10, port: 80, realServers: [{ address: 10.0.1.11 }, { address: 10.0.1.12 }] }
`;

class Recorder implements Daemon {
  calls: string[] = [];
  started: LoadedConfig[] = [];
  failReload = false;
  /** How long a reload takes (SIGHUPs meanwhile coalesce). */
  reloadMs = 0;
  stopDelayMs = 0;
  ctx?: RunContext;
  start(loaded: LoadedConfig) {
    this.calls.push('start');
    this.started.push(loaded);
    return Promise.resolve();
  }
  async reload() {
    this.calls.push('reload');
    await new Promise((r) => setTimeout(r, this.reloadMs));
    if (this.failReload) throw new Error('cannot try');
  }
  stop() {
    this.calls.push('stop');
    // unref: a deliberately hanging stop must not keep the test process alive.
    return new Promise<void>((r) => setTimeout(r, this.stopDelayMs).unref());
  }
}

function setup(text = V1) {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-run-unit-'));
  const file = join(dir, 'lvsd.yaml');
  writeFileSync(file, text);
  const logs: { level: string; msg: string; [k: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(l) as (typeof logs)[number]);
      cb();
    },
  });
  const log = createLogger({ destination: stream, level: 'debug' });
  const signals = new EventEmitter();
  const daemon = new Recorder();
  const waitLog = async (re: RegExp): Promise<void> => {
    for (let i = 0; i < 400; i++) {
      if (logs.some((l) => re.test(l.msg))) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail(`no log ${String(re)} in:\n${logs.map((l) => l.msg).join('\n')}`);
  };
  const cleanup = () => { rmSync(dir, { recursive: true, force: true }); };
  return { file, logs, log, signals, daemon, waitLog, cleanup };
}

test('the daemon starts with the config and the exact text it was parsed from; SIGHUP asks it to reload, and SIGHUPs during a reload coalesce into one more', async () => {
  const s = setup();
  try {
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: (ctx) => { s.daemon.ctx = ctx; return s.daemon; } });
    await s.waitLog(/^running$/);
    assert.equal(s.daemon.ctx?.dataplane.kind, 'userspace');
    assert.equal(s.daemon.ctx.stateFile, '/var/lib/lvsd/state.json');
    assert.equal(s.daemon.started[0]?.text, V1);
    assert.deepEqual(s.daemon.started[0].config.virtualServers.map((v) => v.name), ['web']);

    s.daemon.reloadMs = 200;
    s.signals.emit('SIGHUP');
    s.signals.emit('SIGHUP');
    s.signals.emit('SIGHUP');
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(s.daemon.calls, ['start', 'reload', 'reload'], 'three SIGHUPs while one reload ran: one more reload after it');

    s.daemon.failReload = true;
    s.daemon.reloadMs = 0;
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload failed; keeping the running config$/);
    assert.equal(s.logs.find((l) => l.msg === 'reload failed; keeping the running config')?.reason, 'cannot try');

    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.deepEqual(s.daemon.calls, ['start', 'reload', 'reload', 'reload', 'stop']);
  } finally {
    s.cleanup();
  }
});

test('SIGTERM during start is honoured once the daemon runs', async () => {
  const s = setup();
  try {
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: () => s.daemon });
    s.signals.emit('SIGTERM'); // before the config is even read
    assert.equal(await done, 0);
    assert.deepEqual(s.daemon.calls, ['start', 'stop']);
  } finally {
    s.cleanup();
  }
});

test('a stop that hangs does not hang lvsd; a second signal exits at once', async () => {
  const s = setup();
  try {
    s.daemon.stopDelayMs = 60_000;
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: () => s.daemon, stopTimeoutMs: 100 });
    await s.waitLog(/^running$/);
    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.ok(s.logs.some((l) => l.msg === 'stop took too long; exiting anyway'));

    const t = setup();
    t.daemon.stopDelayMs = 60_000;
    const again = runDaemon({ configPath: t.file, log: t.log, signals: t.signals, probe: () => CAPS, factory: () => t.daemon });
    await t.waitLog(/^running$/);
    t.signals.emit('SIGTERM');
    t.signals.emit('SIGTERM');
    assert.equal(await again, 1);
    t.cleanup();
  } finally {
    s.cleanup();
  }
});

test('a daemon whose start throws makes run exit 1', async () => {
  const s = setup();
  try {
    const code = await runDaemon({
      configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS,
      factory: () => ({ start: () => Promise.reject(new Error('boom')), reload: () => Promise.resolve(), stop: () => Promise.resolve() }),
    });
    assert.equal(code, 1);
    assert.ok(s.logs.some((l) => l.level === 'fatal' && l.msg === 'start failed'));
    assert.equal(s.signals.listenerCount('SIGHUP'), 0, 'signal handlers removed');
  } finally {
    s.cleanup();
  }
});

test('missing capabilities are logged as warnings, and the daemon still starts', async () => {
  const s = setup();
  try {
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: () => s.daemon });
    await s.waitLog(/^running$/);
    const warns = s.logs.filter((l) => l.level === 'warn' && l.capability === true).map((l) => l.msg.split(':')[0]);
    assert.deepEqual(warns, ['IPVS', 'nftables', 'raw sockets (CAP_NET_RAW)', 'network admin (CAP_NET_ADMIN)']);
    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.equal(s.signals.listenerCount('SIGTERM'), 0);
  } finally {
    s.cleanup();
  }
});

test('the service manager hears READY once running and STOPPING on SIGTERM; a SIGHUP goes to the daemon, which frames its own reloads', async () => {
  const s = setup();
  try {
    const heard: string[] = [];
    const notifier = {
      ready: (st: string) => heard.push(`READY ${st}`),
      reloading: (st: string) => heard.push(`RELOADING ${st}`),
      stopping: (st: string) => heard.push(`STOPPING ${st}`),
      startWatchdog: () => heard.push('watchdog'),
      close: () => heard.push('close'),
    };
    const daemon = Object.assign(s.daemon, { status: () => 'VI_1 MASTER' });
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: (ctx) => { daemon.ctx = ctx; return daemon; }, notifier });
    await s.waitLog(/^running$/);
    assert.deepEqual(heard, ['watchdog', 'READY VI_1 MASTER']);
    assert.equal(daemon.ctx?.notifier, notifier, 'the daemon is handed the notifier for its reloads');

    s.signals.emit('SIGHUP');
    await s.waitLog(/^SIGHUP: reloading config$/);
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(daemon.calls, ['start', 'reload']);
    assert.deepEqual(heard.slice(2), [], 'run.ts itself sends nothing around a reload (the director does, for every kind of reload)');

    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.deepEqual(heard.slice(2), ['STOPPING SIGTERM: shutting down', 'close']);
  } finally {
    s.cleanup();
  }
});
