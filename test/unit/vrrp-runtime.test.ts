// The runtime on a fake network (no root, no sockets): two runtimes exchange real encoded adverts
// through in-process "sockets"; addresses and GARPs are recorded instead of configured.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { normalizeOptions, startupDelayFor, type VrrpInstanceOptions } from '../../daemon/vrrp/options.js';
import { parseIP } from '../../daemon/net/addr.js';
import type { ReceivedPacket } from '../../daemon/net/vrrp-socket.js';
import type { TransitionEvent } from '../../daemon/vrrp/protocol.js';
import type { LinkInfo } from '../../daemon/net/rtnl.js';

interface Host {
  io: RuntimeIo;
  calls: string[];
  transitions: TransitionEvent[];
  logs: string[];
  /** Every advert sent, as "vrid:priority" (bytes 1 and 2 of the VRRP header). */
  sent: string[];
  setLink(up: boolean): void;
  /** An address event on eth0 (track_src_ip). */
  setAddress(addr: string, present: boolean): void;
}

class FakeSegment {
  readonly sockets = new Set<{ src: Buffer; deliver: (p: ReceivedPacket) => void }>();
  host(addr: string, dropOutgoing = () => false): Host {
    const calls: string[] = [];
    const src = parseIP(addr);
    let linkCb: ((l: LinkInfo, deleted: boolean) => void) | null = null;
    let addrCb: ((ifindex: number, address: Buffer, deleted: boolean) => void) | null = null;
    const h: Host = {
      calls,
      transitions: [],
      logs: [],
      sent: [],
      setLink: (up) => {
        linkCb?.({ index: 2, name: 'eth0', up, mac: null }, false);
      },
      setAddress: (a, present) => {
        addrCb?.(2, parseIP(a), !present);
      },
      io: {
        links: () => Promise.resolve([{ index: 2, name: 'eth0', up: true, mac: null }]),
        addresses: () => Promise.resolve([{ family: 4, address: src, prefixLength: 24, scope: 0 }]),
        addAddress: (_i, cidr) => {
          calls.push(`add ${cidr}`);
          return Promise.resolve(true);
        },
        delAddress: (_i, cidr) => {
          calls.push(`del ${cidr}`);
          return Promise.resolve(true);
        },
        watchLinks: (cb) => {
          linkCb = cb;
        },
        watchAddresses: (cb) => {
          addrCb = cb;
        },
        openSocket: (_o, onPacket) => {
          const me = { src, deliver: onPacket };
          this.sockets.add(me);
          return {
            send: (payload, dst) => {
              h.sent.push(`${payload[1] ?? -1}:${payload[2] ?? -1}`);
              if (dropOutgoing()) return;
              for (const s of this.sockets) {
                if (s === me) continue;
                const copy = Buffer.from(payload);
                setImmediate(() => {
                  s.deliver({ src, dst, ttl: 255, ifindex: 2, payload: copy });
                });
              }
            },
            close: () => {
              this.sockets.delete(me);
            },
          };
        },
        announce: (_n, _i, vip) => {
          calls.push(`garp ${vip.join('.')}`);
        },
        close: () => undefined,
      },
    };
    return h;
  }
}

const live = new Set<VrrpRuntime>();
after(async () => {
  // A failed assertion must not leave timers running (the test process would never exit).
  for (const r of live) await r.stop();
});

function runtime(h: Host, o: Partial<VrrpInstanceOptions> & { priority: number }, extra: { syncGroups?: { name: string; instances: string[] }[]; instances?: VrrpInstanceOptions[] } = {}): VrrpRuntime {
  const inst: VrrpInstanceOptions = { name: 'VI_1', interface: 'eth0', vrid: 51, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0, masterRepeat: 2 }, ...o };
  const r = new VrrpRuntime(normalizeOptions({ instances: extra.instances ?? [inst], ...(extra.syncGroups !== undefined ? { syncGroups: extra.syncGroups } : {}) }), h.io, {
    transition: (e) => h.transitions.push(e),
    log: (_l, msg) => h.logs.push(msg),
  });
  live.add(r);
  return r;
}

const until = async (what: string, f: () => boolean, ms = 3000): Promise<void> => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
const stateOf = (h: Host, inst = 'VI_1'): string | undefined => h.transitions.filter((t) => t.instance === inst).at(-1)?.to;

