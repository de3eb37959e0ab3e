// The dataplane lab itself (test/support/dataplane-lab.ts): its director is one-armed (clients and real
// servers on one segment), which must not send ICMP redirects. With them on, a client routed to a real
// server through the director learnt a direct route, and the reply-only conntrack entries this left behind
// later stalled every `Connection: close` connection through the VIP (issue #19; the benchmark's 0 conn/s).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createDataplaneLab } from '../support/dataplane-lab.js';
import { requireCommands, requireRoot } from '../support/prereq.js';

function outRedirects(snmp: string): number {
  const lines = snmp.split('\n').filter((l) => l.startsWith('Icmp:'));
  const i = lines[0]?.split(/\s+/).indexOf('OutRedirects') ?? -1;
  assert.ok(i > 0, `no Icmp OutRedirects in /proc/net/snmp: ${lines.join(' / ')}`);
  return Number(lines[1]?.split(/\s+/)[i]);
}

test('a client routed to a real server through the director keeps going through it (no ICMP redirects)', async () => {
  requireRoot();
  requireCommands('ip', 'nginx', 'wrk');
  const lab = await createDataplaneLab('lab', { clientRouteToBack: true, nginxWorkers: 1 });
  after(() => lab.destroy());
  const rs1 = lab.rs4[0] ?? '';
  const { stdout } = await lab.client.exec('wrk', ['-t1', '-c8', '-d2s', '--timeout', '2s', '-H', 'Connection: close', `http://${rs1}/`], { timeoutMs: 20_000 });
  const done = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0);
  assert.ok(done > 100, `wrk made only ${done} requests: ${stdout}`);
  assert.equal(outRedirects((await lab.director.exec('cat', ['/proc/net/snmp'])).stdout), 0, 'the director sent ICMP redirects');
  const cache = (await lab.client.exec('ip', ['-4', 'route', 'show', 'cache'])).stdout;
  assert.doesNotMatch(cache, /redirected/, `the client learnt a route from a redirect:\n${cache}`);
  const route = (await lab.client.exec('ip', ['-4', 'route', 'get', rs1])).stdout;
  assert.match(route, /via 10\.9\.0\.2/, `the client's route to ${rs1} no longer goes through the director: ${route}`);
});
