// addressRequest: keepalived 2.2.7's virtual_ipaddress options as the rtnetlink request that carries them
// (what keepalived set is what `ip -j addr` showed for it in a namespace: see docs/vrrp.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressRequest } from '../../daemon/net/addr-request.js';

const b = (...n: number[]): Buffer => Buffer.from(n);

test('a plain IPv4 VIP: local = address, its prefix, scope global, no flags, no broadcast, no lifetime', () => {
  const r = addressRequest(3, '192.0.2.10/24');
  assert.deepEqual(r.data, { family: 2, prefixlen: 24, index: 3, scope: 0 });
  assert.deepEqual(r.attrs, { local: b(192, 0, 2, 10), address: b(192, 0, 2, 10) });
});

test('IPv4 options: label, scope, broadcast, noprefixroute; preferredLft ignored on IPv4 as keepalived does', () => {
  const r = addressRequest(3, '192.0.2.10/24', { label: 'eth0:v', scope: 'link', broadcast: '192.0.2.255', noPrefixRoute: true, preferredLft: 30 });
  assert.equal(r.data.scope, 253);
  assert.equal(r.attrs.label, 'eth0:v');
  assert.deepEqual(r.attrs.broadcast, b(192, 0, 2, 255));
  assert.deepEqual(r.attrs.flags, { noprefixroute: true });
  assert.equal(r.attrs.cacheInfo, undefined);
  assert.equal(addressRequest(3, '192.0.2.10/24', { scope: 'host' }).data.scope, 254);
});

test('peer: the address is local, the peer is IFA_ADDRESS, and the prefix is the peer\'s (host by default), not the address\'s', () => {
  const r = addressRequest(3, '192.0.2.10/24', { peer: '192.0.2.200' });
  assert.equal(r.data.prefixlen, 32);
  assert.deepEqual(r.attrs.local, b(192, 0, 2, 10));
  assert.deepEqual(r.attrs.address, b(192, 0, 2, 200));
  assert.equal(addressRequest(3, '192.0.2.10/24', { peer: '192.0.2.200/30' }).data.prefixlen, 30);
  const v6 = addressRequest(3, 'fd00::1/64', { peer: 'fd00::2' });
  assert.equal(v6.data.prefixlen, 128);
  assert.equal(v6.attrs.local?.length, 16);
  assert.throws(() => addressRequest(3, '192.0.2.10/24', { peer: 'fd00::2' }), /not an IPv4 address/);
});

test('IPv6: nodad unless dad is asked (keepalived -nodad), home and noprefixroute flags, no IFA_LOCAL without a peer', () => {
  const r = addressRequest(4, 'fd00::10/64');
  assert.deepEqual(r.data, { family: 10, prefixlen: 64, index: 4, scope: 0 });
  assert.equal(r.attrs.local, undefined);
  assert.deepEqual(r.attrs.flags, { nodad: true });
  assert.deepEqual(addressRequest(4, 'fd00::10/64', { dad: true, home: true, noPrefixRoute: true }).attrs.flags, { homeaddress: true, noprefixroute: true });
  assert.equal(addressRequest(4, 'fd00::10/64', { dad: true }).attrs.flags, undefined);
});

test('IPv6 preferred lifetime: 0 by default for a /128 (deprecated, as keepalived), forever otherwise; a number or forever when given', () => {
  assert.deepEqual(addressRequest(4, 'fd00::10/128').attrs.cacheInfo, { ifaPrefered: 0, ifaValid: 0xffffffff });
  assert.equal(addressRequest(4, 'fd00::10/128', { preferredLft: 'forever' }).attrs.cacheInfo, undefined);
  assert.equal(addressRequest(4, 'fd00::10/64').attrs.cacheInfo, undefined);
  assert.deepEqual(addressRequest(4, 'fd00::10/64', { preferredLft: 60 }).attrs.cacheInfo, { ifaPrefered: 60, ifaValid: 0xffffffff });
});