test('runtime: election over encoded adverts, VIP add + GARP on the master only, graceful stop hands over after Skew_Time', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150, advertIntervalMs: 200 });
  const rb = runtime(b, { priority: 100, advertIntervalMs: 200 });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  await new Promise((r) => setTimeout(r, 900));
  assert.equal(stateOf(b), 'BACKUP');
  // Start-up removes a possibly stale VIP; then A adds it and announces it twice.
  assert.deepEqual(a.calls, ['del 10.0.0.100/24', 'add 10.0.0.100/24', 'garp 10.0.0.100', 'garp 10.0.0.100']);
  assert.deepEqual(b.calls, ['del 10.0.0.100/24']);
  assert.ok((rb.snapshot().instances[0]?.counters.advertsReceived ?? 0) >= 3);
  assert.equal(rb.snapshot().instances[0]?.masterAddress, '10.0.0.1');

  const t0 = Date.now();
  await ra.stop();
  assert.equal(a.calls.at(-1), 'del 10.0.0.100/24');
  await until('B master', () => stateOf(b) === 'MASTER');
  // Skew_Time at priority 100 and 200 ms is 122 ms; Master_Down_Interval would be 722 ms.
  assert.ok(Date.now() - t0 < 600, `B took over ${Date.now() - t0} ms after A's priority-0 advert`);
  assert.ok(b.calls.includes('add 10.0.0.100/24'));
  await rb.stop();
});

test('runtime: a sync group moves together, and the own interface going down is a FAULT', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const two = (p: number): VrrpInstanceOptions[] => [
    { name: 'VI_1', interface: 'eth0', vrid: 51, priority: p, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 } },
    { name: 'VI_2', interface: 'eth0', vrid: 52, priority: p, advertIntervalMs: 50, vips: ['10.0.0.101/24'], garp: { masterDelayMs: 0 } },
  ];
  const ra = runtime(a, { priority: 150 }, { instances: two(150), syncGroups: [{ name: 'G', instances: ['VI_1', 'VI_2'] }] });
  await ra.start();
  await until('both master', () => stateOf(a, 'VI_1') === 'MASTER' && stateOf(a, 'VI_2') === 'MASTER');
  // The second one followed the first (sync), it did not wait for its own timer.
  assert.ok(a.transitions.some((t) => t.reason.includes('sync group')));
  a.setLink(false);
  await until('both fault', () => stateOf(a, 'VI_1') === 'FAULT' && stateOf(a, 'VI_2') === 'FAULT');
  assert.ok(ra.snapshot().instances.every((i) => i.faultReasons.includes('interface eth0 down')));
  a.setLink(true);
  await until('back to master', () => stateOf(a, 'VI_1') === 'MASTER' && stateOf(a, 'VI_2') === 'MASTER');
  await ra.stop();
});

test('runtime: a master that loses its voice (adverts dropped) is replaced; the split heals to one master', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  let mute = false;
  const a = seg.host('10.0.0.1', () => mute);
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150 });
  const rb = runtime(b, { priority: 100 });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  mute = true;
  await until('B master while A is mute', () => stateOf(b) === 'MASTER');
  mute = false;
  await until('B back to backup', () => stateOf(b) === 'BACKUP');
  assert.equal(stateOf(a), 'MASTER');
  await ra.stop();
  await rb.stop();
});

test('runtime: a master hearing a lower-priority master answers it and sends garp.lowerPrioRepeat GARPs per advert, again after lowerPrioDelayMs; the split heals', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  let mute = false;
  const a = seg.host('10.0.0.1', () => mute);
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150, garp: { masterDelayMs: 0, masterRepeat: 2, lowerPrioRepeat: 3, lowerPrioDelayMs: 150 } });
  const rb = runtime(b, { priority: 100 });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  const garps = (): number => a.calls.filter((c) => c.startsWith('garp')).length;
  assert.equal(garps(), 2);
  // A loses its voice: B takes over, and A (still MASTER, still hearing) answers each of B's adverts.
  mute = true;
  await until('B master while A is mute', () => stateOf(b) === 'MASTER');
  await until('A heard B three times', () => (ra.snapshot().instances[0]?.counters.lowerPriorityAdverts ?? 0) >= 3);
  mute = false;
  await until('B back to backup', () => stateOf(b) === 'BACKUP');
  assert.equal(stateOf(a), 'MASTER');
  const heard = ra.snapshot().instances[0]?.counters.lowerPriorityAdverts ?? 0;
  // Every lower advert: 3 GARPs now and 3 more 150 ms later (all delayed ones have fired after 400 ms).
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(ra.snapshot().instances[0]?.counters.lowerPriorityAdverts, heard, 'no lower-priority advert after the heal');
  assert.equal(garps(), 2 + heard * 3 * 2);
  assert.ok(a.logs.some((l) => l.includes('received advert with lower priority 100, ours 150, forcing new election')), a.logs.join('\n'));
  // B never heard a lower priority while master; it sent no GARP of that kind (its own master burst only).
  assert.equal(rb.snapshot().instances[0]?.counters.lowerPriorityAdverts, 0);
  await ra.stop();
  await rb.stop();
});

