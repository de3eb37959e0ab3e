// Connection counts per real server from /proc/net/nf_conntrack lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anyServiceKey, conntrackKey, countConntrack, forgetClosedArgs, goneTargets, withClosedEntries } from '../../daemon/dataplane/nftables/conntrack.js';
import { tableModel } from '../../daemon/dataplane/nftables/model.js';
import type { RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';

const lines = [
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.9.0.1 dst=10.9.0.100 sport=40000 dport=80 src=10.10.0.11 dst=10.9.0.1 sport=80 dport=40000 [ASSURED] mark=0 zone=0 use=2',
  'ipv4     2 tcp      6 100 TIME_WAIT src=10.9.0.1 dst=10.9.0.100 sport=40001 dport=80 src=10.10.0.11 dst=10.9.0.1 sport=80 dport=40001 [ASSURED] mark=0 zone=0 use=2',
  'ipv4     2 udp      17 29 src=10.9.0.1 dst=10.9.0.100 sport=5000 dport=5353 src=10.10.0.12 dst=10.9.0.1 sport=5353 dport=5000 mark=0 zone=0 use=2',
  'ipv6     10 tcp      6 431999 ESTABLISHED src=fd09::1 dst=fd09::100 sport=40000 dport=80 src=fd10::11 dst=fd09::1 sport=8080 dport=40000 [ASSURED] mark=0 zone=0 use=2',
  // Not NATed: the reply comes from where the client sent it.
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.9.0.1 dst=10.9.0.2 sport=40002 dport=22 src=10.9.0.2 dst=10.9.0.1 sport=22 dport=40002 [ASSURED] mark=0 zone=0 use=2',
  'ipv4     2 icmp     1 29 src=10.9.0.1 dst=10.9.0.2 type=8 code=0 id=1 src=10.9.0.2 dst=10.9.0.1 type=0 code=0 id=1 mark=0 zone=0 use=2',
  '',
].join('\n');

test('ESTABLISHED counts as active, other TCP states as inactive, UDP flows as active', () => {
  const c = countConntrack(lines);
  assert.deepEqual(c.get(conntrackKey('tcp', '10.9.0.100', 80, '10.10.0.11', 80)), { active: 1, inactive: 1 });
  assert.deepEqual(c.get(conntrackKey('udp', '10.9.0.100', 5353, '10.10.0.12', 5353)), { active: 1, inactive: 0 });
  assert.deepEqual(c.get(conntrackKey('tcp', 'fd09::100', 80, 'fd10::11', 8080)), { active: 1, inactive: 0 });
  assert.deepEqual(c.get(anyServiceKey('10.10.0.11', 80)), { active: 1, inactive: 1 });
  assert.equal([...c.keys()].some((k) => k.includes('10.9.0.2')), false, 'un-NATed flows are not counted');
});

test('goneTargets: real servers that left a TCP service\'s map, all of a removed service\'s, none of UDP', () => {
  const rs = (address: string, weight = 1): RealServerSpec => ({ id: `${address}:80`, address, port: 80, weight, method: 'nat' });
  const web = (...servers: RealServerSpec[]): ServiceSpec => ({ id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr', realServers: servers });
  const dns: ServiceSpec = { id: 'udp:10.0.0.1:53', family: 4, protocol: 'udp', address: '10.0.0.1', port: 53, scheduler: 'rr', realServers: [rs('10.0.1.1')] };
  const a = tableModel({ services: [web(rs('10.0.1.1'), rs('10.0.1.2')), dns] });
  const vip = { address: '10.0.0.1', protocol: 'tcp', port: 80 };
  assert.deepEqual(goneTargets(a.services, tableModel({ services: [web(rs('10.0.1.1'), rs('10.0.1.2', 0)), dns] })), [{ address: '10.0.1.2', port: 80, vip }]);
  assert.deepEqual(goneTargets(a.services, a), []);
  // Equal but rebuilt (the path that skips unchanged services compares data paths, not objects), and a
  // changed map that keeps every server: nothing gone either way.
  assert.deepEqual(goneTargets(a.services, tableModel({ services: [web(rs('10.0.1.1'), rs('10.0.1.2')), dns] })), []);
  assert.deepEqual(goneTargets(tableModel({ services: [{ ...web(rs('10.0.1.1'), rs('10.0.1.2')), scheduler: 'wrr' }] }).services,
    tableModel({ services: [{ ...web(rs('10.0.1.1', 3), rs('10.0.1.2')), scheduler: 'wrr' }] })), []);
  assert.deepEqual(goneTargets(a.services, tableModel({ services: [] })).map((t) => t.address), ['10.0.1.1', '10.0.1.2']);
  const fw = tableModel({ services: [{ id: 'fwmark:6:7', family: 6, protocol: 'tcp', fwmark: 7, scheduler: 'rr', realServers: [{ id: 'fd00::11', address: 'fd00::11', port: 0, weight: 1, method: 'nat' }] }] });
  assert.deepEqual(goneTargets(fw.services, tableModel({ services: [] })), [{ address: 'fd00::11', port: 0 }]);
});

test('forgetClosedArgs deletes only CLOSE entries answered by that real server (and, for a VIP service, sent to its VIP)', () => {
  assert.deepEqual(forgetClosedArgs({ address: '10.0.1.2', port: 80, vip: { address: '10.0.0.1', protocol: 'tcp', port: 80 } }),
    ['-D', '-f', 'ipv4', '-p', 'tcp', '--state', 'CLOSE', '--reply-src', '10.0.1.2', '--reply-port-src', '80', '--orig-dst', '10.0.0.1', '--orig-port-dst', '80']);
  assert.deepEqual(forgetClosedArgs({ address: 'fd00::11', port: 0 }), ['-D', '-f', 'ipv6', '-p', 'tcp', '--state', 'CLOSE', '--reply-src', 'fd00::11']);
});

test('withClosedEntries keeps only the targets some CLOSE entry still points at', () => {
  const text = [
    'ipv4     2 tcp      6 8 CLOSE src=10.9.0.1 dst=10.9.0.100 sport=40003 dport=80 src=10.10.0.12 dst=10.9.0.1 sport=80 dport=40003 [ASSURED] mark=0 zone=0 use=2',
    'ipv4     2 tcp      6 100 TIME_WAIT src=10.9.0.1 dst=10.9.0.100 sport=40001 dport=80 src=10.10.0.11 dst=10.9.0.1 sport=80 dport=40001 [ASSURED] mark=0 zone=0 use=2',
  ].join('\n');
  const vip = { address: '10.9.0.100', protocol: 'tcp', port: 80 };
  const rs2 = { address: '10.10.0.12', port: 80, vip };
  assert.deepEqual(withClosedEntries(text, [{ address: '10.10.0.11', port: 80, vip }, rs2, { address: '10.10.0.12', port: 80, vip: { ...vip, port: 81 } }]), [rs2]);
  assert.deepEqual(withClosedEntries(text, [{ address: '10.10.0.12', port: 0 }]).length, 1);
});
