// use_vmac's pure parts: the link codec, the create/adopt/refuse decision, the instance as it runs on
// the macvlan, the VmacLinks supervisor over a recording I/O, the engine's option checks, the config
// file's checks and the keepalived importer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeLinkInfo, formatMac, ipvlanLinkInfo, macvlanLinkInfo, parseAttrs, virtualMac } from '../../daemon/net/link-codec.js';
import { attr } from '../../daemon/net/nlattr.js';
import { onVmac, planVmac, vmacSpecs, type VmacSpec } from '../../daemon/vrrp/vmac.js';
import { VmacLinks, type VmacIo } from '../../daemon/vrrp/vmac-links.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import type { LinkDetail } from '../../daemon/net/rtnl.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { importText } from './keepalived-memfs.js';

test('link codec: the macvlan IFLA_LINKINFO as the kernel lays it out, and read back', () => {
  const info = macvlanLinkInfo('private');
  // IFLA_INFO_KIND "macvlan\0" (12 bytes) | IFLA_INFO_DATA { IFLA_MACVLAN_MODE u32 1 }
  assert.equal(info.toString('hex'), '0c0001006d6163766c616e00' + '0c000200' + '0800010001000000');
  assert.deepEqual(decodeLinkInfo(info), { kind: 'macvlan', macvlanMode: 'private' });
  assert.deepEqual(decodeLinkInfo(macvlanLinkInfo('bridge')), { kind: 'macvlan', macvlanMode: 'bridge' });
  assert.deepEqual(decodeLinkInfo(attr(1, Buffer.from('veth\0'))), { kind: 'veth' });
  assert.equal(decodeLinkInfo(undefined), null);
  assert.equal(decodeLinkInfo(Buffer.alloc(0)), null);
  // Padding: a 5-byte payload takes 12 bytes; a truncated attribute ends the walk instead of reading past it.
  assert.equal(attr(1, Buffer.from('abcde')).length, 12);
  assert.deepEqual([...parseAttrs(Buffer.from('0800010001000000ff00', 'hex')).keys()], [1]);
});

test('virtual MAC: RFC 5798 §7.3 for both families; a VRID out of range is refused', () => {
  assert.equal(formatMac(virtualMac(51, 4)), '00:00:5e:00:01:33');
  assert.equal(formatMac(virtualMac(255, 6)), '00:00:5e:00:02:ff');
  assert.throws(() => virtualMac(0, 4), /VRID 0/);
});

const SPEC: VmacSpec = { instance: 'VI_1', name: 'vrrp.51', parent: 'eth0', mac: '00:00:5e:00:01:33', family: 4, otherFamily: false };
const eth0: LinkDetail = { index: 2, name: 'eth0', up: true, mac: Buffer.alloc(6, 1), kind: { kind: 'veth' }, parent: 0, adminUp: true };
const vm = (over: Partial<LinkDetail>): LinkDetail => ({ index: 7, name: 'vrrp.51', up: false, mac: virtualMac(51, 4), kind: { kind: 'macvlan', macvlanMode: 'private' }, parent: 2, adminUp: false, ...over });

test('planVmac: create when absent, adopt ours (same kind, parent, MAC), refuse anything else by name', () => {
  assert.deepEqual(planVmac(SPEC, [eth0]), { action: 'create', parentIndex: 2 });
  assert.deepEqual(planVmac(SPEC, [eth0, vm({})]), { action: 'adopt', index: 7, up: false });
  assert.deepEqual(planVmac(SPEC, [eth0, vm({ adminUp: true })]), { action: 'adopt', index: 7, up: true });
  const refused = (l: LinkDetail): string => {
    const p = planVmac(SPEC, [eth0, l]);
    return p.action === 'conflict' ? p.reason : `not refused: ${p.action}`;
  };
  assert.match(refused(vm({ mac: Buffer.from('020000000051', 'hex') })), /vrrp\.51 exists with MAC 02:00:00:00:00:51, not the virtual MAC 00:00:5e:00:01:33/);
  assert.match(refused(vm({ parent: 9 })), /on another interface than eth0/);
  assert.match(refused(vm({ kind: null })), /not a macvlan \(a plain device\)/);
  assert.deepEqual(planVmac(SPEC, []), { action: 'conflict', reason: 'interface eth0 missing' });
});

