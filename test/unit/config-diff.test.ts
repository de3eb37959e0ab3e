import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadConfigText } from '../../daemon/config/load.js';
import { changedFields, deepEqual, describeDiff, diffConfig, isEmptyDiff } from '../../daemon/config/diff.js';
import { formatError } from '../../daemon/config/errors.js';
import type { Config } from '../../daemon/config/types.js';

function cfg(text: string): Config {
  const r = loadConfigText(text);
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config;
}

const BASE = `
node: { name: d1 }
vrrp:
  scripts: { chk: { command: "true" } }
  instances:
    - { name: VI_1, interface: eth0, virtualRouterId: 51, priority: 150, virtualIpaddresses: [192.0.2.10/24] }
    - { name: VI_2, interface: eth0, virtualRouterId: 52, virtualIpaddresses: [192.0.2.11/24] }
  syncGroups: [{ name: VG, instances: [VI_1, VI_2] }]
virtualServers:
  - name: web
    address: 192.0.2.10
    port: 80
    healthCheck: { type: http, http: { path: /health } }
    realServers: [{ address: 10.0.1.11 }, { address: 10.0.1.12 }, { address: 10.0.1.13 }]
  - { address: 192.0.2.11, port: 443, realServers: [{ address: 10.0.1.21 }] }
`;

test('identical configs give an empty diff', () => {
  const d = diffConfig(cfg(BASE), cfg(BASE));
  assert.ok(isEmptyDiff(d));
  assert.deepEqual(describeDiff(d), []);
});

test('a real server added, one removed, one weight changed: only those, under their service', () => {
  const next = BASE.replace('[{ address: 10.0.1.11 }, { address: 10.0.1.12 }, { address: 10.0.1.13 }]', '[{ address: 10.0.1.11, weight: 5 }, { address: 10.0.1.13 }, { address: 10.0.1.14 }]');
  const d = diffConfig(cfg(BASE), cfg(next));
  assert.equal(d.virtualServers.changed.length, 1);
  const web = d.virtualServers.changed[0];
  assert.ok(web);
  assert.equal(web.key, 'tcp:192.0.2.10:80');
  assert.deepEqual(web.fields, []);
  assert.deepEqual(web.realServers.added.map((r) => r.id), ['10.0.1.14:80']);
  assert.deepEqual(web.realServers.removed.map((r) => r.id), ['10.0.1.12:80']);
  assert.deepEqual(web.realServers.changed.map((c) => [c.key, c.fields]), [['10.0.1.11:80', ['weight']]]);
  assert.deepEqual(d.instances, { added: [], removed: [], changed: [] });
  assert.deepEqual(describeDiff(d), ['+ real server web 10.0.1.14:80', '- real server web 10.0.1.12:80', '~ real server web 10.0.1.11:80: weight']);
});

test('a service-level health check change shows on the service and on each real server it reaches', () => {
  const d = diffConfig(cfg(BASE), cfg(BASE.replace('path: /health', 'path: /healthz')));
  const web = d.virtualServers.changed[0];
  assert.ok(web);
  assert.deepEqual(web.fields, ['healthCheck.http.path']);
  assert.equal(web.realServers.changed.length, 3);
  assert.deepEqual(web.realServers.changed[0]?.fields, ['healthCheck.http.path']);
});

test('instances: changed priority, removed, added; sync group membership', () => {
  const next = BASE.replace('priority: 150', 'priority: 200')
    .replace('{ name: VI_2, interface: eth0, virtualRouterId: 52', '{ name: VI_3, interface: eth0, virtualRouterId: 53')
    .replace('instances: [VI_1, VI_2]', 'instances: [VI_1, VI_3]');
  const d = diffConfig(cfg(BASE), cfg(next));
  assert.deepEqual(d.instances.changed.map((c) => [c.key, c.fields]), [['VI_1', ['priority']]]);
  assert.deepEqual(d.instances.added.map((i) => i.name), ['VI_3']);
  assert.deepEqual(d.instances.removed.map((i) => i.name), ['VI_2']);
  assert.deepEqual(d.syncGroups.changed.map((c) => [c.key, c.fields]), [['VG', ['instances']]]);
});

test('a virtual server moved to another port is a removal and an addition; a rename is a field change', () => {
  const d = diffConfig(cfg(BASE), cfg(BASE.replace('port: 443', 'port: 8443').replace('name: web', 'name: www')));
  assert.deepEqual(d.virtualServers.removed.map((v) => v.id), ['tcp:192.0.2.11:443']);
  assert.deepEqual(d.virtualServers.added.map((v) => v.id), ['tcp:192.0.2.11:8443']);
  assert.deepEqual(d.virtualServers.changed.map((c) => [c.key, c.fields]), [['tcp:192.0.2.10:80', ['name']]]);
});

test('daemon-wide settings and scripts', () => {
  const next = BASE.replace('node: { name: d1 }', 'node: { name: d2 }\ndataplane: userspace\nipvs: { drainTimeout: 5s }').replace('chk: { command: "true" }', 'chk: { command: "false" }');
  const d = diffConfig(cfg(BASE), cfg(next));
  assert.deepEqual(d.settings, ['dataplane', 'ipvs.drainTimeoutMs', 'node.name']);
  assert.deepEqual(d.scripts.changed.map((c) => [c.key, c.fields]), [['chk', ['command']]]);
});

test('changedFields: nested paths, lists whole, undefined = absent', () => {
  assert.deepEqual(changedFields({ a: 1, b: { c: 2, d: [1] } }, { a: 1, b: { c: 3, d: [1, 2] } }), ['b.c', 'b.d']);
  assert.deepEqual(changedFields({ a: 1, x: undefined }, { a: 1 }), []);
  assert.ok(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }));
  assert.ok(!deepEqual([1, 2], [2, 1]));
});

test('property: the real-server diff is exactly the set difference', () => {
  const addr = fc.integer({ min: 1, max: 40 }).map((n) => `10.0.1.${n}`);
  fc.assert(
    fc.property(fc.uniqueArray(addr, { maxLength: 12 }), fc.uniqueArray(addr, { maxLength: 12 }), (a, b) => {
      const mk = (list: string[]) => cfg(`virtualServers: [{ address: 192.0.2.1, port: 80, realServers: [${list.map((x) => `{ address: ${x} }`).join(', ')}] }]`);
      const d = diffConfig(mk(a), mk(b));
      const added = b.filter((x) => !a.includes(x)).map((x) => `${x}:80`).sort();
      const removed = a.filter((x) => !b.includes(x)).map((x) => `${x}:80`).sort();
      const change = d.virtualServers.changed[0];
      if (!added.length && !removed.length) { assert.ok(isEmptyDiff(d)); return; }
      assert.ok(change);
      assert.deepEqual(change.realServers.added.map((r) => r.id).sort(), added);
      assert.deepEqual(change.realServers.removed.map((r) => r.id).sort(), removed);
      assert.deepEqual(change.realServers.changed, []);
    }),
    { numRuns: 150 },
  );
});
