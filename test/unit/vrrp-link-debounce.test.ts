// interface_up_down_delays: the pure debounce (reportLink / delayElapsed / capDelays), the debouncer's
// timers driven by hand, the importer and config path, and the engine on a fake link riding out a blip.
// test/netns/vrrp-directives.test.ts runs it against keepalived 2.2.7.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { capDelays, delayElapsed, firstSeen, LinkDebouncer, reportLink, type DebouncedLink } from '../../daemon/vrrp/link-debounce.js';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { normalizeOptions } from '../../daemon/vrrp/options.js';
import { parseIP } from '../../daemon/net/addr.js';
import type { LinkInfo } from '../../daemon/net/rtnl.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { diag, importText } from './keepalived-memfs.js';

const D = { downMs: 1500, upMs: 2000 };

test('a change that lasts its delay applies when the delay ends; one reverted in time is forgotten', () => {
  let l: DebouncedLink = firstSeen(true);
  let r = reportLink(l, false, D, 0);
  assert.deepEqual(r.step, { kind: 'wait', at: 1500 });
  assert.equal(r.link.up, true, 'the instances still see it up');
  // Repeated down reports do not restart the timer (keepalived updates the pending flags only).
  r = reportLink(r.link, false, D, 1000);
  assert.deepEqual(r.step, { kind: 'none' });
  r = delayElapsed(r.link);
  assert.deepEqual(r.step, { kind: 'apply', up: false });
  l = r.link;
  // Back up, down again within the up delay: cancelled; the next up waits a whole delay again.
  r = reportLink(l, true, D, 3000);
  assert.deepEqual(r.step, { kind: 'wait', at: 5000 });
  r = reportLink(r.link, false, D, 4000);
  assert.deepEqual(r.step, { kind: 'cancel' });
  assert.equal(r.link.up, false);
  r = reportLink(r.link, true, D, 4300);
  assert.deepEqual(r.step, { kind: 'wait', at: 6300 });
});

test('no delay, or a link never seen up, applies at once; a timer with nothing pending does nothing', () => {
  assert.deepEqual(reportLink(firstSeen(true), false, undefined, 0).step, { kind: 'apply', up: false });
  assert.deepEqual(reportLink(firstSeen(true), false, { downMs: 0, upMs: 5 }, 0).step, { kind: 'apply', up: false });
  const down = firstSeen(false);
  const r = reportLink(down, true, D, 0);
  assert.deepEqual(r.step, { kind: 'apply', up: true }, 'keepalived: no debounce before seen_up');
  assert.equal(r.link.seenUp, true);
  assert.deepEqual(reportLink(r.link, false, D, 10).step, { kind: 'wait', at: 1510 });
  assert.deepEqual(delayElapsed(firstSeen(true)).step, { kind: 'none' });
});

test('capDelays: at or over (down_timer_adverts − 1) adverts a delay becomes that less 1/256 advert (keepalived: 3 s → 1.996094 s at advert_int 1)', () => {
  const inst = { name: 'V1', interface: 'va', intervalCs: 100, downTimerAdverts: 3 };
  const r = capDelays({ va: { downMs: 1500, upMs: 3000 } }, [inst]);
  assert.deepEqual(r.delays.va, { downMs: 1500, upMs: 1996.09375 });
  assert.deepEqual(r.capped, [{ instance: 'V1', interface: 'va', capMs: 1996.09375 }]);
  assert.deepEqual(capDelays({ va: { downMs: 1999, upMs: 0 } }, [inst]).capped, [], 'under the cap: kept');
  assert.deepEqual(capDelays({ va: { downMs: 100, upMs: 100 } }, [{ ...inst, downTimerAdverts: 1 }]).delays.va, { downMs: 0, upMs: 0 }, 'down_timer_adverts 1: none');
  // The fastest instance on the link decides; a VMAC link takes its parent's delays.
  const two = capDelays({ va: { downMs: 1500, upMs: 0 } }, [inst, { ...inst, name: 'V2', intervalCs: 50, vmac: { name: 'vrrp.2', parent: 'va', xmitBase: false } }]);
  assert.equal(two.delays.va?.downMs, 998.046875, '2 adverts of 0.5 s, less 1/256 of one');
  assert.deepEqual(two.delays['vrrp.2'], two.delays.va);
  assert.deepEqual(capDelays({ eth9: { downMs: 9000, upMs: 0 } }, [inst]).delays.eth9, { downMs: 9000, upMs: 0 }, 'a link with no instance is not capped');
});

