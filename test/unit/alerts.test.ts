// E-mail alerts, the pure parts: keepalived 2.2.7's words (subjects and bodies measured in the guest, through
// OpenSMTPD into a maildir: docs/alerts.md), the bounded queue and its burst accounting, which events are
// mailed under which switches, the alerts section (schema, semantic errors with FILE:LINE:COL, reload), and the
// importer's global_defs / smtp_alert mapping with keepalived's inheritance resolved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alertText, endpointText } from '../../daemon/alerts/message.js';
import { BoundedQueue, OutcomeLedger } from '../../daemon/alerts/queue.js';
import { alertOf, wanted } from '../../daemon/director/mail-supervisor.js';
import { partsToReload, restartSettings } from '../../daemon/director/reload-parts.js';
import { diffConfig } from '../../daemon/config/diff.js';
import { formatError } from '../../daemon/config/errors.js';
import { loadConfigText } from '../../daemon/config/load.js';
import type { Config } from '../../daemon/config/types.js';
import type { DirectorEvent } from '../../daemon/director/snapshot.js';
import { importText } from './keepalived-memfs.js';

const VS = { address: '10.9.0.100', protocol: 'tcp', port: 80 };

test('the subjects and bodies keepalived 2.2.7 sends, word for word', () => {
  // Each pair below was received from keepalived 2.2.7 (router_id kad1) by OpenSMTPD.
  assert.deepEqual(alertText('kad1', { kind: 'vrrp', instance: 'VI_1', state: 'MASTER' }), {
    subject: '[kad1] VRRP Instance VI_1 - Entering MASTER state',
    text: '=> VRRP Instance is now owning VRRP VIPs <=\n',
  });
  assert.deepEqual(alertText('kad1', { kind: 'vrrp', instance: 'VI_1', state: 'BACKUP' }), {
    subject: '[kad1] VRRP Instance VI_1 - Entering BACKUP state',
    text: '=> VRRP Instance is no longer owning VRRP VIPs <=\n',
  });
  assert.equal(alertText('kad1', { kind: 'vrrp', instance: 'VI_1', state: 'FAULT' }).subject, '[kad1] VRRP Instance VI_1 - Entering FAULT state');
  assert.deepEqual(alertText('kad1', { kind: 'realServer', virtualServer: VS, realServer: { address: '127.0.0.1', protocol: 'tcp', port: 8082 }, up: false, check: 'tcp' }), {
    subject: '[kad1] Realserver [127.0.0.1]:tcp:8082 of virtual server [10.9.0.100]:tcp:80 - DOWN',
    text: '=> TCP CHECK failed on service <=\n',
  });
  assert.equal(alertText('kad1', { kind: 'realServer', virtualServer: VS, realServer: { address: '127.0.0.1', protocol: 'tcp', port: 8082 }, up: true, check: 'tcp' }).text, '=> TCP CHECK succeed on service <=\n');
  assert.deepEqual(alertText('kad1', { kind: 'quorum', virtualServer: VS, up: false, quorum: 2, hysteresis: 0, alive: 1 }), {
    subject: '[kad1] Virtualserver [10.9.0.100]:tcp:80 - DOWN',
    text: '=> Lost quorum 2+0=2 <= 1 <=\n',
  });
  assert.equal(alertText('kad1', { kind: 'quorum', virtualServer: VS, up: true, quorum: 2, hysteresis: 0, alive: 2 }).text, '=> Gained quorum 2+0=2 <= 2 <=\n');
  assert.equal(endpointText({ address: '2001:db8::1', protocol: 'udp', port: 53 }), '[2001:db8::1]:udp:53');
  assert.equal(endpointText({ fwmark: 7 }), 'FWM 7');
});

test('the queue never grows past its capacity; a burst of failures is noted once at its start and once at its end', () => {
  assert.throws(() => new BoundedQueue(0), /positive integer/);
  const q = new BoundedQueue<number>(2);
  assert.deepEqual([q.offer(1), q.offer(2), q.offer(3)], [true, true, false]);
  assert.equal(q.take(), 1);
  assert.equal(q.offer(4), true);
  assert.equal(q.clear(), 2);
  assert.equal(q.take(), undefined);

  const l = new OutcomeLedger();
  assert.equal(l.sent(), null);
  assert.deepEqual(l.failed(), { kind: 'burst-start' });
  assert.equal(l.failed(), null);
  assert.equal(l.failed(), null);
  assert.equal(l.burst, 3);
  assert.deepEqual(l.sent(), { kind: 'burst-end', failures: 3 });
  assert.deepEqual(l.failed(), { kind: 'burst-start' });
  l.dropped(5);
  assert.deepEqual(l.counters, { sent: 2, failed: 4, dropped: 5 });
});

