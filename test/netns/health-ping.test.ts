// Ping (ICMP and ICMPv6 echo on the native probe engine: keepalived PING_CHECK) and file checks
// (keepalived FILE_CHECK) with the monitor driver in a client namespace: IPv4 and IPv6 targets come
// up; nft dropping echo requests in the server namespace takes them down within interval × fall +
// timeout and the reply's return brings them back; an address nobody holds stays down; writing the
// tracked file moves a server down and up and changes its weight. Without the native engine
// (LVSD_HEALTH_NATIVE=0) a ping check is refused when applied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { HealthTarget } from '../../daemon/health/monitor.js';
import { MonitorDriver, tempDir } from '../fixtures/health/harness.js';

const INTERVAL = 250;
const TIMEOUT = 300;
const FALL = 2;
const RISE = 2;
const BOUND = INTERVAL * FALL + TIMEOUT;
/** For a shared 2-core machine. */
const SLACK = 1_500;

function check(type: CheckOptions['type'], o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type, intervalMs: INTERVAL, timeoutMs: TIMEOUT, rise: RISE, fall: FALL, alpha: true, ...o };
}

async function dropEcho(ns: Netns, on: boolean): Promise<void> {
  if (on) {
    await ns.exec('nft', ['-f', '-'], {
      input: 'table inet lvt_ping {\n  chain input {\n    type filter hook input priority 0; policy accept;\n    icmp type echo-request drop\n    icmpv6 type echo-request drop\n  }\n}\n',
    });
  } else {
    await ns.exec('nft', ['delete', 'table', 'inet', 'lvt_ping']);
  }
}