test('LinkDebouncer: arms one timer per link, disarms on a revert or a deletion, tells the settled change', () => {
  const timers = new Map<number, () => void>();
  let next = 1;
  let now = 0;
  const settled: [number, boolean][] = [];
  const d = new LinkDebouncer({ eth0: D }, (i, up) => settled.push([i, up]), () => now, {
    set: (_ms, fire) => {
      const h = next++;
      timers.set(h, () => { timers.delete(h); fire(); });
      return h;
    },
    clear: (h) => { timers.delete(h as number); },
  });
  assert.equal(d.report(2, 'eth0', true), true);
  assert.equal(d.report(2, 'eth0', false), true, 'still up for the instances');
  assert.equal(timers.size, 1);
  now = 700;
  assert.equal(d.report(2, 'eth0', true), true);
  assert.equal(timers.size, 0, 'the blip is forgotten');
  d.report(2, 'eth0', false);
  [...timers.values()][0]?.();
  assert.deepEqual(settled, [[2, false]]);
  assert.equal(d.report(3, 'eth1', true), true);
  assert.equal(d.report(3, 'eth1', false), false, 'no delays for eth1: at once');
  d.report(2, 'eth0', true);
  assert.equal(timers.size, 1);
  d.forget(2);
  assert.equal(timers.size, 0);
});

const live = new Set<VrrpRuntime>();
after(async () => {
  for (const r of live) await r.stop();
});

test('engine: a master rides out a link blip shorter than its down delay, and is FAULT once a longer outage lasts it', async () => {
  let onLink: ((l: LinkInfo, deleted: boolean) => void) | null = null;
  const states: string[] = [];
  const io: RuntimeIo = {
    links: () => Promise.resolve([{ index: 2, name: 'eth0', up: true, mac: null }]),
    addresses: () => Promise.resolve([{ family: 4, address: parseIP('10.0.0.1'), prefixLength: 24, scope: 0 }]),
    addAddress: () => Promise.resolve(true),
    delAddress: () => Promise.resolve(false),
    watchLinks: (cb) => { onLink = cb; },
    openSocket: () => ({ send: () => undefined, close: () => undefined }),
    announce: () => undefined,
    close: () => undefined,
  };
  const opts = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, advertIntervalMs: 100, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 } }], interfaceUpDownDelays: { eth0: { downMs: 150 } } });
  const rt = new VrrpRuntime(opts, io, { transition: (e) => states.push(e.to), log: () => undefined });
  live.add(rt);
  await rt.start();
  const end = Date.now() + 5000;
  while (!states.includes('MASTER') && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  const link = (up: boolean): void => onLink?.({ index: 2, name: 'eth0', up, mac: null }, false);
  link(false);
  await new Promise((r) => setTimeout(r, 50));
  link(true);
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(rt.snapshot().instances[0]?.state, 'MASTER', 'a 50 ms blip under a 150 ms down delay');
  link(false);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(rt.snapshot().instances[0]?.state, 'MASTER', 'not yet: the delay runs');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(rt.snapshot().instances[0]?.state, 'FAULT');
  await rt.stop();
});