const opts = (vmac: { name?: string; xmitBase?: boolean }, extra: object = {}) =>
  normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24', { address: '10.9.0.1/24', dev: 'eth1' }], vmac, ...extra }] });

test('onVmac: the instance runs on the macvlan, its VIPs for eth0 move there, the adverts keep eth0\'s address as source; xmitBase keeps eth0', () => {
  const o = opts({});
  const i = o.instances[0];
  assert.ok(i);
  assert.deepEqual(i.vmac, { name: 'vrrp.51', parent: 'eth0', xmitBase: false });
  assert.deepEqual(vmacSpecs(o), [SPEC]);
  const r = onVmac(i, '10.0.0.1');
  assert.equal(r.interface, 'vrrp.51');
  assert.deepEqual(r.vips.map((v) => v.dev), ['vrrp.51', 'eth1']);
  assert.equal(r.unicastSrcIp, '10.0.0.1');
  const x = onVmac(opts({ name: 'vx51', xmitBase: true }).instances[0] ?? assert.fail(), '10.0.0.1');
  assert.equal(x.interface, 'eth0');
  assert.deepEqual(x.vips.map((v) => v.dev), ['vx51', 'eth1']);
  assert.equal(x.unicastSrcIp, undefined);
  const six = normalizeOptions({ instances: [{ name: 'V6', interface: 'eth0', vrid: 52, priority: 100, vips: ['fd00::1/64'], vmac: {} }] });
  assert.equal(vmacSpecs(six)[0]?.mac, '00:00:5e:00:02:34');
});

test('engine options: a bad or shared virtual MAC interface name is refused, naming the instance', () => {
  assert.throws(() => opts({ name: 'much-too-long-name' }), /instances\[0\] \(VI_1\)\.vmac\.name: "much-too-long-name" is not a valid interface name/);
  assert.throws(() => opts({ name: 'eth0' }), /cannot be the instance's own interface eth0/);
  assert.throws(
    () =>
      normalizeOptions({
        instances: [
          { name: 'A', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], vmac: { name: 'v1' } },
          { name: 'B', interface: 'eth1', vrid: 52, priority: 100, vips: ['10.0.1.100/24'], vmac: { name: 'v1' } },
        ],
      }),
    /instances\[1\] \(B\)\.vmac\.name: v1 is already the virtual MAC interface of A/,
  );
});

function recordingIo(links: LinkDetail[], conf: Record<string, number>): { io: VmacIo; calls: string[]; scripts: string[] } {
  const calls: string[] = [];
  const scripts: string[] = [];
  const io: VmacIo = {
    linkDetails: () => Promise.resolve(links.map((l) => ({ ...l }))),
    addMacvlan: (name, parent, mac, mode) => {
      calls.push(`add ${name}@${parent} ${formatMac(mac)} ${mode}`);
      links.push(vm({ name, index: 10 + links.length, mac, parent }));
      return Promise.resolve();
    },
    addIpvlan: (name, parent, flags) => {
      calls.push(`ipvlan ${name}@${parent} ${flags}`);
      links.push(vm({ name, index: 10 + links.length, mac: eth0.mac, parent, kind: { kind: 'ipvlan', ipvlanMode: 'l2', ipvlanFlags: flags } }));
      return Promise.resolve();
    },
    setLinkUp: (i) => {
      calls.push(`up ${i}`);
      return Promise.resolve();
    },
    deleteLink: (i) => {
      calls.push(`del ${i}`);
      links.splice(links.findIndex((l) => l.index === i), 1);
      return Promise.resolve(true);
    },
    addresses: (i) => Promise.resolve(i === 2 ? [{ family: 4, address: Buffer.from([10, 0, 0, 1]), prefixLength: 24, scope: 0 }] : []),
    addAddress: (i, c, o) => {
      calls.push(`addr ${i} ${c}${o !== undefined && Object.keys(o).length > 0 ? ` ${JSON.stringify(o)}` : ''}`);
      return Promise.resolve(true);
    },
    readConf: (ifname, key) => conf[`${ifname}/${key}`] ?? 0,
    writeConf: (ifname, key, v) => {
      conf[`${ifname}/${key}`] = v;
    },
    writeConf6: (ifname, key, v) => {
      calls.push(`v6 ${ifname} ${key}=${v}`);
    },
    nftScript: (script) => {
      scripts.push(script);
      return Promise.resolve();
    },
    close: () => undefined,
  };
  return { io, calls, scripts };
}

