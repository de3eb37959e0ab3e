import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeCapabilities, hasCap, kernelOption, parseCapEff, planDataplane, probeCapabilities, type Capabilities, type ProbeFs } from '../../daemon/cli/capabilities.js';

test('CapEff parsing: root has NET_RAW and NET_ADMIN, an unprivileged process none', () => {
  const root = parseCapEff('Name:\tnode\nCapEff:\t000001ffffffffff\n');
  assert.ok(hasCap(root, 12) && hasCap(root, 13));
  const user = parseCapEff('CapEff:\t0000000000000000\n');
  assert.ok(!hasCap(user, 12) && !hasCap(user, 13));
  const rawOnly = parseCapEff('CapEff:\t0000000000002000\n');
  assert.ok(hasCap(rawOnly, 13) && !hasCap(rawOnly, 12));
  assert.equal(parseCapEff('garbage'), 0n);
});

test('kernel config options', () => {
  const cfg = 'CONFIG_IP_VS=m\n# CONFIG_FOO is not set\nCONFIG_NF_TABLES=y\n';
  assert.equal(kernelOption(cfg, 'IP_VS'), 'm');
  assert.equal(kernelOption(cfg, 'NF_TABLES'), 'y');
  assert.equal(kernelOption(cfg, 'FOO'), undefined);
  assert.equal(kernelOption(undefined, 'IP_VS'), undefined);
});

function fakeFs(files: Record<string, string>, executables: string[] = [], kconfig?: string): ProbeFs {
  return {
    exists: (p) => p in files,
    read: (p) => files[p],
    executable: (p) => executables.includes(p),
    kernelConfig: () => kconfig,
  };
}
const env = { uid: 0, path: '/usr/bin:/bin', kernel: '6.1.0' };

test('probe: IPVS loaded, nft installed, full caps', () => {
  const c = probeCapabilities(fakeFs({ '/proc/net/ip_vs': '', '/proc/self/status': 'CapEff:\t000001ffffffffff\n', '/sys/module/nf_tables': '' }, ['/usr/sbin/nft']), env);
  assert.deepEqual(c, { root: true, netRaw: true, netAdmin: true, ipvs: 'yes', nftables: 'yes', nftBinary: true });
});

test('probe: a container without privileges and without anything', () => {
  const c = probeCapabilities(fakeFs({ '/proc/self/status': 'CapEff:\t0000000000000000\n' }), { ...env, uid: 1000 });
  assert.deepEqual(c, { root: false, netRaw: false, netAdmin: false, ipvs: 'no', nftables: 'no', nftBinary: false });
});

test('probe: ip_vs module on disk but not loaded; nf_tables built in but no nft tool', () => {
  const c = probeCapabilities(
    fakeFs({ '/proc/self/status': 'CapEff:\t0000000000003000\n', '/lib/modules/6.1.0/modules.dep': 'kernel/net/netfilter/ipvs/ip_vs.ko.xz: kernel/lib/libcrc32c.ko.xz\n' }, [], 'CONFIG_NF_TABLES=y\n'),
    env,
  );
  assert.equal(c.ipvs, 'loadable');
  assert.equal(c.nftables, 'no');
  assert.equal(c.nftBinary, false);
});

const caps = (over: Partial<Capabilities>): Capabilities => ({ root: true, netRaw: true, netAdmin: true, ipvs: 'yes', nftables: 'yes', nftBinary: true, ...over });

test('planDataplane: auto picks ipvs, then nftables, then userspace, and says why', () => {
  const table: [Partial<Capabilities>, string, RegExp][] = [
    [{}, 'ipvs', /IPVS is in the kernel/],
    [{ ipvs: 'loadable' }, 'ipvs', /can be loaded/],
    [{ ipvs: 'no' }, 'nftables', /no IPVS in this kernel; nftables/],
    [{ ipvs: 'no', nftables: 'no' }, 'userspace', /neither IPVS nor nftables/],
    [{ netAdmin: false }, 'userspace', /no CAP_NET_ADMIN/],
  ];
  for (const [over, kind, reason] of table) {
    const p = planDataplane('auto', caps(over));
    assert.equal(p.kind, kind, JSON.stringify(over));
    assert.match(p.reason, reason);
  }
});

test('planDataplane: an explicit choice is kept, with the reason it cannot work', () => {
  assert.deepEqual(planDataplane('ipvs', caps({ ipvs: 'no' })), { kind: 'ipvs', reason: 'configured: ipvs, but the kernel has no IPVS' });
  assert.deepEqual(planDataplane('nftables', caps({ netAdmin: false })), { kind: 'nftables', reason: 'configured: nftables, but CAP_NET_ADMIN is missing' });
  assert.equal(planDataplane('userspace', caps({})).kind, 'userspace');
});

test('describeCapabilities says plainly what is missing', () => {
  const lines = describeCapabilities(caps({ netRaw: false, ipvs: 'no' }));
  assert.deepEqual(lines.filter((l) => !l.ok).map((l) => l.text.split(':')[0]), ['IPVS', 'raw sockets (CAP_NET_RAW)']);
  assert.match(lines[2]?.text ?? '', /VRRP cannot send or receive adverts/);
});
