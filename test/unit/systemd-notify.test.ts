// sd_notify, the pure half (environment, address bytes, message text) and the notifier with a recording
// sender: what it sends when, and a watchdog that withholds pings while the daemon's check names a problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { monotonicUsec, notifyAddress, notifyMessage, notifySettings, readyMessage, reloadingMessage, watchdogMessage } from '../../daemon/systemd/notify.js';
import { SystemdNotifier } from '../../daemon/systemd/notifier.js';

test('notifySettings: socket and watchdog from the environment; the watchdog pings at half WATCHDOG_USEC', () => {
  assert.deepEqual(notifySettings({}, 7), { socket: null, watchdogIntervalMs: null, problems: [] });
  assert.deepEqual(notifySettings({ NOTIFY_SOCKET: '/run/systemd/notify', WATCHDOG_USEC: '10000000' }, 7), { socket: '/run/systemd/notify', watchdogIntervalMs: 5000, problems: [] });
  assert.deepEqual(notifySettings({ NOTIFY_SOCKET: '@abstract', WATCHDOG_USEC: '10000000', WATCHDOG_PID: '7' }, 7).watchdogIntervalMs, 5000);
  // WATCHDOG_PID names another process: the watchdog is not ours to feed.
  assert.equal(notifySettings({ NOTIFY_SOCKET: '@abstract', WATCHDOG_USEC: '10000000', WATCHDOG_PID: '8' }, 7).watchdogIntervalMs, null);
});

test('notifySettings: unusable values are reported, not guessed at', () => {
  assert.deepEqual(notifySettings({ NOTIFY_SOCKET: 'relative/path' }, 1).problems, ['NOTIFY_SOCKET=relative/path: neither an absolute path nor an abstract "@name"; not notifying']);
  assert.equal(notifySettings({ NOTIFY_SOCKET: '@' }, 1).socket, null);
  assert.deepEqual(notifySettings({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '10s' }, 1).problems, ['WATCHDOG_USEC=10s: not a positive number of microseconds; no watchdog pings']);
  assert.deepEqual(notifySettings({ WATCHDOG_USEC: '1000' }, 1).problems, ['WATCHDOG_USEC is set but NOTIFY_SOCKET is not; no watchdog pings']);
});

test('notifyAddress: a path ends with NUL, "@name" is abstract (leading NUL); too long is refused', () => {
  assert.deepEqual(notifyAddress('/run/n'), Buffer.from('/run/n\0'));
  assert.deepEqual(notifyAddress('@lvsd/notify'), Buffer.from('\0lvsd/notify'));
  assert.equal(notifyAddress(`/${'x'.repeat(106)}`).length, 108);
  assert.throws(() => notifyAddress(`/${'x'.repeat(107)}`), /longer than a unix socket address can be/);
});

test('messages: KEY=VALUE lines; a STATUS stays one line; MONOTONIC_USEC in microseconds', () => {
  assert.equal(readyMessage('VI_1 MASTER'), 'READY=1\nSTATUS=VI_1 MASTER\n');
  assert.equal(notifyMessage([['STATUS', 'two\nlines\r\n']]), 'STATUS=two lines \n');
  assert.equal(monotonicUsec(123_456_789_012n), '123456789');
  assert.equal(reloadingMessage('reloading', 5_000_000n), 'RELOADING=1\nMONOTONIC_USEC=5000\nSTATUS=reloading\n');
  assert.equal(watchdogMessage(null), 'WATCHDOG=1\n');
  assert.equal(watchdogMessage('x'), 'WATCHDOG=1\nSTATUS=x\n');
});

function logs() {
  const lines: string[] = [];
  return { lines, log: { info: (_o: Record<string, unknown>, m: string) => lines.push(`info ${m}`), warn: (_o: Record<string, unknown>, m: string) => lines.push(`warn ${m}`) } };
}

test('fromEnv: nothing to do without NOTIFY_SOCKET; with it, the variables are taken out of the environment children inherit', () => {
  const l = logs();
  assert.equal(SystemdNotifier.fromEnv({}, l.log, () => undefined), null);
  const env: NodeJS.ProcessEnv = { NOTIFY_SOCKET: '@n', WATCHDOG_USEC: '2000000', OTHER: 'kept' };
  const sent: string[] = [];
  const n = SystemdNotifier.fromEnv(env, l.log, (addr, msg) => sent.push(`${addr.toString('latin1')}|${msg.toString()}`));
  assert.ok(n);
  assert.deepEqual(env, { OTHER: 'kept' });
  n.ready('up');
  n.stopping('SIGTERM: shutting down');
  assert.deepEqual(sent, ['\0n|READY=1\nSTATUS=up\n', '\0n|STOPPING=1\nSTATUS=SIGTERM: shutting down\n']);
});

test('a send that fails is logged once per distinct error and does not throw', () => {
  const l = logs();
  const n = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: '/nowhere' }, l.log, () => {
    throw new Error('sendto(AF_UNIX): No such file or directory');
  });
  n?.ready('a');
  n?.ready('b');
  assert.deepEqual(l.lines.filter((x) => x.startsWith('warn')), ['warn could not notify systemd: sendto(AF_UNIX): No such file or directory']);
});

test('watchdog: pings while the check passes, withholds them while it names a problem, resumes after', async () => {
  const l = logs();
  const sent: string[] = [];
  const n = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '20000' }, l.log, (_a, m) => sent.push(m.toString()));
  assert.ok(n);
  let problem: string | null = null;
  n.ready('s1');
  let status = 's1';
  n.startWatchdog(() => Promise.resolve(problem), () => status);
  const until = async (what: string, ok: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(ok(), what);
  };
  try {
    await until('two pings', () => sent.filter((m) => m === 'WATCHDOG=1\n').length >= 2);
    problem = 'the VRRP engine process did not answer within 3 ms';
    await until('the problem logged', () => l.lines.includes(`warn watchdog ping withheld: ${problem ?? ''}`));
    const during = sent.length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(sent.length, during, 'no ping while the check fails');
    problem = null;
    status = 's2';
    await until('a ping with the new status', () => sent.includes('WATCHDOG=1\nSTATUS=s2\n'));
    assert.ok(l.lines.includes('info watchdog pings resumed'));
  } finally {
    n.close();
  }
});

test('watchdog: a check that never answers counts as a problem', async () => {
  const l = logs();
  const sent: string[] = [];
  const n = SystemdNotifier.fromEnv({ NOTIFY_SOCKET: '/n', WATCHDOG_USEC: '20000' }, l.log, (_a, m) => sent.push(m.toString()));
  assert.ok(n);
  const keep = setInterval(() => undefined, 1000);
  n.startWatchdog(() => new Promise(() => undefined), () => 's');
  try {
    for (let i = 0; i < 500 && !l.lines.some((x) => x.startsWith('warn watchdog ping withheld')); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(l.lines.includes('warn watchdog ping withheld: watchdog check did not answer within 5 ms'), l.lines.join('\n'));
    assert.deepEqual(sent, []);
  } finally {
    n.close();
    clearInterval(keep);
  }
});