test('VmacLinks: creates, tunes and brings up the macvlan; a reload keeps it; the last one gone puts conf/all/rp_filter back', async () => {
  const links = [eth0];
  const conf: Record<string, number> = { 'all/rp_filter': 2 };
  const { io, calls } = recordingIo(links, conf);
  const logs: string[] = [];
  const v = new VmacLinks(io, (_l, msg) => logs.push(msg));
  const o = opts({});
  const running = await v.prepare(o);
  assert.equal(running.instances[0]?.interface, 'vrrp.51');
  assert.equal(running.instances[0].unicastSrcIp, '10.0.0.1');
  assert.deepEqual(calls, ['add vrrp.51@2 00:00:5e:00:01:33 private', 'v6 vrrp.51 addr_gen_mode=1', 'up 11']);
  assert.deepEqual(conf, { 'all/rp_filter': 0, 'vrrp.51/arp_ignore': 1, 'vrrp.51/accept_local': 1, 'vrrp.51/rp_filter': 0, 'vrrp.51/promote_secondaries': 1, 'eth0/arp_ignore': 1, 'eth0/arp_filter': 1 });
  // Same options again (a reload that kept the instance): nothing created, nothing logged as adopted.
  calls.length = 0;
  links[1] = { ...(links[1] ?? assert.fail()), adminUp: true };
  await v.prepare(o);
  await v.release(o);
  assert.deepEqual(calls, []);
  assert.ok(!logs.some((m) => m.startsWith('adopted')));
  await v.release(null);
  assert.deepEqual(calls, ['del 11']);
  assert.equal(conf['all/rp_filter'], 2);
  assert.equal(conf['eth0/arp_ignore'], 1, 'the parent keeps arp_ignore, as keepalived 2.2.7 leaves it');
});

test('VmacLinks: a stranger\'s link of that name is left alone and the refusal is logged as an error', async () => {
  const links = [eth0, vm({ mac: Buffer.from('020000000051', 'hex') })];
  const { io, calls } = recordingIo(links, {});
  const logs: [string, string][] = [];
  const v = new VmacLinks(io, (l, msg) => logs.push([l, msg]));
  await v.prepare(opts({}));
  await v.release(null);
  assert.deepEqual(calls, []);
  assert.deepEqual(logs, [['error', 'cannot use virtual MAC interface vrrp.51: vrrp.51 exists with MAC 02:00:00:00:00:51, not the virtual MAC 00:00:5e:00:01:33']]);
});

const CONF = (vmac: string, second = '') => `
vrrp:
  instances:
    - name: VI_1
      interface: eth0
      virtualRouterId: 51
      virtualIpaddresses: [10.0.0.100/24]
      vmac: ${vmac}
${second}`;

test('config file: vmac reaches the engine with its default name; a shared name is an error at FILE:LINE:COL', () => {
  const r = loadConfigText(CONF('{ xmitBase: true }'), 'lvsd.yaml');
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.errors));
  assert.deepEqual(vrrpOptions(r.config).instances[0]?.vmac, { name: 'vrrp.51', xmitBase: true });
  const bad = loadConfigText(CONF('{ name: v1 }', '    - name: VI_2\n      interface: eth1\n      virtualRouterId: 52\n      virtualIpaddresses: [10.0.1.100/24]\n      vmac: { name: v1 }\n'), 'lvsd.yaml');
  assert.ok(!bad.ok);
  assert.deepEqual(bad.errors.map((e) => `${e.file}:${e.line}:${e.col} ${e.path}: ${e.message}`), ['lvsd.yaml:13:21 vrrp.instances[1].vmac.name: virtual MAC interface v1 is already the one of instance "VI_1"; give one of them vmac.name']);
  assert.ok(!loadConfigText(CONF('{ name: "a/b" }'), 'lvsd.yaml').ok, 'a name with / is refused by the schema');
});