test('ping and file checks: up, down on dropped echoes and back, an absent host down, the file sets state and weight; refused without the engine', async (t) => {
  requireRoot();
  requireCommands('ip', 'nft');
  const topo = await Topology.create('hping');
  const tmp = tempDir('ping');
  const drivers: MonitorDriver[] = [];
  t.after(() => {
    for (const x of drivers) x.stop();
    topo.destroy();
    tmp.cleanup();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.78.0.1/24', '10.78.0.2/24', 'fd78::1/64'] });
  const server = await topo.addHost({ name: 'server', addresses: ['10.78.0.11/24', 'fd78::11/64'] });
  // Echo replies are not rate limited by default, but errors are: keep every echo answered the same way.
  await server.exec('sysctl', ['-qw', 'net.ipv4.icmp_ratelimit=0']);
  // Counts the echoes that come from the bindTo address (the client's second one, never its default source).
  await server.exec('nft', ['-f', '-'], {
    input: 'table inet lvt_ping_src {\n  counter bound { }\n  chain input {\n    type filter hook input priority -10; policy accept;\n    ip saddr 10.78.0.2 icmp type echo-request counter name "bound"\n  }\n}\n',
  });
  const maint = join(tmp.dir, 'maint');
  const load = join(tmp.dir, 'load');
  writeFileSync(maint, '0\n');

  const targets: HealthTarget[] = [
    { id: 'ping4', service: 'web', address: '10.78.0.11', port: 80, weight: 1, check: check('ping') },
    { id: 'ping6', service: 'web', address: 'fd78::11', port: 80, weight: 1, check: check('ping') },
    { id: 'ping4-bindto', service: 'web', address: '10.78.0.99', port: 80, weight: 1, check: check('ping', { connectIp: '10.78.0.11', bindTo: '10.78.0.2' }) },
    { id: 'absent', service: 'bad', address: '10.78.0.77', port: 80, weight: 1, check: check('ping') },
    { id: 'absent6', service: 'bad', address: 'fd78::77', port: 80, weight: 1, check: check('ping') },
    { id: 'maint', service: 'files', address: '10.78.0.11', port: 80, weight: 1, check: check('file', { rise: 1, fall: 1, file: { path: maint, weight: 0 } }) },
    { id: 'load', service: 'files', address: '10.78.0.11', port: 81, weight: 100, check: check('file', { rise: 1, fall: 1, alpha: false, file: { path: load, weight: 10 } }) },
  ];
  const d = await MonitorDriver.start(client);
  drivers.push(d);
  const rec = await d.reconcile([], targets);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  assert.deepEqual((rec as unknown as { counts: { errors: unknown[] } }).counts.errors, []);
  assert.equal(rec.nativeTargets, 5, 'every ping check runs on the native engine');

  for (const id of ['ping4', 'ping6', 'ping4-bindto', 'maint']) await d.transition(id, 'up', INTERVAL * (RISE + 1) + TIMEOUT + SLACK, 0);
  const bound = JSON.parse((await server.exec('nft', ['-j', 'list', 'counter', 'inet', 'lvt_ping_src', 'bound'])).stdout) as { nftables: { counter?: { packets: number } }[] };
  const fromBound = bound.nftables.find((x) => x.counter !== undefined)?.counter?.packets ?? 0;
  assert.ok(fromBound >= RISE, `echoes of the bindTo check left from 10.78.0.2 (${fromBound} counted)`);
  // Nobody answers for the absent hosts: neighbour resolution fails, no reply comes, they stay down.
  await new Promise((r) => setTimeout(r, BOUND + SLACK));
  const snap = await d.snapshot();
  for (const id of ['absent', 'absent6']) {
    const s = snap.targets.find((x) => x.id === id);
    assert.equal(s?.state, 'down', id);
    assert.ok(s.checks >= 2, `${id} was checked`);
    t.diagnostic(`${id}: ${s.state} after ${s.checks} checks, last ${s.last?.reason ?? '?'} ${s.last?.detail ?? '?'}`);
    assert.match(`${s.last?.reason ?? ''} ${s.last?.detail ?? ''}`, /^(timeout no answer within 300 ms|unreachable EHOSTUNREACH)$/, id);
  }
  assert.equal(d.transitionsOf('absent').length, 0, 'an alpha target that never answered never came up');

  // nft drops the echo requests in the server's namespace: down for timeout, within the bound.
  let from = d.events.length;
  const droppedAt = Date.now();
  await dropEcho(server, true);
  for (const id of ['ping4', 'ping6', 'ping4-bindto']) {
    const e = await d.transition(id, 'down', BOUND + SLACK + 2_000, from);
    assert.equal(e.reason, 'timeout', `${id}: ${e.reason} ${e.detail}`);
    const took = e.t - droppedAt;
    t.diagnostic(`echo dropped: ${id} down after ${took} ms (bound ${BOUND} ms + ${SLACK} ms slack)`);
    assert.ok(took <= BOUND + SLACK, `${id} detected after ${took} ms`);
  }
  from = d.events.length;
  const restoredAt = Date.now();
  await dropEcho(server, false);
  for (const id of ['ping4', 'ping6', 'ping4-bindto']) {
    const e = await d.transition(id, 'up', INTERVAL * RISE + TIMEOUT + SLACK, from);
    t.diagnostic(`echo restored: ${id} up after ${e.t - restoredAt} ms`);
  }

  // FILE_CHECK: a non-zero value with weight 0 takes the server down; 0 brings it back.
  from = d.events.length;
  writeFileSync(maint, '1\n');
  const down = await d.transition('maint', 'down', INTERVAL * 2 + SLACK, from);
  assert.equal(down.reason, 'file');
  assert.match(down.detail, /maint holds 1$/);
  writeFileSync(maint, '0\n');
  await d.transition('maint', 'up', INTERVAL * 2 + SLACK, from);
  // With weight 10, -3 takes 30 off the configured 100; a value whose product is -2^31 is down.
  const weightAt = d.events.length;
  writeFileSync(load, '-3\n');
  const w = (await d.waitFor((e) => e.ev === 'weight' && e.id === 'load', INTERVAL * 2 + SLACK, 'load weight', weightAt)) as unknown as { previous: number; weight: number };
  assert.deepEqual([w.previous, w.weight], [100, 70]);
  writeFileSync(load, '-214748365\n');
  const fault = await d.transition('load', 'down', INTERVAL * 2 + SLACK, weightAt);
  assert.equal(fault.reason, 'file');

  // No native engine: the ping check is refused when applied, with the reason.
  const js = await MonitorDriver.start(client, { LVSD_HEALTH_NATIVE: '0' });
  drivers.push(js);
  const refused = await js.reconcile([], [targets[0] as HealthTarget]);
  const errors = (refused as unknown as { counts: { errors: { id: string; message: string }[] } }).counts.errors;
  assert.equal(errors[0]?.id, 'ping4');
  assert.match(errors[0].message, /ping checks need the native probe engine .*LVSD_HEALTH_NATIVE=0.*no raw ICMP sockets/);
});