const CONFIG = (alerts: string): string => `
node: { name: lb1 }
vrrp:
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, virtualIpaddresses: [10.9.0.100/24] }
    - { name: VI_2, interface: eth0, virtualRouterId: 52, virtualIpaddresses: [10.9.0.101/24] }
virtualServers:
  - name: web
    address: 10.9.0.100
    port: 80
    quorum: 2
    healthCheck: { type: http }
    realServers: [{ address: 10.9.0.11 }, { address: 10.9.0.12 }]
  - { address: 10.9.0.100, port: 443, realServers: [{ address: 10.9.0.11 }] }
${alerts}`;

function load(text: string): Config {
  const r = loadConfigText(text);
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const at = '2026-12-02T00:00:00.000Z';

test('which events are mailed: the object\'s own switch first, then the kind\'s; INIT and unknown servers never', () => {
  const config = load(CONFIG(`alerts:
  email:
    to: [ops@lvsd.test]
    from: lvsd@lvsd.test
    smtpServer: 127.0.0.1
    vrrp: false
    instances: { VI_2: true }
    virtualServers: { tcp:10.9.0.100:443: false }
`));
  const email = config.alerts?.email;
  assert.ok(email);
  assert.deepEqual([email.server, email.connectTimeoutMs, email.queueSize, email.realServers, email.quorum], [{ host: '127.0.0.1', port: 25 }, 30_000, 64, true, true]);
  const mailed = (e: DirectorEvent): string | null => {
    const a = alertOf(e, config);
    return a !== null && wanted(email, a) ? alertText(config.node.name, a.alert).subject : null;
  };
  assert.equal(mailed({ type: 'vrrp.transition', instance: 'VI_1', from: 'BACKUP', to: 'MASTER', reason: '', at }), null);
  assert.equal(mailed({ type: 'vrrp.transition', instance: 'VI_2', from: 'BACKUP', to: 'MASTER', reason: '', at }), '[lb1] VRRP Instance VI_2 - Entering MASTER state');
  assert.equal(mailed({ type: 'vrrp.transition', instance: 'VI_2', from: 'MASTER', to: 'INIT', reason: 'stop', at }), null);
  assert.equal(mailed({ type: 'health.change', service: 'tcp:10.9.0.100:80', realServer: '10.9.0.12:80', status: 'down', reason: 'timeout', at }), '[lb1] Realserver [10.9.0.12]:tcp:80 of virtual server [10.9.0.100]:tcp:80 - DOWN');
  const a = alertOf({ type: 'health.change', service: 'tcp:10.9.0.100:80', realServer: '10.9.0.12:80', status: 'down', reason: 'timeout', at }, config);
  assert.equal(a && alertText('lb1', a.alert).text, '=> HTTP CHECK failed on service <=\n');
  assert.equal(mailed({ type: 'health.change', service: 'tcp:10.9.0.100:443', realServer: '10.9.0.11:443', status: 'down', reason: 'timeout', at }), null);
  assert.equal(mailed({ type: 'health.change', service: 'tcp:10.9.0.100:80', realServer: '10.9.0.99:80', status: 'down', reason: 'x', at }), null);
  assert.equal(mailed({ type: 'quorum.change', service: 'tcp:10.9.0.100:80', up: false, aliveWeight: 1, at }), '[lb1] Virtualserver [10.9.0.100]:tcp:80 - DOWN');
  assert.equal(mailed({ type: 'config.reload', ok: true, hash: '', by: '', message: '', at }), null);
});

test('alerts.email: an unknown instance or virtual server is an error at its line; a change applies without a restart', () => {
  const bad = loadConfigText(CONFIG(`alerts:
  email:
    to: [ops@lvsd.test]
    from: lvsd@lvsd.test
    smtpServer: 127.0.0.1
    instances: { VI_9: true }
    virtualServers: { nope: true }
`));
  assert.ok(!bad.ok);
  const lines = bad.errors.map(formatError);
  assert.ok(lines.some((l) => /:20:\d+.*alerts\.email\.instances\.VI_9.*unknown VRRP instance "VI_9"/.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /:21:\d+.*unknown virtual server "nope"/.test(l)), lines.join('\n'));
  const badMail = loadConfigText(CONFIG('alerts:\n  email: { to: [two@at@signs], from: a@b, smtpServer: x }\n'));
  assert.equal(badMail.ok, false);

  const before = load(CONFIG(''));
  const after = load(CONFIG('alerts:\n  email: { to: [ops@lvsd.test], from: lvsd@lvsd.test, smtpServer: mail.lvsd.test, smtpPort: 2525, connectTimeout: 5s }\n'));
  assert.deepEqual(after.alerts?.email?.server, { host: 'mail.lvsd.test', port: 2525 });
  assert.equal(after.alerts.email.connectTimeoutMs, 5000);
  const diff = diffConfig(before, after);
  assert.ok(diff.settings.some((s) => s.startsWith('alerts')), JSON.stringify(diff.settings));
  assert.deepEqual(restartSettings(diff.settings), []);
  assert.deepEqual(partsToReload(diff), []);
});

const KA = (globals: string, instance = '', vs = ''): string => `global_defs {
 router_id kad1
${globals}
}
vrrp_instance VI_1 {
 interface eth0
 virtual_router_id 51
${instance}
 virtual_ipaddress {
  10.9.0.100/24
 }
}
virtual_server 10.9.0.100 80 {
 lb_kind NAT
${vs}
 real_server 10.9.0.11 80 {
  TCP_CHECK {
  }
 }
}
`;
const MAIL = ` notification_email {
  alerts@lvsd.test
  ops@lvsd.test
 }
 notification_email_from keepalived@lvsd.test
 smtp_server 127.0.0.1 2525
 smtp_connect_timeout 5
 smtp_helo_name lb1.lvsd.test`;

test('import: global_defs mail settings, and keepalived\'s switches resolved as 2.2.7 resolves them', () => {
  // No smtp_alert anywhere (measured): real servers are mailed, VRRP and quorum are not.
  const plain = importText(KA(MAIL));
  assert.deepEqual(plain.config.alerts, {
    email: {
      to: ['alerts@lvsd.test', 'ops@lvsd.test'], from: 'keepalived@lvsd.test', smtpServer: '127.0.0.1', smtpPort: 2525, connectTimeout: '5s', helo: 'lb1.lvsd.test',
      vrrp: false, realServers: true, quorum: false,
    },
  });
  assert.deepEqual(plain.diagnostics.map((d) => d.directive), []);
  // The output is a config lvsd accepts.
  const loaded = loadConfigText(plain.yaml);
  assert.ok(loaded.ok, loaded.ok ? '' : loaded.errors.map(formatError).join('\n'));
  assert.equal(loaded.config.alerts?.email?.connectTimeoutMs, 5000);

  // Global smtp_alert: everything (measured); smtp_alert_checker off beats it for checkers.
  const all = importText(KA(`${MAIL}\n smtp_alert\n smtp_alert_checker off`));
  assert.deepEqual([all.config.alerts?.email?.vrrp, all.config.alerts?.email?.realServers, all.config.alerts?.email?.quorum], [true, false, false]);
  // An instance's and a virtual server's own smtp_alert (measured for the instance).
  const own = importText(KA(MAIL, ' smtp_alert', ' smtp_alert off'));
  assert.deepEqual(own.config.alerts?.email?.instances, { VI_1: true });
  assert.deepEqual(own.config.alerts.email.virtualServers, { 'tcp:10.9.0.100:80': false });
  const ownLoaded = loadConfigText(own.yaml);
  assert.ok(ownLoaded.ok, ownLoaded.ok ? '' : ownLoaded.errors.map(formatError).join('\n'));

  // No smtp_server: keepalived sends nothing; reported, nothing carried.
  const noServer = importText(KA(' notification_email {\n  a@lvsd.test\n }\n smtp_alert'));
  assert.equal(noServer.config.alerts, undefined);
  assert.ok(noServer.diagnostics.some((d) => d.directive === 'notification_email' && /no smtp_server/.test(d.why)), JSON.stringify(noServer.diagnostics));
});