const VI = (body: string) => `vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n${body}\n}\n`;

test('importer: use_vmac [NAME] and vmac_xmit_base are carried; vmac_xmit_base alone and a too-long name are reported', () => {
  const a = importText(VI(' use_vmac'));
  assert.equal(a.complete, true, JSON.stringify(a.diagnostics));
  assert.deepEqual((a.config.vrrp as { instances: { vmac?: unknown }[] }).instances[0]?.vmac, {});
  const b = importText(VI(' use_vmac vx51\n vmac_xmit_base'));
  assert.deepEqual((b.config.vrrp as { instances: { vmac?: unknown }[] }).instances[0]?.vmac, { name: 'vx51', xmitBase: true });
  assert.match(b.yaml, /vmac:/);
  const c = importText(VI(' vmac_xmit_base'));
  assert.deepEqual(c.diagnostics.map((d) => `${d.line} ${d.directive}`), ['7 vmac_xmit_base']);
  const d = importText(VI(' use_vmac this-name-is-too-long'));
  assert.match(d.diagnostics[0]?.why ?? '', /not a valid interface name.*vrrp\.51 is used/);
  // vmac_prefix names the unnamed ones PREFIX.VRID, the prefix cut so the whole fits 15 characters (keepalived 2.2.7).
  const e = importText(`global_defs {\n vmac_prefix vm\n}\n${VI(' use_vmac')}`);
  assert.deepEqual(e.diagnostics, []);
  assert.deepEqual((e.config.vrrp as { instances: { vmac?: unknown }[] }).instances[0]?.vmac, { name: 'vm.51' });
  assert.match(e.yaml, /name: vm\.51 # from [^\n]*:2/);
  const f = importText(`global_defs {\n vmac_prefix a-very-long-prefix\n}\n${VI(' use_vmac named')}`);
  assert.deepEqual((f.config.vrrp as { instances: { vmac?: unknown }[] }).instances[0]?.vmac, { name: 'named' }, 'a named one keeps its name');
  const g = importText(`global_defs {\n vmac_prefix a-very-long-prefix\n}\n${VI(' use_vmac')}`);
  assert.deepEqual((g.config.vrrp as { instances: { vmac?: unknown }[] }).instances[0]?.vmac, { name: 'a-very-long-.51' });
});

test('ipvlan (use_ipvlan): the l2 IFLA_LINKINFO as the kernel lays it out and read back; planVmac adopts an l2 ipvlan on the parent, refuses others', () => {
  // IFLA_INFO_KIND "ipvlan\0" | IFLA_INFO_DATA { IFLA_IPVLAN_MODE u16 0 (l2), IFLA_IPVLAN_FLAGS u16 1 (private) }
  assert.equal(ipvlanLinkInfo('private').toString('hex'), '0b0001006970766c616e0000' + '14000200' + '0600010000000000' + '0600020001000000');
  assert.deepEqual(decodeLinkInfo(ipvlanLinkInfo('private')), { kind: 'ipvlan', ipvlanMode: 'l2', ipvlanFlags: 'private' });
  assert.deepEqual(decodeLinkInfo(ipvlanLinkInfo('vepa')), { kind: 'ipvlan', ipvlanMode: 'l2', ipvlanFlags: 'vepa' });
  const spec: VmacSpec = { ...SPEC, mac: '', ipvlan: { type: 'bridge', address: '10.0.0.9/24' } };
  const iv = (over: Partial<LinkDetail>): LinkDetail => vm({ mac: eth0.mac, kind: { kind: 'ipvlan', ipvlanMode: 'l2', ipvlanFlags: 'bridge' }, ...over });
  assert.deepEqual(planVmac(spec, [eth0]), { action: 'create', parentIndex: 2 });
  assert.deepEqual(planVmac(spec, [eth0, iv({ adminUp: true })]), { action: 'adopt', index: 7, up: true });
  assert.equal(planVmac(spec, [eth0, iv({ kind: { kind: 'ipvlan', ipvlanMode: 'l3', ipvlanFlags: 'bridge' } })]).action, 'conflict');
  assert.equal(planVmac(spec, [eth0, vm({})]).action, 'conflict', 'a macvlan of that name is not ours to use as an ipvlan');
});

test('ipvlan options and VmacLinks: created (no virtual MAC), IPv6 off for an IPv4 instance, its address added and made the source; no ARP settings, not in the IGMP table', async () => {
  const o = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], ipvlan: { address: '10.0.0.9/24', type: 'private' } }] });
  assert.deepEqual(o.instances[0]?.vmac, { name: 'vrrp.51', parent: 'eth0', xmitBase: false, ipvlan: { type: 'private', address: '10.0.0.9/24' } });
  assert.equal(o.instances[0].unicastSrcIp, '10.0.0.9');
  assert.throws(() => normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], ipvlan: {} }] }), /ipvlan\.address: an IPv4 instance on an ipvlan needs an address/);
  assert.throws(() => normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], ipvlan: { address: 'fd00::9/64' } }] }), /is not an IPv4 address/);
  assert.throws(() => normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], vmac: {}, ipvlan: { address: '10.0.0.9/24' } }] }), /vmac or ipvlan, not both/);
  const links = [eth0];
  const conf: Record<string, number> = { 'all/rp_filter': 1 };
  const { io, calls, scripts } = recordingIo(links, conf);
  const v = new VmacLinks(io, () => undefined);
  const running = await v.prepare(o);
  assert.equal(running.instances[0]?.interface, 'vrrp.51');
  assert.deepEqual(running.instances[0].vips.map((x) => x.dev), ['eth0'], 'the VIPs stay on the parent, as keepalived leaves them');
  assert.deepEqual(calls, ['ipvlan vrrp.51@2 private', 'up 11', 'addr 11 10.0.0.9/24', 'v6 vrrp.51 disable_ipv6=1']);
  assert.deepEqual(conf, { 'all/rp_filter': 1 }, 'keepalived changes no ARP or reverse-path setting for an ipvlan');
  assert.deepEqual(scripts, [], 'no IGMP table: keepalived\'s rules are for macvlans');
  await v.release(null);
  assert.equal(calls.at(-1), 'del 11');
});