test('runtime: lowerPrioNoAdvert (global default, instance override) and lowerPrioRepeat 0 silence the answer', { timeout: 20_000 }, async () => {
  const o = normalizeOptions({
    lowerPrioNoAdvert: true,
    garp: { lowerPrioRepeat: 0, masterRepeat: 4, masterDelayMs: 1000 },
    instances: [
      { name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'] },
      { name: 'VI_2', interface: 'eth0', vrid: 52, priority: 100, vips: ['10.0.0.101/24'], lowerPrioNoAdvert: false, higherPrioSendAdvert: true, garp: { masterRepeat: 1 } },
    ],
  });
  assert.deepEqual(o.instances.map((i) => [i.lowerPrioNoAdvert, i.higherPrioSendAdvert, i.garp.lowerPrioRepeat, i.garp.lowerPrioDelayMs, i.garp.masterRepeat]), [[true, false, 0, 1000, 4], [false, true, 0, 1000, 1]]);
  // keepalived: the lower-priority burst follows the *global* master burst, not the instance's own.
  const d = normalizeOptions({ garp: { masterRepeat: 3, masterDelayMs: 2000 }, instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], garp: { masterRepeat: 7 } }] });
  assert.deepEqual([d.instances[0]?.garp.lowerPrioRepeat, d.instances[0]?.garp.lowerPrioDelayMs], [3, 2000]);
  const dflt = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'] }] });
  assert.deepEqual([dflt.instances[0]?.garp.lowerPrioRepeat, dflt.instances[0]?.garp.lowerPrioDelayMs, dflt.instances[0]?.lowerPrioNoAdvert, dflt.instances[0]?.higherPrioSendAdvert], [5, 5000, false, false]);
  assert.throws(() => normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24'], garp: { lowerPrioRepeat: -1 } }] }), /instances\[0\] \(VI_1\)\.garp\.lowerPrioRepeat: -1/);

  // On the wire: A (150, lowerPrioNoAdvert, no lower-priority GARPs) answers nothing while B is master.
  const seg = new FakeSegment();
  let mute = false;
  const a = seg.host('10.0.0.1', () => mute);
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150, lowerPrioNoAdvert: true, garp: { masterDelayMs: 0, masterRepeat: 2, lowerPrioRepeat: 0 } });
  const rb = runtime(b, { priority: 100 });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  mute = true;
  await until('B master while A is mute', () => stateOf(b) === 'MASTER');
  await until('A heard B twice', () => (ra.snapshot().instances[0]?.counters.lowerPriorityAdverts ?? 0) >= 2);
  assert.equal(a.calls.filter((c) => c.startsWith('garp')).length, 2);
  assert.ok(a.logs.some((l) => l === 'received advert with lower priority 100, ours 150'), a.logs.join('\n'));
  mute = false;
  await until('B back to backup', () => stateOf(b) === 'BACKUP');
  await ra.stop();
  await rb.stop();
});

