// virtual_routes / virtual_rules: the checks, the rtnetlink messages, the order against the VIPs, the
// config file's checks at FILE:LINE:COL and the keepalived importer's line grammar.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeRoutes, normalizeRules, routeMessage, ruleMessage, RTPROT_KEEPALIVED, describeRoute, describeRule } from '../../daemon/vrrp/virtual-routes.js';
import { applyRoutes } from '../../daemon/vrrp/route-apply.js';
import { parseRoute, parseRule } from '../../daemon/config/keepalived/map-routes.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { importText } from './keepalived-memfs.js';

const errs = (): { err: (f: string, m: string) => void; list: string[] } => {
  const list: string[] = [];
  return { list, err: (f, m) => list.push(`${f}: ${m}`) };
};

test('routes: defaults filled (main table, link scope without via), wrong families and typed routes with a gateway refused by field', () => {
  const e = errs();
  const r = normalizeRoutes([{ to: '10.10.0.0/16', via: '10.0.0.254', metric: 5 }, { to: '10.13.0.0/16', dev: 'eth1' }, { to: 'default', via: 'fd00::1' }, { to: '10.12.0.0/16', type: 'blackhole' }], e.err);
  assert.deepEqual(e.list, []);
  assert.deepEqual(r.map((x) => [x.family, x.table, x.scope, describeRoute(x)]), [
    [4, 254, 'global', '10.10.0.0/16 via 10.0.0.254 metric 5'],
    [4, 254, 'link', '10.13.0.0/16 dev eth1'],
    [6, 254, 'global', 'default via fd00::1'],
    [4, 254, 'global', 'blackhole 10.12.0.0/16'],
  ]);
  const bad = errs();
  normalizeRoutes([{ to: '10.0.0.0/8', via: 'fd00::1' }, { to: '10.1.0.0/16', type: 'blackhole', dev: 'eth0' }, { to: 'nonsense' }, { to: '10.2.0.0/16', table: 0 }], bad.err);
  assert.deepEqual(bad.list.map((l) => l.split(':')[0]), ['virtualRoutes[0].via', 'virtualRoutes[1].type', 'virtualRoutes[2].to', 'virtualRoutes[3].table']);
});

test('rules: a lookup needs a table, from/to of one family; the message carries proto keepalived and big table ids in RTA_TABLE', () => {
  const bad = errs();
  normalizeRules([{ from: '10.0.0.1' }, { from: '10.0.0.0/24', to: 'fd00::/64', table: 5 }], bad.err);
  assert.deepEqual(bad.list, ['virtualRules[0].table: a rule needs a table to look up (or a type: blackhole, unreachable, prohibit)', 'virtualRules[1].to: from and to are of different address families']);
  const e = errs();
  const [rule] = normalizeRules([{ from: '10.0.0.100', table: 1000, priority: 100, fwmark: 5 }], e.err);
  assert.ok(rule);
  const m = ruleMessage(rule);
  assert.deepEqual(m.data, { family: 2, dstLen: 0, srcLen: 32, table: 252, action: 1 });
  assert.deepEqual({ ...m.attrs, src: m.attrs.src?.toString('hex') }, { protocol: RTPROT_KEEPALIVED, src: '0a000064', table: 1000, priority: 100, fwmark: 5 });
  assert.equal(describeRule(rule), '100: from 10.0.0.100/32 fwmark 5 lookup 1000');
  const [route] = normalizeRoutes([{ to: '10.10.0.0/16', via: '10.0.0.254', src: '10.0.0.100', table: 100 }], e.err);
  assert.ok(route);
  const rm = routeMessage(route, 3);
  assert.deepEqual(rm.data, { family: 2, dstLen: 16, table: 100, protocol: 18, scope: 0, type: 1 });
  assert.deepEqual(Object.keys(rm.attrs).sort(), ['dst', 'gateway', 'oif', 'prefsrc', 'table']);
});

test('applyRoutes: routes then rules going up, rules then routes going down; a route on a missing interface is logged, the rest still applied', async () => {
  const calls: string[] = [];
  const rec = (what: string) => (m: { attrs: { dst?: Buffer; src?: Buffer } }) => {
    calls.push(`${what} ${(m.attrs.dst ?? m.attrs.src)?.toString('hex') ?? '-'}`);
    return Promise.resolve(true);
  };
  const io = { addRoute: rec('+route'), delRoute: rec('-route'), addRule: rec('+rule'), delRule: rec('-rule') };
  const e = errs();
  const set = { interface: 'eth0', virtualRoutes: normalizeRoutes([{ to: '10.1.0.0/16', dev: 'eth9' }, { to: '10.2.0.0/16' }], e.err), virtualRules: normalizeRules([{ from: '10.3.0.1', table: 5 }, { from: '10.3.0.2', table: 5 }], e.err) };
  const logs: string[] = [];
  const ifindex = (n: string): number => (n === 'eth0' ? 2 : 0);
  await applyRoutes(io, set, true, ifindex, (l, msg) => logs.push(`${l} ${msg}`));
  await applyRoutes(io, set, false, ifindex, (l, msg) => logs.push(`${l} ${msg}`));
  assert.deepEqual(calls, ['+route 0a020000', '+rule 0a030001', '+rule 0a030002', '-rule 0a030002', '-rule 0a030001', '-route 0a020000']);
  assert.equal(logs.filter((l) => l.startsWith('error virtual route 10.1.0.0/16 dev eth9: no interface eth9')).length, 2);
});

