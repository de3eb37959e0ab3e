import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import { ConfigFile } from '../../daemon/config/schema.js';
import { registerFormats, parseDuration, parseCidr, parseHostPort, ipFamily } from '../../daemon/config/formats.js';
import { SCHEMA_PATH, renderSchema } from '../../scripts/gen-schema.js';

registerFormats();
const validator = Compile(ConfigFile);

test('config/lvsd.schema.json is current (regenerate: node dist/scripts/gen-schema.js)', () => {
  assert.equal(readFileSync(SCHEMA_PATH, 'utf8'), renderSchema());
});

test('the exported JSON Schema is closed at every object level (typos are errors)', () => {
  const open: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) { node.forEach((n, i) => { walk(n, `${path}/${i}`); }); return; }
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (o.type === 'object' && (o.properties !== undefined || o.patternProperties !== undefined) && o.additionalProperties !== false) open.push(path);
    for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
  };
  walk(JSON.parse(renderSchema()), '');
  assert.deepEqual(open, []);
});

const minimal = {
  vrrp: { instances: [{ name: 'VI_1', interface: 'eth0', virtualRouterId: 51, virtualIpaddresses: ['192.0.2.10/24'] }] },
  virtualServers: [{ address: '192.0.2.10', port: 80, realServers: [{ address: '10.0.1.11', port: 80 }] }],
};

const cases: [string, (c: typeof minimal & Record<string, unknown>) => void, string | undefined][] = [
  ['minimal config', () => undefined, undefined],
  ['priority 0', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { priority: 0 }); }, '/vrrp/instances/0/priority'],
  ['priority 256', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { priority: 256 }); }, '/vrrp/instances/0/priority'],
  ['VIP not an address', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { virtualIpaddresses: ['192.0.2.300/24'] }); }, '/vrrp/instances/0/virtualIpaddresses/0'],
  ['VIP prefix too long', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { virtualIpaddresses: ['192.0.2.1/33'] }); }, '/vrrp/instances/0/virtualIpaddresses/0'],
  ['IPv6 VIP ok', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { virtualIpaddresses: ['2001:db8::10/64', { address: 'fd00::1', dev: 'eth1' }] }); }, undefined],
  ['unknown scheduler', (c) => { Object.assign(c.virtualServers[0] ?? {}, { scheduler: 'roundrobin' }); }, '/virtualServers/0/scheduler'],
  ['weight out of range', (c) => { Object.assign(c.virtualServers[0]?.realServers[0] ?? {}, { weight: 70000 }); }, '/virtualServers/0/realServers/0/weight'],
  ['unknown key', (c) => { c.vrrpp = {}; }, '/vrrpp'],
  ['duration strings and numbers', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { advertInterval: '250ms', preemptDelay: 2 }); }, undefined],
  ['bad duration', (c) => { Object.assign(c.vrrp.instances[0] ?? {}, { advertInterval: '1 sec' }); }, '/vrrp/instances/0/advertInterval'],
  ['api.listen not host:port', (c) => { c.api = { listen: '127.0.0.1' }; }, '/api/listen'],
];

for (const [name, mutate, badPath] of cases) {
  test(`schema: ${name}`, () => {
    const c = structuredClone(minimal) as typeof minimal & Record<string, unknown>;
    mutate(c);
    const errors = [...validator.Errors(c)];
    if (badPath === undefined) assert.deepEqual(errors, []);
    else assert.ok(errors.some((e) => e.instancePath === badPath), JSON.stringify(errors));
  });
}

test('durations: units, bare seconds, rejects', () => {
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('2m'), 120000);
  assert.equal(parseDuration('3'), 3000);
  assert.equal(parseDuration(0.01), 10);
  assert.equal(parseDuration('1 s'), undefined);
  assert.equal(parseDuration(-1), undefined);
});

test('addresses: CIDR, host:port, families', () => {
  assert.deepEqual(parseCidr('192.0.2.1'), { address: '192.0.2.1', prefix: 32, family: 4 });
  assert.deepEqual(parseCidr('2001:db8::1/64'), { address: '2001:db8::1', prefix: 64, family: 6 });
  assert.equal(parseCidr('2001:db8::1/129'), undefined);
  assert.equal(parseCidr('10.0.0.1/'), undefined);
  assert.deepEqual(parseHostPort('[::1]:9180'), { host: '::1', port: 9180 });
  assert.deepEqual(parseHostPort('localhost:80'), { host: 'localhost', port: 80 });
  assert.equal(parseHostPort('::1:9180'), undefined);
  assert.equal(parseHostPort('127.0.0.1:0'), undefined);
  assert.equal(ipFamily('fe80::1%eth0'), undefined);
});