test('runtime: excluded VIPs are added, announced and removed with the state but not advertised, so a peer without them sees the same list', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150, excludedVips: ['10.0.0.200/24', 'fd00::200/64'] });
  const rb = runtime(b, { priority: 100 });
  await ra.start();
  // B starts once A is master: started together on a loaded machine, B's Master_Down timer (only the skew
  // longer than A's) could fire first, and A's answer to that lower-priority master adds a GARP burst.
  await until('A master', () => stateOf(a) === 'MASTER');
  await rb.start();
  await until('B heard A', () => (rb.snapshot().instances[0]?.counters.advertsReceived ?? 0) >= 3);
  // Start-up clears stale copies of all three; MASTER adds all three and announces all three, twice.
  assert.deepEqual(a.calls, ['del 10.0.0.100/24', 'del 10.0.0.200/24', 'del fd00::200/64', 'add 10.0.0.100/24', 'add 10.0.0.200/24', 'add fd00::200/64',
    'garp 10.0.0.100', 'garp 10.0.0.200', 'garp 253.0.0.0.0.0.0.0.0.0.0.0.0.0.2.0', 'garp 10.0.0.100', 'garp 10.0.0.200', 'garp 253.0.0.0.0.0.0.0.0.0.0.0.0.0.2.0']);
  assert.ok(!b.logs.some((l) => l.includes('address list differs')), b.logs.join('\n'));
  assert.deepEqual(ra.snapshot().instances[0]?.excludedVips, ['10.0.0.200/24', 'fd00::200/64']);
  await ra.stop();
  assert.deepEqual(a.calls.slice(-3), ['del 10.0.0.100/24', 'del 10.0.0.200/24', 'del fd00::200/64']);
  await rb.stop();
});

test('runtime: a VRRPv2 instance without VIPs elects a master (adverts carry no address); v3 refuses it, naming the field', { timeout: 20_000 }, async () => {
  assert.throws(() => normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: [] }] }), /instances\[0\] \(VI_1\)\.vips: VRRPv3 needs at least one virtual address/);
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150, version: 2, advertIntervalMs: 1000, vips: [] });
  const rb = runtime(b, { priority: 100, version: 2, advertIntervalMs: 1000, vips: [] });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER', 8000);
  await until('B heard A', () => (rb.snapshot().instances[0]?.counters.advertsReceived ?? 0) >= 1, 3000);
  assert.equal(stateOf(b), 'BACKUP');
  assert.deepEqual(a.calls, []);
  assert.deepEqual(rb.snapshot().instances[0]?.counters.drops, {});
  await ra.stop();
  await rb.stop();
});

test('runtime: instances started together become master in configuration order, whichever OS timer fires first (keepalived\'s one time_now)', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const h = seg.host('10.0.0.1');
  const names = ['V1', 'V2', 'V3', 'V4', 'V5'];
  const instances: VrrpInstanceOptions[] = names.map((name, i) => ({ name, interface: 'eth0', vrid: 61 + i, priority: 100, advertIntervalMs: 50, vips: [`10.0.0.${101 + i}/24`], garp: { masterDelayMs: 0, masterRepeat: 1 } }));
  // A clock that moves on at every reading: each instance's OS timer is armed a little later against the
  // same deadline, so V5's fires first and V1's last.
  let readings = 0;
  const r = new VrrpRuntime(normalizeOptions({ instances }), h.io, { transition: (e) => h.transitions.push(e), announced: (n) => h.calls.push(`announced ${n}`), log: () => undefined }, () => performance.now() + 0.2 * readings++);
  live.add(r);
  await r.start();
  await until('all masters', () => h.transitions.filter((e) => e.to === 'MASTER').length === names.length);
  await until('every GARP', () => h.calls.filter((c) => c.startsWith('garp')).length === names.length);
  assert.deepEqual(h.transitions.filter((e) => e.to === 'MASTER').map((e) => e.instance), names);
  // Each one announced once its VIP is up and its first GARP sent (the sync daemon turns master on that).
  await until('every announcement', () => h.calls.filter((c) => c.startsWith('announced')).length === names.length);
  assert.deepEqual(h.calls.filter((c) => !/^(del|add) /.test(c)), names.flatMap((n, i) => [`garp 10.0.0.${101 + i}`, `announced ${n}`]));
  const at = (c: string): number => h.calls.indexOf(c);
  for (const [i, n] of names.entries()) assert.ok(at(`add 10.0.0.${101 + i}/24`) < at(`announced ${n}`), h.calls.join(', '));
  await r.stop();
});

test('startupDelayFor: the longer of vrrp_startup_delay and what is left of vrrp_delay_after_boot (keepalived\'s rule)', () => {
  assert.equal(startupDelayFor({ startupDelayMs: 5000, delayAfterBootMs: 0 }, null), 5000);
  assert.equal(startupDelayFor({ startupDelayMs: 0, delayAfterBootMs: 60_000 }, 20_000), 40_000);
  assert.equal(startupDelayFor({ startupDelayMs: 5000, delayAfterBootMs: 60_000 }, 58_000), 5000);
  assert.equal(startupDelayFor({ startupDelayMs: 0, delayAfterBootMs: 60_000 }, 70_000), 0);
  assert.equal(startupDelayFor({ startupDelayMs: 0, delayAfterBootMs: 60_000 }, null), 0, 'unknown uptime: keepalived ignores the setting');
  assert.throws(() => normalizeOptions({ startupDelayMs: -1, instances: [] }), /startupDelayMs: -1/);
});