test('ipvlan, IPv6 instance (keepalived 2.2.7 measured in the guest): IPv6 stays on; a configured address goes on nodad and deprecated and is the source; without one nothing is added (the kernel\'s link-local is the source)', async () => {
  const o = normalizeOptions({ instances: [{ name: 'VI_6', interface: 'eth0', vrid: 51, priority: 100, vips: ['fd00::100/64'], ipvlan: { address: 'fe80::11/64', type: 'private' } }] });
  assert.equal(o.instances[0]?.unicastSrcIp, 'fe80::11');
  const { io, calls, scripts } = recordingIo([eth0], {});
  const v = new VmacLinks(io, () => undefined);
  const running = await v.prepare(o);
  assert.deepEqual(running.instances[0]?.vips.map((x) => x.dev), ['eth0'], 'the VIPs stay on the parent');
  assert.deepEqual(calls, ['ipvlan vrrp.51@2 private', 'up 11', 'addr 11 fe80::11/64 {"preferredLft":0}'], 'no disable_ipv6; the address deprecated (nodad is addAddress\'s default)');
  assert.deepEqual(scripts, [], 'no MLD table for an ipvlan');
  await v.release(null);
  const bare = normalizeOptions({ instances: [{ name: 'VI_6', interface: 'eth0', vrid: 51, priority: 100, vips: ['fd00::100/64'], ipvlan: {} }] });
  assert.equal(bare.instances[0]?.unicastSrcIp, undefined, 'the runtime takes the ipvlan\'s link-local');
  const r2 = recordingIo([eth0], {});
  const v2 = new VmacLinks(r2.io, () => undefined);
  await v2.prepare(bare);
  assert.deepEqual(r2.calls, ['ipvlan vrrp.51@2 bridge', 'up 11']);
});

