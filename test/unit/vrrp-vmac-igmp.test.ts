// The VMAC IGMP/MLD table (keepalived 2.2.7's, measured: docs/vrrp.md "Virtual MAC"): the ruleset for
// each family, disableLocalIgmp, the other family of excluded VIPs, settings, and VmacLinks driving it
// over a recording I/O (installed with the links, rewritten only on change, deleted on stop).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_VMAC_NFT, VmacIgmp, vmacNftScript } from '../../daemon/vrrp/vmac-igmp.js';
import { vmacMembers } from '../../daemon/vrrp/vmac.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { VmacLinks, type VmacIo } from '../../daemon/vrrp/vmac-links.js';
import type { LinkDetail } from '../../daemon/net/rtnl.js';

const V4 = { name: 'V4', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], vmac: {} };
const V6 = { name: 'V6', interface: 'eth0', vrid: 52, priority: 100, vips: ['fd00::100/64'], vmac: {} };

test('the ruleset: keepalived 2.2.7\'s two tables, chains and rules for a v4 and a v6 VMAC on eth0', () => {
  const o = normalizeOptions({ instances: [V4, V6] });
  const script = vmacNftScript(vmacMembers(o), o.nftables, false);
  assert.equal(
    script,
    [
      'table ip lvsd_vrrp', 'delete table ip lvsd_vrrp',
      'table ip lvsd_vrrp {',
      '  map vmac_map {', '    type iface_index : iface_index', '    elements = { "vrrp.51" : "eth0" }', '  }',
      '  chain out {', '    type filter hook output priority -1; policy accept;',
      '    ip protocol igmp meta oifkind "macvlan" dup to ip daddr device oif map @vmac_map drop',
      '  }', '}',
      'table ip6 lvsd_vrrp', 'delete table ip6 lvsd_vrrp',
      'table ip6 lvsd_vrrp {',
      '  map vmac_map {', '    type iface_index : iface_index', '    elements = { "vrrp.52" : "eth0" }', '  }',
      '  set vmac_set {', '    type iface_index', '    elements = { "vrrp.52" }', '  }',
      '  chain out {', '    type filter hook output priority -1; policy accept;',
      '    icmpv6 type mld2-listener-report meta oifkind "macvlan" dup to ip6 daddr device oif map @vmac_map drop',
      '    icmpv6 type nd-router-solicit meta oifkind "macvlan" oif @vmac_set drop',
      '  }', '}',
      '',
    ].join('\n'),
  );
});