test('runtime: a rebooting backup that hears nobody at first grabs MASTER without a start-up delay, and does not with one (uptime-based too)', { timeout: 20_000 }, async () => {
  for (const [extra, grabs] of [[{}, true], [{ startupDelayMs: 600 }, false], [{ delayAfterBootMs: 10_600 }, false]] as const) {
    const seg = new FakeSegment();
    let mute = true;
    const a = seg.host('10.0.0.1', () => mute);
    const b = seg.host('10.0.0.2');
    b.io.uptimeMs = () => 10_000;
    const ra = runtime(a, { priority: 150 });
    await ra.start();
    await until('A master', () => stateOf(a) === 'MASTER');
    const rb = new VrrpRuntime(normalizeOptions({ ...extra, instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 } }] }), b.io, {
      transition: (e) => b.transitions.push(e),
      log: (_l, msg) => b.logs.push(msg),
    });
    live.add(rb);
    await rb.start();
    // A is heard again only after 400 ms: more than twice B's Master_Down_Interval (about 180 ms).
    await new Promise((r) => setTimeout(r, 400));
    mute = false;
    await until('B hears A', () => (rb.snapshot().instances[0]?.counters.advertsReceived ?? 0) >= 3);
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(b.transitions.some((t) => t.to === 'MASTER'), grabs, JSON.stringify(extra));
    assert.equal(stateOf(b), 'BACKUP');
    assert.equal(b.logs.some((l) => l.startsWith('Delaying startup for 0.6 seconds')), !grabs, b.logs.join('\n'));
    await rb.stop();
    await ra.stop();
  }
});

test('runtime: an instance whose interface does not exist starts in FAULT and says why; operator fault and offset apply', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const r = runtime(a, { priority: 150 }, {
    instances: [
      { name: 'GONE', interface: 'eth9', vrid: 9, priority: 100, vips: ['10.0.9.1/24'] },
      { name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 } },
    ],
  });
  await r.start();
  assert.equal(stateOf(a, 'GONE'), 'FAULT');
  assert.deepEqual(r.snapshot().instances.find((i) => i.name === 'GONE')?.faultReasons, ['interface eth9 missing']);
  await until('VI_1 master', () => stateOf(a, 'VI_1') === 'MASTER');
  r.setPriorityOffset('VI_1', -20);
  assert.equal(r.snapshot().instances.find((i) => i.name === 'VI_1')?.priority, 130);
  r.forceFault('VI_1', true);
  assert.equal(stateOf(a, 'VI_1'), 'FAULT');
  assert.deepEqual(r.snapshot().instances.find((i) => i.name === 'VI_1')?.faultReasons, ['forced by operator']);
  r.forceFault('VI_1', false);
  await until('VI_1 master again', () => stateOf(a, 'VI_1') === 'MASTER');
  await r.stop();
});

const inst = (name: string, vrid: number, priority: number, vip: string): VrrpInstanceOptions => ({
  name, interface: 'eth0', vrid, priority, advertIntervalMs: 50, vips: [vip], garp: { masterDelayMs: 0, masterRepeat: 1 },
});

