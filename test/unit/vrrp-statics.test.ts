// static_ipaddress / static_routes / static_rules: the delta a reload applies, the importer (rule
// preferences counted as keepalived counts them), the config's checks at FILE:LINE:COL, and the engine
// setting them at start, changing them on a reload and removing them at stop on a fake host.
// test/netns/vrrp-directives.test.ts runs them beside keepalived 2.2.7.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_STATICS, staticDelta } from '../../daemon/vrrp/static-apply.js';
import { normalizeOptions, type VrrpOptions } from '../../daemon/vrrp/options.js';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { parseIP } from '../../daemon/net/addr.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { diag, importText } from './keepalived-memfs.js';

const statics = (o: Partial<VrrpOptions>) => normalizeOptions({ instances: [], ...o }).statics;

test('staticDelta: a reload removes what went and adds what came; what stays is not touched', () => {
  const a = statics({ staticIpaddresses: [{ address: '10.9.5.1/24', dev: 'eth0' }], staticRoutes: [{ to: '10.70.0.0/16', via: '10.0.0.254' }], staticRules: [{ from: '10.9.5.0/24', table: 100, priority: 100 }] });
  const b = statics({ staticIpaddresses: [{ address: '10.9.5.1/24', dev: 'eth0' }, { address: '10.9.6.1/24', dev: 'eth0' }], staticRoutes: [{ to: '10.71.0.0/16', via: '10.0.0.254' }], staticRules: [{ from: '10.9.5.0/24', table: 100, priority: 100 }] });
  const d = staticDelta(a, b);
  assert.deepEqual(d.add.addresses.map((x) => x.cidr), ['10.9.6.1/24']);
  assert.deepEqual(d.remove.addresses, []);
  assert.deepEqual(d.remove.routes.map((r) => r.to.address), ['10.70.0.0']);
  assert.deepEqual(d.add.routes.map((r) => r.to.address), ['10.71.0.0']);
  assert.deepEqual([d.add.rules, d.remove.rules], [[], []]);
  assert.deepEqual(staticDelta(b, NO_STATICS).remove, b, 'stop: everything goes');
});

test('engine options: a static address names its interface, a static route has a via or a dev', () => {
  assert.throws(() => statics({ staticIpaddresses: [{ address: '10.9.5.1/24', dev: '' }] }), /staticIpaddresses\[0\]: a static address names its interface/);
  assert.throws(() => statics({ staticRoutes: [{ to: '10.70.0.0/16' }] }), /staticRoutes\[0\]: a static route has a via or a dev/);
  assert.throws(() => statics({ staticRoutes: [{ to: '10.70.0.0/16', via: 'fd00::1' }] }), /staticRoutes\[0\]\.via: fd00::1 is not an IPv4 address/);
});

