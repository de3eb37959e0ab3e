// garp_group blocks and vrrp_garp_interval / vrrp_gna_interval → vrrp.garpGroups, with their lines, and
// what keepalived 2.2.7 warns about and drops (a group without a gap, an interface in two groups).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { diag, importText } from './keepalived-memfs.js';

const VI = 'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n';

test('garp_group (interface, interfaces { }) and the global vrrp_garp_interval / vrrp_gna_interval become vrrp.garpGroups, each value with its line', () => {
  const r = importText(
    'global_defs {\n vrrp_garp_interval 0.01\n vrrp_gna_interval 0.02\n}\n' + // lines 1-4
      'garp_group {\n garp_interval 0.05\n interface eth0\n}\n' + // 5-8
      'garp_group {\n gna_interval 0.1\n garp_interval 1.5\n interfaces {\n  eth1\n  eth2\n }\n}\n' + // 9-16
      VI,
  );
  assert.deepEqual(diag(r), []);
  assert.deepEqual(r.config.vrrp?.garpGroups, [
    { interval: '50ms', interfaces: ['eth0'] },
    { naInterval: '100ms', interval: '1500ms', interfaces: ['eth1', 'eth2'] },
    { interval: '10ms', naInterval: '20ms' },
  ]);
  assert.equal(r.config.vrrp.garp, undefined, 'vrrp_garp_interval no longer spaces one instance\'s burst');
  assert.match(r.yaml, /interval: 50ms # from [^\n]*:6/);
  assert.match(r.yaml, /- eth2 # from [^\n]*:14/);
  assert.match(r.yaml, /interval: 10ms # from [^\n]*:2/);
  assert.match(r.yaml, /naInterval: 20ms # from [^\n]*:3/);
  // It loads and reaches the engine, whose options accept it.
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const eo = vrrpOptions(loaded.config);
  assert.deepEqual(eo.garpGroups, [
    { interfaces: ['eth0'], intervalMs: 50, naIntervalMs: 0 },
    { interfaces: ['eth1', 'eth2'], intervalMs: 1500, naIntervalMs: 100 },
    { intervalMs: 10, naIntervalMs: 20 },
  ]);
  assert.deepEqual(normalizeOptions(eo).garpGroups, eo.garpGroups);
});

test('what keepalived drops is reported: a group without a gap, an interface already in a group, vrrp_garp_interval 0', () => {
  const r = importText(
    'global_defs {\n vrrp_garp_interval 0\n}\n' + // 1-3
      'garp_group {\n interface eth0\n}\n' + // 4-6
      'garp_group {\n garp_interval 0.05\n interface eth1\n}\n' + // 7-10
      'garp_group {\n garp_interval 0.05\n interfaces {\n  eth1\n  eth3\n }\n bogus 1\n}\n' + // 11-18
      VI,
  );
  assert.deepEqual(diag(r), ['4 garp_group', '14 eth1', '17 bogus']);
  assert.match(r.diagnostics[0]?.why ?? '', /neither garp_interval nor gna_interval/);
  assert.match(r.diagnostics[1]?.why ?? '', /in the garp_group at [^ ]*:9 already/);
  assert.deepEqual(r.config.vrrp?.garpGroups, [
    { interval: '50ms', interfaces: ['eth1'] },
    { interval: '50ms', interfaces: ['eth3'] },
  ]);
});

test('lvsd refuses what keepalived would drop, naming the field', () => {
  const bad = (groups: string): string => {
    const loaded = loadConfigText(`vrrp:\n  garpGroups:\n${groups}`, 'x.yaml');
    assert.equal(loaded.ok, false);
    return JSON.stringify(loaded);
  };
  assert.match(bad('    - interfaces: [eth0]\n'), /garpGroups\[0\].*neither interval nor naInterval/);
  assert.match(bad('    - { interfaces: [eth0], interval: 10ms }\n    - { interfaces: [eth1, eth0], interval: 10ms }\n'), /garpGroups\[1\].interfaces\[1\].*eth0 is in vrrp.garpGroups\[0\] already/);
  assert.match(bad('    - { interval: 10ms }\n    - { naInterval: 10ms }\n'), /garpGroups\[1\].*already covers every interface/);
  assert.throws(() => normalizeOptions({ instances: [], garpGroups: [{ interfaces: ['eth0'], intervalMs: 0, naIntervalMs: 0 }] }), /garpGroups\[0\]: neither/);
});