test('runtime reconfigure: an unchanged instance keeps MASTER, timers and counters; a removed one sends priority 0 and releases its VIP; an added one starts', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150 }, { instances: [inst('VI_1', 51, 150, '10.0.0.100/24'), inst('VI_2', 52, 150, '10.0.0.101/24')] });
  const rb = runtime(b, { priority: 100 }, { instances: [inst('VI_2', 52, 100, '10.0.0.101/24')] });
  await ra.start();
  await rb.start();
  await until('A master of both', () => stateOf(a, 'VI_1') === 'MASTER' && stateOf(a, 'VI_2') === 'MASTER');
  await until('B backup of VI_2', () => stateOf(b, 'VI_2') === 'BACKUP');
  await new Promise((r) => setTimeout(r, 200));
  const before = ra.snapshot().instances.find((i) => i.name === 'VI_1');
  assert.ok(before !== undefined);
  const transitionsBefore = a.transitions.filter((t) => t.instance === 'VI_1').length;
  const callsBefore = a.calls.length;
  const sentBefore = a.sent.length;

  const summary = await ra.reconfigure(normalizeOptions({ instances: [inst('VI_1', 51, 150, '10.0.0.100/24'), inst('VI_3', 53, 120, '10.0.0.103/24')] }));
  assert.deepEqual(summary, { unchanged: ['VI_1'], updated: [], restarted: [], added: ['VI_3'], removed: ['VI_2'] });

  // VI_2: priority-0 advert, VIP released, and B takes over after Skew_Time rather than Master_Down_Interval.
  assert.ok(a.sent.slice(sentBefore).includes('52:0'), `adverts sent: ${a.sent.slice(sentBefore).join(' ')}`);
  assert.ok(a.calls.slice(callsBefore).includes('del 10.0.0.101/24'));
  assert.equal(stateOf(a, 'VI_2'), 'INIT');
  await until('B master of VI_2', () => stateOf(b, 'VI_2') === 'MASTER', 1000);
  // VI_3 starts like at startup (alone on its VRID: master after Master_Down_Interval).
  await until('VI_3 master', () => stateOf(a, 'VI_3') === 'MASTER');
  assert.ok(a.calls.includes('add 10.0.0.103/24'));
  await new Promise((r) => setTimeout(r, 300));
  // VI_1 never moved, its adverts kept their cadence (its Adver_Timer was not reset), counters continued.
  assert.equal(a.transitions.filter((t) => t.instance === 'VI_1').length, transitionsBefore);
  assert.ok(!a.sent.slice(sentBefore).includes('51:0'));
  const after = ra.snapshot().instances.find((i) => i.name === 'VI_1');
  assert.equal(after?.state, 'MASTER');
  assert.deepEqual(after.lastTransition, before.lastTransition);
  assert.ok(after.counters.advertsSent > before.counters.advertsSent + 5, `adverts ${before.counters.advertsSent} → ${after.counters.advertsSent}`);
  assert.ok(!a.calls.slice(callsBefore).some((c) => c.includes('10.0.0.100')), 'VI_1 VIP untouched');
  assert.deepEqual(ra.snapshot().instances.map((i) => i.name), ['VI_1', 'VI_3']);
  await ra.stop();
  await rb.stop();
});

test('runtime reconfigure: a priority change applies in place; the master stays MASTER unless the new priority loses the election', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const b = seg.host('10.0.0.2');
  const ra = runtime(a, { priority: 150 });
  const rb = runtime(b, { priority: 100 });
  await ra.start();
  await rb.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  await until('B backup', () => stateOf(b) === 'BACKUP');
  const n = a.transitions.length;
  const sentBefore = a.sent.length;
  const opts = (priority: number) => normalizeOptions({ instances: [{ ...inst('VI_1', 51, priority, '10.0.0.100/24'), garp: { masterDelayMs: 0, masterRepeat: 2 } }] });
  let s = await ra.reconfigure(opts(120));
  assert.deepEqual(s.updated, ['VI_1']);
  // The new priority is advertised at once, without leaving MASTER.
  assert.equal(a.sent.at(sentBefore), '51:120');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(a.transitions.length, n);
  assert.equal(ra.snapshot().instances[0]?.priority, 120);
  assert.equal(ra.snapshot().instances[0]?.state, 'MASTER');
  // Below the backup's 100: an ordinary election, B preempts and A becomes BACKUP.
  s = await ra.reconfigure(opts(50));
  assert.deepEqual(s.updated, ['VI_1']);
  await until('B master', () => stateOf(b) === 'MASTER');
  await until('A backup', () => stateOf(a) === 'BACKUP');
  assert.ok(a.transitions.slice(n).every((t) => t.from === 'MASTER' && t.to === 'BACKUP' && t.reason.includes('higher priority')));
  await ra.stop();
  await rb.stop();
});