test('importer grammar: keepalived\'s route and rule lines as measured with keepalived 2.2.7', () => {
  assert.deepEqual(parseRoute(['10.10.0.0/16', 'via', '10.0.0.254', 'dev', 'eth0', 'metric', '5']), { to: '10.10.0.0/16', via: '10.0.0.254', dev: 'eth0', metric: 5 });
  assert.deepEqual(parseRoute(['blackhole', '10.12.0.0/16']), { to: '10.12.0.0/16', type: 'blackhole' });
  assert.deepEqual(parseRoute(['src', '10.0.0.100', '10.13.0.0/16', 'dev', 'eth0', 'scope', 'link', 'table', 'main']), { to: '10.13.0.0/16', dev: 'eth0', src: '10.0.0.100', table: 254, scope: 'link' });
  assert.deepEqual(parseRoute(['to', 'default', 'gw', '10.0.0.1', 'no_track']), { to: 'default', via: '10.0.0.1' });
  assert.equal(parseRoute(['10.14.0.0/16', 'dev', 'eth0', 'proto', 'static']), 'proto is not carried by lvsd');
  assert.deepEqual(parseRule(['from', '10.0.0.100', 'table', '100', 'priority', '100']), { from: '10.0.0.100/32', table: 100, priority: 100 });
  assert.deepEqual(parseRule(['to', '10.15.0.0/16', 'lookup', '100', 'pref', '101', 'fwmark', '0x5/0xff']), { to: '10.15.0.0/16', table: 100, priority: 101, fwmark: 5, fwmask: 255 });
  assert.deepEqual(parseRule(['from', 'all', 'blackhole']), { type: 'blackhole' });
  assert.equal(parseRule(['from', '10.0.0.1']), 'no table to look up');
});

test('importer and config: virtual_routes and virtual_rules carried; a bad line reported with its line; the config file checks them at FILE:LINE:COL', () => {
  const VI = (body: string) => `vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n${body}\n}\n`;
  const r = importText(VI(' virtual_routes {\n  10.10.0.0/16 via 10.0.0.254\n  10.14.0.0/16 dev eth0 proto static\n }\n virtual_rules {\n  from 10.0.0.100 table 100\n }'));
  const inst = (r.config.vrrp as { instances: { virtualRoutes?: unknown; virtualRules?: unknown }[] }).instances[0];
  assert.deepEqual(inst?.virtualRoutes, [{ to: '10.10.0.0/16', via: '10.0.0.254' }]);
  // keepalived sets 16384 for a rule written without a preference (counting down); the importer writes it.
  assert.deepEqual(inst.virtualRules, [{ from: '10.0.0.100/32', table: 100, priority: 16384 }]);
  assert.deepEqual(r.diagnostics.map((d) => `${d.line} ${d.why}`), ['9 proto is not carried by lvsd; this route is not carried over']);
  const ok = loadConfigText('vrrp:\n  instances:\n    - name: VI_1\n      interface: eth0\n      virtualRouterId: 51\n      virtualIpaddresses: [10.0.0.100/24]\n      virtualRoutes:\n        - { to: 10.10.0.0/16, via: 10.0.0.254 }\n', 'l.yaml');
  assert.ok(ok.ok);
  assert.deepEqual(vrrpOptions(ok.config).instances[0]?.virtualRoutes, [{ to: '10.10.0.0/16', via: '10.0.0.254' }]);
  const bad = loadConfigText('vrrp:\n  instances:\n    - name: VI_1\n      interface: eth0\n      virtualRouterId: 51\n      virtualIpaddresses: [10.0.0.100/24]\n      virtualRoutes:\n        - { to: 10.10.0.0/16, via: "fd00::1" }\n', 'l.yaml');
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors.map((x) => `${x.file}:${x.line} ${x.path}`), ['l.yaml:8 vrrp.instances[0].virtualRoutes[0].via']);
});

test('importer grammar: a malformed prefix (keepalived\'s own sample has "192.168.200./24") is reported, not carried', () => {
  assert.equal(parseRule(['to', '192.168.200./24', 'table', '100']), 'to 192.168.200./24 is not an address or prefix');
  assert.equal(parseRoute(['10.0.0.0/33', 'dev', 'eth0']), '10.0.0.0/33 is not an address or prefix');
  assert.equal(parseRoute(['10.0.0.0/8', 'via', 'gateway']), 'via gateway is not an address');
});
