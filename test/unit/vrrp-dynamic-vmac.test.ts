// dynamic_interfaces for an instance on a VMAC (use_vmac): its parent appears after the start, is deleted
// (the kernel takes the macvlan with it) and made again. The runtime on a fake host whose remakeVmac makes
// the macvlan as the engine's VmacLinks does (a new link, the parent's IPv4 address as the adverts' source).
// keepalived 2.2.7 measured (docs/vrrp.md): it makes vrrp.51 when the parent appears, is FAULT when the
// parent goes, and makes vrrp.51 again when it comes back. test/netns/vrrp-vmac.test.ts runs it beside keepalived.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { onVmac } from '../../daemon/vrrp/vmac.js';
import { parseIP } from '../../daemon/net/addr.js';
import type { LinkInfo } from '../../daemon/net/rtnl.js';

const live = new Set<VrrpRuntime>();
after(async () => {
  for (const r of live) await r.stop();
});

test('engine: a VMAC instance whose parent appears late gets its macvlan made then and comes up on it; FAULT when the parent goes, up on a new macvlan when it is made again (keepalived dynamic_interfaces)', async () => {
  const cb: { link?: (l: LinkInfo, deleted: boolean) => void; address?: (ifindex: number, address: Buffer, deleted: boolean) => void } = {};
  const links = new Map<string, LinkInfo>([['lo', { index: 1, name: 'lo', up: true, mac: null }]]);
  const addrs = new Map<number, Buffer[]>();
  const sockets: { ifindex: number; ifname: string }[] = [];
  const added: string[] = [];
  const remade: string[] = [];
  let next = 10;
  const configured = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'dy0', vrid: 51, priority: 150, advertIntervalMs: 50, vips: ['10.9.0.100/24'], vmac: {}, garp: { masterDelayMs: 0 } }] });
  const linkEvent = (l: LinkInfo, deleted: boolean): void => {
    if (deleted) links.delete(l.name);
    else links.set(l.name, l);
    cb.link?.(l, deleted);
  };
  const io: RuntimeIo = {
    links: () => Promise.resolve([...links.values()]),
    addresses: (i) => Promise.resolve((addrs.get(i) ?? []).map((address) => ({ family: 4 as const, address, prefixLength: 24, scope: 0 }))),
    addAddress: (i, cidr) => { added.push(`${cidr}@${i}`); return Promise.resolve(true); },
    delAddress: () => Promise.resolve(false),
    watchLinks: (f) => { cb.link = f; },
    watchAddresses: (f) => { cb.address = f; },
    openSocket: (o) => { sockets.push({ ifindex: o.ifindex, ifname: o.ifname }); return { send: () => undefined, close: () => undefined }; },
    announce: () => undefined,
    // As VmacLinks.remake: no parent, nothing made; else the macvlan made (its event comes later), the source the parent's address.
    remakeVmac: (name) => {
      remade.push(name);
      const parent = links.get('dy0');
      const i = configured.instances[0];
      if (parent === undefined || i === undefined) return Promise.resolve(null);
      if (!links.has('vrrp.51')) {
        const l = { index: next++, name: 'vrrp.51', up: true, mac: null };
        links.set(l.name, l);
        setImmediate(() => cb.link?.(l, false));
      }
      const v4 = addrs.get(parent.index)?.[0];
      return Promise.resolve(onVmac(i, v4 === undefined ? null : v4.join('.')));
    },
    close: () => undefined,
  };
  // What the engine hands the runtime when the parent is missing at start (VmacLinks.prepare made nothing).
  const opts = { ...configured, instances: configured.instances.map((i) => onVmac(i, null)) };
  const rt = new VrrpRuntime(opts, io, { transition: () => undefined, log: () => undefined });
  live.add(rt);
  const snap = (): ReturnType<VrrpRuntime['snapshot']>['instances'][number] | undefined => rt.snapshot().instances[0];
  const until = async (want: string): Promise<void> => {
    const end = Date.now() + 5000;
    while (snap()?.state !== want) {
      if (Date.now() > end) throw new Error(`not ${want} but ${snap()?.state}: ${JSON.stringify(snap()?.faultReasons)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await rt.start();
  await until('FAULT');
  assert.deepEqual(snap()?.faultReasons, ['interface vrrp.51 missing']);
  // The parent comes first, its address a moment later (as ip(8) does it).
  linkEvent({ index: 3, name: 'dy0', up: true, mac: null }, false);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(remade.length > 0, 'the parent\'s appearance asks for the macvlan');
  assert.equal(snap()?.state, 'FAULT', 'no address to advertise from yet');
  addrs.set(3, [parseIP('10.9.0.1')]);
  cb.address?.(3, parseIP('10.9.0.1'), false);
  await until('MASTER');
  const first = links.get('vrrp.51')?.index;
  assert.deepEqual(sockets.at(-1), { ifindex: first, ifname: 'vrrp.51' }, 'adverts go out of the macvlan');
  assert.equal(snap()?.sourceAddress, '10.9.0.1', 'from the parent\'s address');
  assert.ok(added.includes(`10.9.0.100/24@${first}`), `the VIP on the macvlan: ${added.join(' ')}`);
  // The parent goes; the kernel takes the macvlan with it.
  const vm = links.get('vrrp.51');
  if (vm !== undefined) linkEvent(vm, true);
  linkEvent({ index: 3, name: 'dy0', up: false, mac: null }, true);
  await until('FAULT');
  addrs.set(4, [parseIP('10.9.0.1')]);
  linkEvent({ index: 4, name: 'dy0', up: true, mac: null }, false);
  await until('MASTER');
  const second = links.get('vrrp.51')?.index;
  assert.notEqual(second, first, 'a new macvlan');
  assert.deepEqual(sockets.at(-1), { ifindex: second, ifname: 'vrrp.51' });
  assert.ok(added.includes(`10.9.0.100/24@${second}`), `the VIP on the new macvlan: ${added.join(' ')}`);
  await rt.stop();
});
