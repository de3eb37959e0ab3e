// runDaemon in process, with signals from an EventEmitter and a recording Daemon behind the seam.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDaemon, type Daemon, type RunContext } from '../../daemon/cli/run.js';
import { createLogger } from '../../daemon/log.js';
import type { Capabilities } from '../../daemon/cli/capabilities.js';
import type { Config } from '../../daemon/config/types.js';
import type { ConfigDiff } from '../../daemon/config/diff.js';

const CAPS: Capabilities = { root: false, netRaw: false, netAdmin: false, ipvs: 'no', nftables: 'no', nftBinary: false };

const V1 = `
vrrp:
  instances: [{ name: VI_1, interface: eth0, virtualRouterId: 51, virtualIpaddresses: [192.0.2.10/24] }]
virtualServers:
  - { name: web, address: 192.0.2.10, port: 80, realServers: [{ address: 10.0.1.11 }, { address: 10.0.1.12 }] }
`;

class Recorder implements Daemon {
  calls: string[] = [];
  configs: Config[] = [];
  diffs: ConfigDiff[] = [];
  failReload = false;
  stopDelayMs = 0;
  ctx?: RunContext;
  start(c: Config) {
    this.calls.push('start');
    this.configs.push(c);
    return Promise.resolve();
  }
  reload(next: Config, diff: ConfigDiff) {
    this.calls.push('reload');
    this.diffs.push(diff);
    if (this.failReload) return Promise.reject(new Error('cannot apply'));
    this.configs.push(next);
    return Promise.resolve();
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

test('reload hands the daemon the new config and the diff; a throwing reload keeps the old config for the next diff', async () => {
  const s = setup();
  try {
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: (ctx) => { s.daemon.ctx = ctx; return s.daemon; } });
    await s.waitLog(/^running$/);
    assert.equal(s.daemon.ctx?.dataplane.kind, 'userspace');
    assert.equal(s.daemon.ctx.stateFile, '/var/lib/lvsd/state.json');

    s.daemon.failReload = true;
    writeFileSync(s.file, V1.replace('{ address: 10.0.1.12 }', '{ address: 10.0.1.12, weight: 3 }'));
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload failed; keeping the running config$/);
    assert.equal(s.logs.find((l) => l.msg === 'reload failed; keeping the running config')?.reason, 'cannot apply');

    s.daemon.failReload = false;
    writeFileSync(s.file, V1.replace('{ address: 10.0.1.12 }', '{ address: 10.0.1.13 }'));
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload done$/);
    // Diffed against the config that was really running (v1), not the one that failed to apply.
    const last = s.daemon.diffs.at(-1)?.virtualServers.changed[0]?.realServers;
    assert.deepEqual(last?.added.map((r) => r.id), ['10.0.1.13:80']);
    assert.deepEqual(last.removed.map((r) => r.id), ['10.0.1.12:80']);
    assert.deepEqual(last.changed, []);

    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.deepEqual(s.daemon.calls, ['start', 'reload', 'reload', 'stop']);
  } finally {
    s.cleanup();
  }
});

test('an unchanged file reloads to "no changes" without calling the daemon', async () => {
  const s = setup();
  try {
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: () => s.daemon });
    await s.waitLog(/^running$/);
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload: no changes$/);
    s.signals.emit('SIGINT');
    assert.equal(await done, 0);
    assert.deepEqual(s.daemon.calls, ['start', 'stop']);
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

test('the service manager hears READY once running, RELOADING…READY around a SIGHUP, STOPPING on SIGTERM; a refused SIGHUP reaches the daemon', async () => {
  const s = setup();
  try {
    const heard: string[] = [];
    const refused: string[] = [];
    const notifier = {
      ready: (st: string) => heard.push(`READY ${st}`),
      reloading: (st: string) => heard.push(`RELOADING ${st}`),
      stopping: (st: string) => heard.push(`STOPPING ${st}`),
      startWatchdog: () => heard.push('watchdog'),
      close: () => heard.push('close'),
    };
    const daemon = Object.assign(s.daemon, { status: () => 'VI_1 MASTER', reloadRefused: (m: string) => refused.push(m) });
    const done = runDaemon({ configPath: s.file, log: s.log, signals: s.signals, probe: () => CAPS, factory: () => daemon, notifier });
    await s.waitLog(/^running$/);
    assert.deepEqual(heard, ['watchdog', 'READY VI_1 MASTER']);

    writeFileSync(s.file, V1.replace('{ address: 10.0.1.12 }', '{ address: 10.0.1.12, weight: 3 }'));
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload done$/);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(heard.slice(2), [`RELOADING reloading ${s.file}`, 'READY VI_1 MASTER']);

    writeFileSync(s.file, V1.replace('virtualRouterId: 51', 'virtualRouterId: 0'));
    s.signals.emit('SIGHUP');
    await s.waitLog(/^reload rejected/);
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(refused.length, 1);
    assert.match(refused[0] ?? '', new RegExp(`^refused: config is invalid \\(1 error\\): ${s.file.replace(/[.]/g, '\\.')}:3:\\d+: vrrp\\.instances\\[0\\]\\.virtualRouterId: `));
    assert.deepEqual(heard.slice(4), [`RELOADING reloading ${s.file}`, 'READY VI_1 MASTER']);

    s.signals.emit('SIGTERM');
    assert.equal(await done, 0);
    assert.deepEqual(heard.slice(6), ['STOPPING SIGTERM: shutting down', 'close']);
  } finally {
    s.cleanup();
  }
});