test('disableLocalIgmp drops the ip table only (keepalived keeps the ip6 one); excluded VIPs of the other family add the VMAC there; settings', () => {
  const o = normalizeOptions({ instances: [V4, V6], disableLocalIgmp: true });
  const s = vmacNftScript(vmacMembers(o), o.nftables, true);
  assert.doesNotMatch(s, /table ip lvsd_vrrp \{/);
  assert.match(s, /table ip6 lvsd_vrrp \{/);
  assert.match(s, /delete table ip lvsd_vrrp/, 'one left by an earlier run still goes');
  const mixed = normalizeOptions({ instances: [{ ...V4, excludedVips: ['fd00::5/64'] }] });
  assert.deepEqual(vmacMembers(mixed), [{ name: 'vrrp.51', parent: 'eth0', families: [4, 6] }]);
  const c = normalizeOptions({ instances: [V4], nftables: { table: 'ka', priority: -150, counters: true } });
  const cs = vmacNftScript(vmacMembers(c), c.nftables, false, 'lvsd_vrrp');
  assert.match(cs, /delete table ip lvsd_vrrp\n/, 'a renamed table: the old one is removed');
  assert.match(cs, /priority -150;/);
  assert.match(cs, /igmp meta oifkind "macvlan" counter dup/);
  assert.throws(() => normalizeOptions({ instances: [V4], nftables: { table: 'a b' } }), /nftables\.table: "a b" is not an nftables table name/);
  assert.throws(() => normalizeOptions({ instances: [V4], nftables: { priority: 1.5 } }), /nftables\.priority: 1\.5/);
  assert.deepEqual(normalizeOptions({ instances: [V4] }).nftables, DEFAULT_VMAC_NFT);
});

test('VmacIgmp: nothing run without VMACs; the same ruleset is not rewritten; a failure is a warning and is retried', async () => {
  const runs: string[] = [];
  const warns: string[] = [];
  let fail = false;
  const g = new VmacIgmp((s) => (fail ? Promise.reject(new Error('nft: not found')) : (runs.push(s), Promise.resolve())), (m) => warns.push(m));
  const o = normalizeOptions({ instances: [V4] });
  await g.sync([], o.nftables, false);
  assert.equal(runs.length, 0, 'no nft for an engine that never had a VMAC');
  fail = true;
  await g.sync(vmacMembers(o), o.nftables, false);
  assert.match(warns[0] ?? '', /cannot install the nftables table lvsd_vrrp .*nft: not found/);
  fail = false;
  await g.sync(vmacMembers(o), o.nftables, false);
  await g.sync(vmacMembers(o), o.nftables, false);
  assert.equal(runs.length, 1);
  await g.sync([], o.nftables, false);
  assert.equal(runs[1], 'table ip lvsd_vrrp\ndelete table ip lvsd_vrrp\ntable ip6 lvsd_vrrp\ndelete table ip6 lvsd_vrrp\n');
  await g.sync([], o.nftables, false);
  assert.equal(runs.length, 2);
});

test('VmacLinks: the table comes with the links (ours only), follows a reload and goes on stop', async () => {
  const eth0: LinkDetail = { index: 2, name: 'eth0', up: true, mac: Buffer.alloc(6, 1), kind: { kind: 'veth' }, parent: 0, adminUp: true };
  const links: LinkDetail[] = [eth0, { index: 9, name: 'vrrp.52', up: true, mac: Buffer.from('020000000052', 'hex'), kind: { kind: 'macvlan', macvlanMode: 'bridge' }, parent: 2, adminUp: true }];
  const scripts: string[] = [];
  const io: VmacIo = {
    linkDetails: () => Promise.resolve(links.map((l) => ({ ...l }))),
    addMacvlan: (name, parent, mac) => {
      links.push({ index: 10 + links.length, name, up: true, mac, kind: { kind: 'macvlan', macvlanMode: 'private' }, parent, adminUp: true });
      return Promise.resolve();
    },
    addIpvlan: () => Promise.resolve(),
    setLinkUp: () => Promise.resolve(),
    deleteLink: (i) => {
      links.splice(links.findIndex((l) => l.index === i), 1);
      return Promise.resolve(true);
    },
    addresses: () => Promise.resolve([]),
    addAddress: () => Promise.resolve(true),
    readConf: () => 0,
    writeConf: () => undefined,
    writeConf6: () => undefined,
    nftScript: (s) => {
      scripts.push(s);
      return Promise.resolve();
    },
    close: () => undefined,
  };
  const v = new VmacLinks(io, () => undefined);
  // vrrp.52 is a stranger's (wrong MAC): refused, so it is not in the map.
  const both = normalizeOptions({ instances: [V4, V6] });
  await v.prepare(both);
  assert.equal(scripts.length, 1);
  assert.match(scripts[0] ?? '', /elements = \{ "vrrp\.51" : "eth0" \}/);
  assert.doesNotMatch(scripts[0] ?? '', /vrrp\.52/);
  const one = normalizeOptions({ instances: [V4] });
  await v.prepare(one);
  await v.release(one);
  assert.equal(scripts.length, 1, 'unchanged: not rewritten');
  await v.release(null);
  assert.equal(scripts.length, 2);
  assert.doesNotMatch(scripts[1] ?? '', /\{/, 'stop: only deletions');
});