test('importer: interface_up_down_delays lands in vrrp.interfaceUpDownDelays with its line, and reaches the engine', () => {
  const r = importText(
    'interface_up_down_delays {\n  eth0 1.5 2\n  eth1 0.5\n  eth2\n}\n' +
      'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n',
  );
  assert.deepEqual(diag(r), ['4 eth2'], 'a line without delays is reported (keepalived ignores it too)');
  assert.deepEqual(r.config.vrrp?.interfaceUpDownDelays, { eth0: { down: '1500ms', up: '2s' }, eth1: { down: '500ms' } });
  assert.match(r.yaml, /interfaceUpDownDelays:[^]*eth0:[^]*down: 1500ms # from [^\n]*:2/);
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(vrrpOptions(loaded.config).interfaceUpDownDelays, { eth0: { downMs: 1500, upMs: 2000 }, eth1: { downMs: 500, upMs: 0 } });
  const over = importText('interface_up_down_delays {\n  eth0 300\n}\n');
  assert.deepEqual(diag(over), ['2 eth0']);
});

test('config: a delay over 255 s is refused, naming the field', () => {
  const bad = loadConfigText('vrrp:\n  interfaceUpDownDelays:\n    eth0:\n      down: 300s\n', 'x.yaml');
  assert.equal(bad.ok, false);
  assert.match(JSON.stringify(bad), /"path":"vrrp\.interfaceUpDownDelays\.eth0\.down","message":"must be at most 255s"/);
  assert.throws(() => normalizeOptions({ instances: [], interfaceUpDownDelays: { eth0: { downMs: -1 } } }), /interfaceUpDownDelays\.eth0\.downMs: -1 is not a delay of 0\.\.255 s/);
});

test('engine: an instance whose interface is missing at start comes up once it appears, goes to FAULT when it is deleted, and up again when it is made anew (keepalived dynamic_interfaces)', async () => {
  const cb: { link?: (l: LinkInfo, deleted: boolean) => void; address?: (ifindex: number, address: Buffer, deleted: boolean) => void } = {};
  const states: string[] = [];
  const addrs = new Map<number, Buffer[]>();
  const sockets: number[] = [];
  const io: RuntimeIo = {
    links: () => Promise.resolve([{ index: 2, name: 'eth0', up: true, mac: null }]),
    addresses: (i) => Promise.resolve((addrs.get(i) ?? []).map((address) => ({ family: 4 as const, address, prefixLength: 24, scope: 0 }))),
    addAddress: () => Promise.resolve(true),
    delAddress: () => Promise.resolve(false),
    watchLinks: (f) => { cb.link = f; },
    watchAddresses: (f) => { cb.address = f; },
    openSocket: (o) => { sockets.push(o.ifindex); return { send: () => undefined, close: () => undefined }; },
    announce: () => undefined,
    close: () => undefined,
  };
  const opts = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'dy0', vrid: 51, priority: 150, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 } }] });
  const rt = new VrrpRuntime(opts, io, { transition: (e) => states.push(e.to), log: () => undefined });
  live.add(rt);
  const state = (): string | undefined => rt.snapshot().instances[0]?.state;
  const until = async (want: string): Promise<void> => {
    const end = Date.now() + 5000;
    while (state() !== want) {
      if (Date.now() > end) throw new Error(`not ${want} but ${state()}: ${states.join(' ')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await rt.start();
  await until('FAULT');
  // The link comes first, its address a moment later (as ip(8) does it): the instance waits for both.
  cb.link?.({ index: 3, name: 'dy0', up: true, mac: null }, false);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(state(), 'FAULT', 'no address to advertise from yet');
  addrs.set(3, [parseIP('10.0.0.1')]);
  cb.address?.(3, parseIP('10.0.0.1'), false);
  await until('MASTER');
  assert.equal(sockets.at(-1), 3);
  cb.link?.({ index: 3, name: 'dy0', up: false, mac: null }, true);
  await until('FAULT');
  addrs.set(4, [parseIP('10.0.0.1')]);
  cb.link?.({ index: 4, name: 'dy0', up: true, mac: null }, false);
  await until('MASTER');
  assert.equal(sockets.at(-1), 4, 'a socket on the new link');
  await rt.stop();
});
