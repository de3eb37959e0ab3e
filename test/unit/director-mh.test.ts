// IPVS mh behind ECMP (issue #14): every director must hand the kernel the same destinations in the same
// order, because ip_vs_mh_populate() walks them in list order; a failed real server keeps its place at weight 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalKey, desiredService, type DesiredInputs, type RealServerPlan, type ServicePlan } from '../../daemon/director/desired.js';
import type { HealthView } from '../../daemon/health/monitor-api.js';
import { targetKey } from '../../daemon/state/target-key.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';

const rs = (address: string, port = 80): RealServerPlan => ({ id: address.includes(':') ? `[${address}]:${String(port)}` : `${address}:${String(port)}`, address, port, weight: 1, method: 'dr', inhibitOnFailure: false });

const plan = (scheduler: ServicePlan['scheduler'], realServers: RealServerPlan[]): ServicePlan => ({
  id: 'tcp:192.0.2.10:80', name: 'web', family: 4, protocol: 'tcp', address: '192.0.2.10', port: 80, scheduler, realServers, quorum: 1,
});

function inputs(down: string[] = []): DesiredInputs {
  const health = new Map<string, HealthView>(down.map((id) => [targetKey({ service: 'tcp:192.0.2.10:80', realServer: id }), { up: false }]));
  return { services: [], health, overrides: new Map(), quorumLost: new Set() };
}

test('canonical order: numeric by address (IPv4 before IPv6), then port', () => {
  const keys = ['10.0.1.10', '10.0.1.9', '2001:db8::2', '2001:db8::1:0', '10.0.1.9'].map((a, i) => canonicalKey(a, i === 4 ? 8080 : 80));
  const sorted = [...keys].sort();
  assert.deepEqual(sorted.map((k) => keys.indexOf(k)), [1, 4, 0, 2, 3]);
  assert.equal(canonicalKey('2001:DB8::1', 80), canonicalKey('2001:db8:0:0:0:0:0:1', 80));
});

test('mh: any configured order gives one destination order, and a failed server stays in place at weight 0', () => {
  const servers = ['10.0.1.10', '10.0.1.9', '10.0.1.11', '10.0.2.1', '10.0.1.100'].map((a) => rs(a));
  const expected = ['10.0.1.9:80', '10.0.1.10:80', '10.0.1.11:80', '10.0.1.100:80', '10.0.2.1:80'];
  fc.assert(fc.property(fc.shuffledSubarray(servers, { minLength: servers.length }), fc.subarray(expected), (order, down) => {
    const out = desiredService(plan('mh', order), inputs(down));
    assert.deepEqual(out.realServers.map((r) => r.id), expected);
    assert.deepEqual(out.realServers.map((r) => r.weight), expected.map((id) => (down.includes(id) ? 0 : 1)));
  }), { numRuns: 100 });
});

test('other schedulers keep the configured order and remove a failed server (the control)', () => {
  const out = desiredService(plan('wrr', [rs('10.0.1.10'), rs('10.0.1.9')]), inputs(['10.0.1.10:80']));
  assert.deepEqual(out.realServers.map((r) => [r.id, r.weight]), [['10.0.1.9:80', 1]]);
  const both = desiredService(plan('wrr', [rs('10.0.1.10'), rs('10.0.1.9')]), inputs());
  assert.deepEqual(both.realServers.map((r) => r.id), ['10.0.1.10:80', '10.0.1.9:80']);
});

test('mh defaults to mh-fallback + mh-port; an explicit list, even empty, is kept; other schedulers get none', () => {
  const flags = (vs: string): string[] => {
    const r = loadConfigText(`virtualServers:\n  - { address: 192.0.2.10, port: 80, ${vs}, realServers: [{ address: 10.0.1.11 }] }\n`);
    if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
    return r.config.virtualServers[0]?.schedulerFlags ?? [];
  };
  assert.deepEqual(flags('scheduler: mh'), ['mh-fallback', 'mh-port']);
  assert.deepEqual(flags('scheduler: mh, schedulerFlags: []'), []);
  assert.deepEqual(flags('scheduler: mh, schedulerFlags: [mh-port]'), ['mh-port']);
  assert.deepEqual(flags('scheduler: wlc'), []);
});