test('importer: use_ipvlan NAME ADDRESS TYPE carried as keepalived 2.2.7 parses it; an IPv4 instance without an address is reported', () => {
  const a = importText(VI(' use_ipvlan iv51 10.0.0.9/24 private'));
  assert.equal(a.complete, true, JSON.stringify(a.diagnostics));
  assert.deepEqual((a.config.vrrp as { instances: { ipvlan?: unknown }[] }).instances[0]?.ipvlan, { name: 'iv51', address: '10.0.0.9/24', type: 'private' });
  const loaded = loadConfigText(a.yaml, 'lvsd.yaml');
  assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
  assert.deepEqual(vrrpOptions(loaded.config).instances[0]?.ipvlan, { name: 'iv51', address: '10.0.0.9/24', type: 'private' });
  const b = importText(VI(' use_ipvlan'));
  assert.deepEqual(b.diagnostics.map((d) => `${d.line} ${d.directive}`), ['7 use_ipvlan']);
  assert.match(b.diagnostics[0]?.why ?? '', /IPv4 ipvlan requires a source ip address/);
  const bad = loadConfigText(CONF('{}').replace('vmac: {}', 'ipvlan: {}'), 'lvsd.yaml');
  assert.ok(!bad.ok);
  assert.match(bad.errors.map((e) => `${e.path}: ${e.message}`).join('\n'), /vrrp\.instances\[0\]\.ipvlan: an IPv4 instance on an ipvlan needs ipvlan\.address/);
});

test('VmacLinks.remake (dynamic_interfaces): nothing while the parent is missing; once it is there the macvlan (or ipvlan) is made and the instance returned as it runs on it; the IGMP table is written again for the new link', async () => {
  const links: LinkDetail[] = [];
  const { io, calls, scripts } = recordingIo(links, {});
  const logs: string[] = [];
  const v = new VmacLinks(io, (_l, msg) => logs.push(msg));
  const o = opts({});
  const running = await v.prepare(o);
  assert.equal(running.instances[0]?.unicastSrcIp, undefined, 'no parent, no source');
  assert.deepEqual(calls, []);
  assert.equal(await v.remake('VI_1'), null, 'still no parent');
  assert.equal(await v.remake('nobody'), null);
  links.push(eth0);
  const made = await v.remake('VI_1');
  assert.equal(made?.interface, 'vrrp.51');
  assert.equal(made.unicastSrcIp, '10.0.0.1', 'the parent\'s address is the adverts\' source');
  assert.deepEqual(calls, ['add vrrp.51@2 00:00:5e:00:01:33 private', 'v6 vrrp.51 addr_gen_mode=1', 'up 11']);
  assert.equal(scripts.length, 1, 'the IGMP table for the new macvlan');
  // The parent and its macvlan deleted, the parent made again: a new macvlan, the table written again.
  links.length = 0;
  links.push(eth0);
  calls.length = 0;
  assert.equal((await v.remake('VI_1'))?.interface, 'vrrp.51');
  assert.deepEqual(calls, ['add vrrp.51@2 00:00:5e:00:01:33 private', 'v6 vrrp.51 addr_gen_mode=1', 'up 11']);
  assert.equal(scripts.length, 2, 'written again (its map holds the old link\'s index)');
  const ipv = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], ipvlan: { address: '10.0.0.9/24', type: 'private' } }] });
  const ipLinks: LinkDetail[] = [];
  const r2 = recordingIo(ipLinks, {});
  const w = new VmacLinks(r2.io, () => undefined);
  await w.prepare(ipv);
  assert.equal(await w.remake('VI_1'), null, 'no parent for the ipvlan');
  ipLinks.push(eth0);
  assert.equal((await w.remake('VI_1'))?.interface, 'vrrp.51');
  assert.deepEqual(r2.calls, ['ipvlan vrrp.51@2 private', 'up 11', 'addr 11 10.0.0.9/24', 'v6 vrrp.51 disable_ipv6=1']);
});