test('engine: set at start whatever the state, changed by a reload, removed at stop', async () => {
  const calls: string[] = [];
  const io: RuntimeIo = {
    links: () => Promise.resolve([{ index: 2, name: 'eth0', up: true, mac: null }]),
    addresses: () => Promise.resolve([{ family: 4, address: parseIP('10.0.0.1'), prefixLength: 24, scope: 0 }]),
    addAddress: (i, c) => { calls.push(`+addr ${c}@${i}`); return Promise.resolve(true); },
    delAddress: (i, c) => { calls.push(`-addr ${c}@${i}`); return Promise.resolve(true); },
    addRoute: (m) => { calls.push(`+route oif ${m.attrs.oif ?? 0}`); return Promise.resolve(true); },
    delRoute: (m) => { calls.push(`-route oif ${m.attrs.oif ?? 0}`); return Promise.resolve(true); },
    addRule: (m) => { calls.push(`+rule ${m.attrs.priority ?? ''}`); return Promise.resolve(true); },
    delRule: (m) => { calls.push(`-rule ${m.attrs.priority ?? ''}`); return Promise.resolve(true); },
    watchLinks: () => undefined,
    openSocket: () => ({ send: () => undefined, close: () => undefined }),
    announce: () => undefined,
    close: () => undefined,
  };
  const base = { instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'] }], staticIpaddresses: [{ address: '10.9.5.1/24', dev: 'eth0' }], staticRoutes: [{ to: '10.71.0.0/16', dev: 'eth0' }], staticRules: [{ from: '10.9.5.0/24', table: 100, priority: 16384 }] };
  const rt = new VrrpRuntime(normalizeOptions(base), io, { transition: () => undefined, log: () => undefined });
  await rt.start();
  assert.deepEqual(calls.filter((c) => !c.includes('10.0.0.100')), ['+addr 10.9.5.1/24@2', '+route oif 2', '+rule 16384'], 'at start, before any instance is master');
  calls.length = 0;
  await rt.reconfigure(normalizeOptions({ ...base, staticRules: [] }));
  assert.deepEqual(calls, ['-rule 16384'], 'a reload changes only what changed');
  calls.length = 0;
  await rt.stop();
  assert.deepEqual(calls.filter((c) => !c.includes('10.0.0.100')), ['-route oif 2', '-addr 10.9.5.1/24@2'], 'at stop: routes, then addresses');
});

test('importer: the three blocks carried with their lines; a rule without a preference gets keepalived\'s 16384, 16383, … in reading order, static and virtual alike', () => {
  const r = importText(
    'static_ipaddress {\n 10.9.5.1/24 dev eth0 scope link\n 10.9.6.1/24\n}\n' +
      'static_routes {\n 10.70.0.0/16 via 10.0.0.254\n 10.71.0.0/16 dev eth0\n 10.72.0.0/16\n}\n' +
      'static_rules {\n from 10.9.5.0/24 table 100\n to fd00::/64 table 100\n from 10.9.7.0/24 table 100 pref 7\n}\n' +
      'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n virtual_rules {\n  from 10.0.0.100 table 101\n }\n}\n',
  );
  assert.deepEqual(diag(r), ['3 10.9.6.1/24', '8 10.72.0.0/16'], 'an address without dev and a route with neither via nor dev are reported');
  const v = r.config.vrrp;
  assert.deepEqual(v?.staticIpaddresses, [{ address: '10.9.5.1/24', dev: 'eth0', scope: 'link' }]);
  assert.deepEqual(v.staticRoutes, [{ to: '10.70.0.0/16', via: '10.0.0.254' }, { to: '10.71.0.0/16', dev: 'eth0', scope: 'global' }], 'keepalived\'s scope for a route without a gateway is universe');
  assert.deepEqual(v.staticRules?.map((x) => x.priority), [16384, 16384, 7], 'IPv4 and IPv6 counted apart; a written one kept');
  assert.equal(v.instances?.[0]?.virtualRules?.[0]?.priority, 16383, 'the virtual rule read after the static ones');
  assert.match(r.yaml, /priority: 16384 # from [^\n]*:11/);
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const eo = vrrpOptions(loaded.config);
  assert.deepEqual(eo.staticIpaddresses, [{ address: '10.9.5.1/24', dev: 'eth0', scope: 'link' }]);
  assert.equal(eo.staticRoutes?.length, 2);
});

test('config: a static address without dev and a static route with neither via nor dev are refused at FILE:LINE:COL', () => {
  const bad = loadConfigText('vrrp:\n  staticIpaddresses:\n    - 10.9.5.1/24\n  staticRoutes:\n    - { to: 10.70.0.0/16 }\n', 'x.yaml');
  assert.equal(bad.ok, false);
  const text = JSON.stringify(bad);
  assert.match(text, /"line":3,[^}]*"path":"vrrp\.staticIpaddresses\[0\]","message":"a static address names its interface/);
  assert.match(text, /"line":5,[^}]*"path":"vrrp\.staticRoutes\[0\]","message":"a static route has a via or a dev/);
});
