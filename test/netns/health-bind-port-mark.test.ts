// Checker bind_port and fwmark (keepalived's checker options) with the monitor driver in a client
// namespace: the SYNs of a bindPort check leave from that port (nft counter on `tcp sport` in the server
// namespace) on the native engine and on the JS checkers; the SYNs of a fwmark check carry the mark
// (nft counter on `meta mark` in the client's output hook: a mark never leaves the host), while the
// checks without one carry none. Without the native engine a fwmark check is refused when applied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Topology, type Netns } from '../support/netns.js';
import { requireCommands, requireRoot } from '../support/prereq.js';
import { CHECK_DEFAULTS, type CheckOptions } from '../../daemon/health/options.js';
import type { HealthTarget } from '../../daemon/health/monitor.js';
import { MonitorDriver } from '../fixtures/health/harness.js';

const INTERVAL = 200;
const RISE = 2;
const SLACK = 3_000;

function check(o: Partial<CheckOptions> = {}): CheckOptions {
  return { ...CHECK_DEFAULTS, type: 'tcp', intervalMs: INTERVAL, timeoutMs: 500, rise: RISE, fall: 2, alpha: true, ...o };
}

async function counters(ns: Netns, table: string): Promise<Record<string, number>> {
  const out = JSON.parse((await ns.exec('nft', ['-j', 'list', 'table', 'inet', table])).stdout) as { nftables: { counter?: { name: string; packets: number } }[] };
  return Object.fromEntries(out.nftables.flatMap((x) => (x.counter === undefined ? [] : [[x.counter.name, x.counter.packets]])));
}

test('checker bindPort and fwmark: SYNs leave from the port and carry the mark (native engine and JS), fwmark refused without the engine', async (t) => {
  requireRoot();
  requireCommands('ip', 'nft');
  const topo = await Topology.create('hbind');
  const drivers: MonitorDriver[] = [];
  t.after(() => {
    for (const x of drivers) x.stop();
    topo.destroy();
  });
  const client = await topo.addHost({ name: 'client', addresses: ['10.79.0.1/24'] });
  const server = await topo.addHost({ name: 'server', addresses: ['10.79.0.11/24'] });
  const listener = server.spawn(process.execPath, ['-e', "for (const p of [80, 81]) require('node:net').createServer((s) => s.destroy()).listen(p, '10.79.0.11')"]);
  t.after(() => listener.kill('SIGKILL'));
  await server.exec('nft', ['-f', '-'], {
    input: [
      'table inet lvt_sport {',
      '  counter native { }', '  counter js { }', '  counter other { }',
      '  chain input {',
      '    type filter hook input priority -10; policy accept;',
      '    tcp dport 80 tcp flags syn tcp sport 40123 counter name "native" accept',
      '    tcp dport 80 tcp flags syn tcp sport 40124 counter name "js" accept',
      '    tcp dport 80 tcp flags syn counter name "other"',
      '  }',
      '}', '',
    ].join('\n'),
  });
  await client.exec('nft', ['-f', '-'], {
    input: [
      'table inet lvt_mark {',
      '  counter marked { }', '  counter unmarked { }', '  counter stray { }',
      '  chain output {',
      '    type filter hook output priority 0; policy accept;',
      '    tcp dport 81 tcp flags syn meta mark 0x2a counter name "marked" accept',
      '    tcp dport 81 tcp flags syn counter name "unmarked" accept',
      '    tcp dport 80 tcp flags syn meta mark != 0 counter name "stray"',
      '  }',
      '}', '',
    ].join('\n'),
  });

  const native: HealthTarget[] = [
    { id: 'bound', service: 'web', address: '10.79.0.11', port: 80, weight: 1, check: check({ bindPort: 40123 }) },
    { id: 'plain', service: 'web', address: '10.79.0.11', port: 80, weight: 1, check: check() },
    { id: 'marked', service: 'web', address: '10.79.0.11', port: 81, weight: 1, check: check({ fwmark: 42 }) },
    // Plain HTTP on the native engine with a mark and a bindTo (the listener resets it: only its SYNs count here).
    { id: 'marked-http', service: 'web', address: '10.79.0.11', port: 81, weight: 1, check: check({ type: 'http', fwmark: 42, bindTo: '10.79.0.1', http: { path: '/', status: [200] } }) },
  ];
  const d = await MonitorDriver.start(client);
  drivers.push(d);
  const rec = await d.reconcile([], native);
  assert.equal(rec.ev, 'reconciled', JSON.stringify(rec));
  assert.deepEqual((rec as unknown as { counts: { errors: unknown[] } }).counts.errors, []);
  assert.equal(rec.nativeTargets, 4, 'bindPort and fwmark checks run on the native engine');
  for (const id of ['bound', 'plain', 'marked']) await d.transition(id, 'up', INTERVAL * (RISE + 1) + SLACK, 0);

  // The JS checkers (no native engine): bindPort through net.connect's localPort; fwmark refused.
  const js = await MonitorDriver.start(client, { LVSD_HEALTH_NATIVE: '0' });
  drivers.push(js);
  const jsRec = await js.reconcile([], [
    { id: 'bound-js', service: 'web', address: '10.79.0.11', port: 80, weight: 1, check: check({ bindPort: 40124 }) },
    { id: 'marked-js', service: 'web', address: '10.79.0.11', port: 81, weight: 1, check: check({ fwmark: 42 }) },
  ]);
  const errors = (jsRec as unknown as { counts: { errors: { id: string; message: string }[] } }).counts.errors;
  assert.deepEqual(errors.map((e) => e.id), ['marked-js']);
  assert.match(errors[0]?.message ?? '', /fwmark: fwmark needs the native probe engine .*LVSD_HEALTH_NATIVE=0.*cannot mark a socket/);
  await js.transition('bound-js', 'up', INTERVAL * (RISE + 1) + SLACK, 0);
  // Every check from one fixed port, one after the other: each is reset at its end, so the next binds.
  await new Promise((r) => setTimeout(r, INTERVAL * 5));
  d.stop();
  js.stop();

  const s = await counters(server, 'lvt_sport');
  const m = await counters(client, 'lvt_mark');
  t.diagnostic(`SYNs to :80 from 40123 (native) ${s.native}, from 40124 (JS) ${s.js}, from other ports ${s.other}; to :81 marked 0x2a ${m.marked}, unmarked ${m.unmarked}; marked to :80 ${m.stray}`);
  assert.ok((s.native ?? 0) >= RISE + 3, `native bindPort SYNs: ${s.native}`);
  assert.ok((s.js ?? 0) >= RISE + 3, `JS bindPort SYNs: ${s.js}`);
  assert.ok((s.other ?? 0) >= RISE, `the plain check leaves from other ports: ${s.other}`);
  assert.ok((m.marked ?? 0) >= 2 * RISE, `marked SYNs: ${m.marked}`);
  assert.equal(m.unmarked, 0, 'every check to :81 carries the mark');
  assert.equal(m.stray, 0, 'checks without fwmark carry no mark');
});
