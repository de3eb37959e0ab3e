// The runtime's announcements through the GARP queue, and garp_extra_if, on a fake host: real timers,
// a fake link layer that records every announcement with its interface and time.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { normalizeOptions, type VrrpInstanceOptions, type VrrpOptions } from '../../daemon/vrrp/options.js';
import { formatIP, parseIP } from '../../daemon/net/addr.js';
import { diag, importText } from './keepalived-memfs.js';

const live = new Set<VrrpRuntime>();
after(async () => {
  for (const r of live) await r.stop();
});

interface Said {
  ifname: string;
  vip: string;
  at: number;
}

function host(instances: VrrpInstanceOptions[], top: Partial<VrrpOptions> = {}): { rt: VrrpRuntime; said: Said[] } {
  const said: Said[] = [];
  const names = ['eth0', 'eth1', 'eth2'];
  const io: RuntimeIo = {
    links: () => Promise.resolve(names.map((name, i) => ({ index: i + 2, name, up: true, mac: null }))),
    addresses: () => Promise.resolve([{ family: 4, address: parseIP('10.0.0.1'), prefixLength: 24, scope: 0 }]),
    addAddress: () => Promise.resolve(true),
    delAddress: () => Promise.resolve(false),
    watchLinks: () => undefined,
    openSocket: () => ({ send: () => undefined, close: () => undefined }),
    announce: (ifname, _i, vip) => {
      said.push({ ifname, vip: formatIP(vip), at: performance.now() });
    },
    close: () => undefined,
  };
  const rt = new VrrpRuntime(normalizeOptions({ instances, ...top }), io, { transition: () => undefined, log: () => undefined });
  live.add(rt);
  return { rt, said };
}

const inst = (name: string, vrid: number, vips: VrrpInstanceOptions['vips'], garp: VrrpInstanceOptions['garp'] = {}): VrrpInstanceOptions => ({
  name,
  interface: 'eth0',
  vrid,
  priority: 255,
  advertIntervalMs: 50,
  vips,
  garp: { masterDelayMs: 0, masterRepeat: 3, ...garp },
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('the runtime sends every announcement through the link\'s GARP queue: one per interval across instances, in configuration order', async () => {
  const { rt, said } = host([inst('A', 1, ['10.0.0.101/24', '10.0.0.151/24']), inst('B', 2, ['10.0.0.102/24']), inst('C', 3, ['10.0.0.103/24'])], {
    garpGroups: [{ interfaces: ['eth0'], intervalMs: 60, naIntervalMs: 0 }],
  });
  await rt.start();
  const end = Date.now() + 3000;
  while (said.length < 5 && Date.now() < end) await sleep(10);
  await sleep(200);
  // Owners (255) are master at once: A's first address goes, the rest wait, marked once each.
  assert.deepEqual(said.map((s) => s.vip), ['10.0.0.101', '10.0.0.101', '10.0.0.151', '10.0.0.102', '10.0.0.103']);
  for (let i = 1; i < said.length; i++) assert.ok((said[i]?.at ?? 0) - (said[i - 1]?.at ?? 0) >= 59, `gap ${i}: ${JSON.stringify(said)}`);
  await rt.stop();
});

test('garp_extra_if all: at the adverts, once the interval has passed, one announcement per other interface of the VIPs, for its first VIP', async () => {
  const vips = ['10.0.0.100/24', { address: '10.1.0.1/24', dev: 'eth1' }, { address: '10.1.0.2/24', dev: 'eth1' }, { address: '10.2.0.1/24', dev: 'eth2' }];
  const { rt, said } = host([inst('A', 1, vips, { masterRepeat: 1, extraIfMs: 200 })]);
  await rt.start();
  // Until two periods have gone out whole (each interface's announcement of a period, not one of them).
  const end = Date.now() + 10_000;
  const count = (dev: string): number => said.slice(4).filter((x) => x.ifname === dev).length;
  while ((count('eth1') < 2 || count('eth2') !== count('eth1')) && Date.now() < end) await sleep(20);
  await rt.stop();
  const burst = said.slice(0, 4).map((s) => `${s.ifname} ${s.vip}`);
  assert.deepEqual(burst, ['eth0 10.0.0.100', 'eth1 10.1.0.1', 'eth1 10.1.0.2', 'eth2 10.2.0.1']);
  const later = said.slice(4);
  const eth1 = later.filter((s) => s.ifname === 'eth1');
  assert.ok(eth1.length >= 2, JSON.stringify(said));
  assert.ok(eth1.every((s) => s.vip === '10.1.0.1'), 'the first VIP of eth1 only');
  assert.equal(later.filter((s) => s.ifname === 'eth2').length, eth1.length, 'each other interface once per period');
  assert.equal(later.filter((s) => s.ifname === 'eth0').length, 0, 'not on the instance\'s own interface');
  for (let i = 1; i < eth1.length; i++) assert.ok((eth1[i]?.at ?? 0) - (eth1[i - 1]?.at ?? 0) >= 200, JSON.stringify(eth1));
});

test('importer: garp_extra_if / vrrp_garp_extra_if (and vmac_garp_intvl) → garp.extraIf; without all it is off, as keepalived sends only on VIP VMACs lvsd does not create', () => {
  const VI = (body: string, name = 'VI_1', vrid = 51): string => `vrrp_instance ${name} {\n interface eth0\n virtual_router_id ${vrid}\n virtual_ipaddress {\n  10.0.0.100/24\n }\n${body}\n}\n`;
  const r = importText('global_defs {\n vrrp_garp_extra_if all 100\n}\n' + VI(' garp_extra_if 30') + VI(' vmac_garp_intvl 60 all', 'VI_2', 52) + VI('', 'VI_3', 53));
  assert.deepEqual(diag(r), []);
  assert.deepEqual(r.config.vrrp?.garp, { extraIf: '100s' });
  assert.deepEqual(r.config.vrrp.instances?.map((i) => i.garp), [{ extraIf: '0s' }, { extraIf: '60s' }, undefined]);
  assert.match(r.yaml, /extraIf: 100s # from [^\n]*:2/);
  assert.match(r.yaml, /without all: keepalived sends these only on the VMACs/);
  const bad = importText('global_defs {\n vrrp_garp_extra_if all\n}\n' + VI(' garp_extra_if 90000'));
  assert.deepEqual(diag(bad), ['2 vrrp_garp_extra_if', '10 garp_extra_if']);
});