test('runtime reconfigure: another change (VIPs) restarts just that instance; a new sync group member follows the running master', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const ra = runtime(a, { priority: 150 }, { instances: [inst('VI_1', 51, 150, '10.0.0.100/24'), inst('VI_2', 52, 150, '10.0.0.101/24')] });
  await ra.start();
  await until('both master', () => stateOf(a, 'VI_1') === 'MASTER' && stateOf(a, 'VI_2') === 'MASTER');
  const n1 = a.transitions.filter((t) => t.instance === 'VI_1').length;
  const s = await ra.reconfigure(normalizeOptions({
    instances: [inst('VI_1', 51, 150, '10.0.0.100/24'), inst('VI_2', 52, 150, '10.0.0.102/24'), inst('VI_4', 54, 150, '10.0.0.104/24')],
    syncGroups: [{ name: 'G', instances: ['VI_1', 'VI_4'] }],
  }));
  assert.deepEqual(s, { unchanged: [], updated: ['VI_1'], restarted: ['VI_2'], added: ['VI_4'], removed: [] });
  assert.ok(a.calls.includes('del 10.0.0.101/24'));
  // VI_4 joined G, whose VI_1 is MASTER: it follows at once, and VI_1 was not dragged to BACKUP.
  assert.equal(stateOf(a, 'VI_4'), 'MASTER');
  assert.ok(a.transitions.some((t) => t.instance === 'VI_4' && t.reason.includes('sync group')));
  await until('VI_2 master again', () => stateOf(a, 'VI_2') === 'MASTER');
  assert.ok(a.calls.includes('add 10.0.0.102/24'));
  assert.equal(a.transitions.filter((t) => t.instance === 'VI_1').length, n1);
  await ra.stop();
});

test('runtime: a disabled track script (its program cannot run) affects no instance, as in keepalived; once it runs again it counts', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const r = new VrrpRuntime(normalizeOptions({
    scripts: { chk: { command: '/nonexistent/check' }, plus: { command: '/nonexistent/plus' } },
    instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0 }, trackScripts: [{ name: 'chk', weight: 0 }, { name: 'plus', weight: 10 }] }],
  }), a.io, { transition: (e) => a.transitions.push(e), log: (_l, msg) => a.logs.push(msg) });
  live.add(r);
  await r.start();
  const snap = (): { priority: number; faultReasons: string[] } | undefined => r.snapshot().instances.find((i) => i.name === 'VI_1');
  r.track('script', 'chk', false);
  assert.equal(stateOf(a), 'FAULT', 'a failing weight-0 script is a FAULT');
  r.track('script', 'chk', false, undefined, true);
  r.track('script', 'plus', false, undefined, true);
  await until('VI_1 master with the disabled script', () => stateOf(a) === 'MASTER');
  assert.equal(snap()?.priority, 150, 'a disabled script with a positive weight adds nothing');
  r.track('script', 'plus', true);
  assert.equal(snap()?.priority, 160, 'a script that runs again counts again');
  r.track('script', 'chk', false);
  assert.equal(stateOf(a), 'FAULT');
  await r.stop();
});

test('runtime: track_src_ip — FAULT while the configured source address is not on the interface (missing at start, removed), back when it returns', { timeout: 20_000 }, async () => {
  const seg = new FakeSegment();
  const a = seg.host('10.0.0.1');
  const ra = runtime(a, { priority: 150, unicastSrcIp: '10.0.0.1', trackSrcIp: true });
  await ra.start();
  await until('A master', () => stateOf(a) === 'MASTER');
  a.setAddress('10.0.0.9', false);
  assert.equal(stateOf(a), 'MASTER', 'another address going is nothing');
  a.setAddress('10.0.0.1', false);
  await until('A in FAULT', () => stateOf(a) === 'FAULT');
  assert.deepEqual(ra.snapshot().instances[0]?.faultReasons, ['source address 10.0.0.1 not on eth0 (track_src_ip)']);
  a.setAddress('10.0.0.1', true);
  await until('A master again', () => stateOf(a) === 'MASTER');
  await ra.stop();

  // Configured but not on the interface at start: FAULT from the start (without trackSrcIp it would run).
  const b = seg.host('10.0.0.2');
  const rb = runtime(b, { priority: 150, unicastSrcIp: '10.0.0.77', trackSrcIp: true });
  await rb.start();
  await until('B in FAULT', () => stateOf(b) === 'FAULT');
  await rb.stop();
  assert.throws(() => normalizeOptions({ instances: [{ name: 'X', interface: 'eth0', vrid: 1, priority: 100, vips: ['10.0.0.1/24'], trackSrcIp: true }] }), /trackSrcIp: needs unicastSrcIp/);
});
