// keepalived's smaller VRRP directives (issue #15 item 5), from keepalived.conf to the running engine:
// mcast_src_ip, vrrp_mcast_group4/6, unicast_ttl, dont_track_primary, vrrp_gna_interval,
// notify_master_rx_lower_pri and the old lvs_sync_daemon_inteface spelling. The engine runs on a fake
// interface here (no root); test/netns/vrrp-directives.test.ts runs them against keepalived 2.2.7.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VrrpRuntime, type RuntimeIo } from '../../daemon/vrrp/runtime.js';
import { normalizeOptions, type VrrpInstanceOptions, type VrrpOptions } from '../../daemon/vrrp/options.js';
import { encodeAdvert } from '../../daemon/vrrp/packet.js';
import { validateAdvert, type InstanceView } from '../../daemon/vrrp/validate.js';
import { createMachine, nextDeadline, step } from '../../daemon/vrrp/machine.js';
import { NotifyRunner, notifyCalls, removalNotify } from '../../daemon/vrrp/notify.js';
import { fifoLine } from '../../daemon/vrrp/notify-fifo.js';
import { formatIP, parseIP } from '../../daemon/net/addr.js';
import type { ReceivedPacket, VrrpSocketOptions } from '../../daemon/net/vrrp-socket.js';
import type { LinkInfo } from '../../daemon/net/rtnl.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { vrrpOptions } from '../../daemon/director/plan.js';
import { diag, importText } from './keepalived-memfs.js';

/** One director alone on a fake eth0: records socket options, where adverts go, announcements and hooks. */
function host(o: Partial<VrrpInstanceOptions>, top: Partial<VrrpOptions> = {}) {
  const rec = { sockets: [] as VrrpSocketOptions[], dsts: [] as string[], announced: [] as string[], states: [] as string[], rxLower: [] as number[] };
  let onLink: ((l: LinkInfo, deleted: boolean) => void) | null = null;
  let deliver: ((p: ReceivedPacket) => void) | null = null;
  const io: RuntimeIo = {
    links: () => Promise.resolve([{ index: 2, name: 'eth0', up: true, mac: null }]),
    addresses: () => Promise.resolve([{ family: 4, address: parseIP('10.0.0.1'), prefixLength: 24, scope: 0 }]),
    addAddress: () => Promise.resolve(true),
    delAddress: () => Promise.resolve(false),
    watchLinks: (cb) => {
      onLink = cb;
    },
    openSocket: (so, onPacket) => {
      rec.sockets.push(so);
      deliver = onPacket;
      return {
        send: (_p, dst) => {
          rec.dsts.push(formatIP(dst));
        },
        close: () => undefined,
      };
    },
    announce: (_n, _i, vip) => {
      rec.announced.push(formatIP(vip));
    },
    close: () => undefined,
  };
  const inst: VrrpInstanceOptions = { name: 'VI_1', interface: 'eth0', vrid: 51, priority: 150, advertIntervalMs: 50, vips: ['10.0.0.100/24'], garp: { masterDelayMs: 0, masterRepeat: 3 }, ...o };
  const rt = new VrrpRuntime(normalizeOptions({ instances: [inst], ...top }), io, {
    transition: (e) => rec.states.push(e.to),
    masterRxLowerPri: (_i, prio) => rec.rxLower.push(prio),
    log: () => undefined,
  });
  live.add(rt);
  return {
    rt,
    rec,
    link: (up: boolean) => onLink?.({ index: 2, name: 'eth0', up, mac: null }, false),
    /** An advert from 10.0.0.2 with this priority, as a peer that still believes it is master would send. */
    advert: (priority: number) => {
      const src = parseIP('10.0.0.2');
      const dst = parseIP('224.0.0.18');
      const payload = encodeAdvert({ version: 3, vrid: 51, priority, intervalCs: 5, addresses: [parseIP('10.0.0.100')] }, { family: 4, src, dst });
      deliver?.({ src, dst, ttl: 255, ifindex: 2, payload });
    },
  };
}

const live = new Set<VrrpRuntime>();
after(async () => {
  for (const r of live) await r.stop();
});
const until = async (what: string, f: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

test('importer: each directive lands in the lvsd config, with its line; keepalived 1.x\'s lvs_sync_daemon_inteface is read', () => {
  const r = importText(
    'global_defs {\n vrrp_mcast_group4 224.0.0.19\n vrrp_mcast_group6 ff02::13\n vrrp_gna_interval 0.02\n}\n' +
      'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n mcast_src_ip 10.0.0.5\n dont_track_primary\n' +
      ' notify_master_rx_lower_pri "/usr/local/bin/rx.sh arg"\n lvs_sync_daemon_inteface eth1\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n' +
      'vrrp_instance VI_2 {\n interface eth0\n virtual_router_id 52\n unicast_src_ip 10.0.0.5\n unicast_ttl 7\n unicast_peer {\n  10.0.0.6\n }\n virtual_ipaddress {\n  10.0.0.101/24\n }\n}\n',
  );
  assert.deepEqual(diag(r), []);
  const v = r.config.vrrp;
  assert.equal(v?.multicastGroup4, '224.0.0.19');
  assert.equal(v.multicastGroup6, 'ff02::13');
  assert.deepEqual(v.garpGroups, [{ naInterval: '20ms' }]);
  const [a, b] = v.instances ?? [];
  assert.equal(a?.unicastSrcIp, '10.0.0.5');
  assert.equal(a.dontTrackPrimary, true);
  assert.equal(a.notify?.masterRxLowerPri, '/usr/local/bin/rx.sh arg');
  assert.equal(r.config.ipvs?.syncDaemon?.interface, 'eth1');
  assert.equal(b?.unicastTtl, 7);
  assert.match(r.yaml, /unicastTtl: 7 # from [^\n]*:21/);
  // The result loads and reaches the engine's options.
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const eo = vrrpOptions(loaded.config);
  assert.equal(eo.multicastGroup4, '224.0.0.19');
  assert.deepEqual([eo.instances[0]?.dontTrackPrimary, eo.instances[1]?.unicastTtl, eo.instances[0]?.notify?.masterRxLowerPri], [true, 7, '/usr/local/bin/rx.sh arg']);
});

test('importer: what keepalived skips is reported with its line, not carried', () => {
  const r = importText(
    'global_defs {\n vrrp_mcast_group4 10.0.0.1\n vrrp_mcast_group6 ff05::12\n}\n' +
      'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n unicast_ttl 7\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n',
  );
  assert.deepEqual(diag(r), ['2 vrrp_mcast_group4', '3 vrrp_mcast_group6', '8 unicast_ttl']);
  assert.equal(r.config.vrrp?.multicastGroup4, undefined);
  assert.equal(r.config.vrrp?.instances?.[0]?.unicastTtl, undefined);
});

test('config: a group that is not multicast and a unicastTtl without peers are refused, naming the field', () => {
  const yaml = (extra: string, inst = '') =>
    `vrrp:\n${extra}  instances:\n    - name: VI_1\n      interface: eth0\n      virtualRouterId: 51\n      virtualIpaddresses: [10.0.0.100/24]\n${inst}`;
  const bad = loadConfigText(yaml('  multicastGroup4: 10.0.0.1\n  multicastGroup6: ff05::1\n', '      unicastTtl: 9\n'), 'x.yaml');
  assert.equal(bad.ok, false);
  const text = JSON.stringify(bad);
  assert.match(text, /"line":2,"col":20,"path":"vrrp\.multicastGroup4","message":"10\.0\.0\.1 is not an IPv4 multicast/);
  assert.match(text, /"line":3,"col":20,"path":"vrrp\.multicastGroup6","message":"ff05::1 is not an IPv6 link-local multicast/);
  assert.match(text, /"line":9,"col":19,"path":"vrrp\.instances\[0\]\.unicastTtl","message":"unicastTtl needs unicastPeers/);
  assert.throws(() => normalizeOptions({ multicastGroup4: '10.1.1.1', instances: [] }), /multicastGroup4: 10\.1\.1\.1 is not an IPv4 multicast/);
});

test('engine: vrrp_mcast_group4 is the group joined and the adverts\' destination; unicast_ttl reaches the socket', async () => {
  const m = host({}, { multicastGroup4: '224.0.0.19' });
  await m.rt.start();
  await until('master', () => m.rec.states.includes('MASTER'));
  assert.equal(formatIP(m.rec.sockets[0]?.group ?? Buffer.alloc(4)), '224.0.0.19');
  assert.ok(m.rec.dsts.length > 0 && m.rec.dsts.every((d) => d === '224.0.0.19'), m.rec.dsts.join(','));
  await m.rt.stop();
  const u = host({ unicastPeers: ['10.0.0.2'], unicastTtl: 7 });
  await u.rt.start();
  assert.equal(u.rec.sockets[0]?.unicastTtl, 7);
  assert.equal(u.rec.sockets[0].multicast, false);
  await u.rt.stop();
});

test('engine: dont_track_primary keeps a master out of FAULT when its own interface goes down; without it, FAULT', async () => {
  for (const dontTrackPrimary of [false, true]) {
    const h = host({ dontTrackPrimary });
    await h.rt.start();
    await until('master', () => h.rec.states.includes('MASTER'));
    h.link(false);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(h.rt.snapshot().instances[0]?.state, dontTrackPrimary ? 'MASTER' : 'FAULT', `dontTrackPrimary ${dontTrackPrimary}`);
    await h.rt.stop();
  }
});

test('engine: a lower-priority advert raises MASTER_RX_LOWER_PRI once per advert, with our priority; a higher one does not', async () => {
  const h = host({});
  await h.rt.start();
  await until('master', () => h.rec.states.includes('MASTER'));
  h.advert(100);
  h.advert(120);
  assert.deepEqual(h.rec.rxLower, [150, 150]);
  h.advert(200);
  assert.deepEqual(h.rec.rxLower, [150, 150]);
  await until('backup after a higher advert', () => h.rt.snapshot().instances[0]?.state === 'BACKUP');
  await h.rt.stop();
});

test('engine: garp.naInterval spaces the NAs of IPv6 addresses apart from the GARPs (all IPv4 at once here)', async () => {
  const h = host({ excludedVips: ['fd00::100/64'], garp: { masterDelayMs: 0, masterRepeat: 3, intervalMs: 0, naIntervalMs: 150 } });
  await h.rt.start();
  await until('first announcement', () => h.rec.announced.length > 0);
  // The GARPs went back to back with the first NA; the other NAs follow 150 ms apart.
  assert.deepEqual(h.rec.announced, ['10.0.0.100', '10.0.0.100', '10.0.0.100', 'fd00::100']);
  await until('all three NAs', () => h.rec.announced.filter((a) => a === 'fd00::100').length === 3);
  await h.rt.stop();
});

test('notify_master_rx_lower_pri runs without arguments, in the instance\'s queue', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-rx-'));
  const script = join(dir, 'rx.sh');
  writeFileSync(script, `#!/bin/sh\necho "args:$#:$*" >> ${dir}/out\n`);
  chmodSync(script, 0o755);
  const results: number[] = [];
  const n = new NotifyRunner((_o, r) => results.push(r.code ?? -1));
  n.runMasterRxLowerPri('VI_1', { masterRxLowerPri: `${script} one` });
  n.runMasterRxLowerPri('VI_1', {});
  await n.idle();
  assert.deepEqual(results, [0]);
  assert.equal(readFileSync(join(dir, 'out'), 'utf8'), 'args:1:one\n');
});

test('notify FIFO: keepalived\'s line format, and vrrp_notify_fifo (+ _script) imported; notify_fifo alone is taken too', () => {
  assert.equal(fifoLine('INSTANCE', 'VI_1', 'MASTER', 150), 'INSTANCE "VI_1" MASTER 150\n');
  assert.equal(fifoLine('GROUP', 'G', 'BACKUP', 150), 'GROUP "G" BACKUP 0\n');
  assert.equal(fifoLine('INSTANCE', 'VI_1', 'MASTER_RX_LOWER_PRI', 120), 'INSTANCE "VI_1" MASTER_RX_LOWER_PRI 120\n');
  const r = importText('global_defs {\n notify_fifo /run/all.fifo\n vrrp_notify_fifo /run/vrrp.fifo\n vrrp_notify_fifo_script "/usr/local/bin/reader -v"\n}\n');
  assert.deepEqual(r.config.vrrp?.notifyFifo, { path: '/run/vrrp.fifo', script: '/usr/local/bin/reader -v' });
  assert.deepEqual(diag(r), ['2 notify_fifo']);
  const r2 = importText('global_defs {\n notify_fifo /run/all.fifo\n}\n');
  assert.deepEqual(r2.config.vrrp?.notifyFifo, { path: '/run/all.fifo' });
  assert.deepEqual(diag(r2), []);
});

test('down_timer_adverts: imported per instance and from global_defs, to the engine; the backup\'s Master_Down_Interval follows it', () => {
  const r = importText(
    'global_defs {\n vrrp_down_timer_adverts 2\n}\n' +
      'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n priority 100\n down_timer_adverts 1\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n' +
      'vrrp_instance VI_2 {\n interface eth0\n virtual_router_id 52\n priority 100\n virtual_ipaddress {\n  10.0.0.101/24\n }\n}\n' +
      'vrrp_instance VI_3 {\n interface eth0\n virtual_router_id 53\n priority 100\n down_timer_adverts 101\n virtual_ipaddress {\n  10.0.0.102/24\n }\n}\n',
  );
  const [a, b, c] = r.config.vrrp?.instances ?? [];
  assert.equal(a?.downTimerAdverts, 1);
  assert.equal(b?.downTimerAdverts, 2, 'global_defs vrrp_down_timer_adverts is every instance\'s default');
  assert.equal(c?.downTimerAdverts, 2, 'an out-of-range value is reported and the global default stays');
  assert.deepEqual(diag(r), ['25 down_timer_adverts']);
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const n = normalizeOptions(vrrpOptions(loaded.config));
  assert.deepEqual(n.instances.map((i) => i.downTimerAdverts), [1, 2, 2]);
  // A backup (priority 100, 1 s adverts) arms Master_Down_Timer = N × 1000 + (256 − 100) × 1000 / 256 ms, keepalived's VRRP_MS_DOWN_TIMER.
  const mdt = (adverts: number | undefined): number | null => {
    const m = createMachine({ version: 3, intervalCs: 100, preempt: true, preemptDelayMs: 0, primaryAddress: parseIP('10.0.0.1'), ...(adverts === undefined ? {} : { downTimerAdverts: adverts }) }, 100);
    return nextDeadline(step(m, { type: 'startup' }, 0).machine);
  };
  assert.equal(mdt(undefined), 3609.375);
  assert.equal(mdt(1), 1609.375);
  assert.equal(mdt(2), 2609.375);
  assert.throws(() => normalizeOptions({ instances: [{ name: 'X', interface: 'eth0', vrid: 1, priority: 100, vips: ['10.0.0.1/32'], downTimerAdverts: 0 }] }), /downTimerAdverts: 0 not in 1\.\.100/);
});

test('notify_deleted: imported with and without its script, to the engine; a removal says FAULT, DELETED with it (keepalived 2.2.7)', () => {
  const r = importText(
    'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n priority 100\n notify_deleted "/usr/local/bin/gone VI_1" nobody\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n' +
      'vrrp_instance VI_2 {\n interface eth0\n virtual_router_id 52\n priority 100\n notify_deleted\n virtual_ipaddress {\n  10.0.0.101/24\n }\n}\n' +
      'vrrp_instance VI_3 {\n interface eth0\n virtual_router_id 53\n priority 100\n virtual_ipaddress {\n  10.0.0.102/24\n }\n}\n',
  );
  assert.deepEqual(diag(r), [], 'notify_deleted is carried, not reported');
  const [a, b, c] = r.config.vrrp?.instances ?? [];
  assert.deepEqual([a?.notifyDeleted, a?.notify?.deleted, a?.notify?.users?.deleted], [true, '/usr/local/bin/gone VI_1', 'nobody']);
  assert.deepEqual([b?.notifyDeleted, b?.notify], [true, undefined]);
  assert.equal(c?.notifyDeleted, undefined);
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  const n = normalizeOptions(vrrpOptions(loaded.config));
  assert.deepEqual(n.instances.map((i) => i.notifyDeleted), [true, true, false]);
  // A script alone implies the directive, as keepalived's notify_deleted SCRIPT does.
  assert.equal(normalizeOptions({ instances: [{ name: 'X', interface: 'eth0', vrid: 1, priority: 100, vips: ['10.0.0.1/32'], notify: { deleted: '/bin/true' } }] }).instances[0]?.notifyDeleted, true);
  // keepalived's clear_diff_vrrp + send_instance_notifies: FAULT, or nothing from FAULT; DELETED from any state with
  // the directive. A FAULT said this way runs `any` only, not the fault hook (measured in the netns test).
  const hooks = { deleted: '/x a', fault: '/f', any: '/n', users: { fault: 'f', any: 'n' } };
  const said = (from: string, deleted: boolean): string[][] | null => {
    const r = removalNotify(from, deleted, hooks);
    return r === null ? null : notifyCalls('INSTANCE', 'VI_1', r.state, 100, r.hooks);
  };
  assert.deepEqual(['MASTER', 'BACKUP', 'FAULT'].map((s) => said(s, false)), [[['/n', 'INSTANCE', 'VI_1', 'FAULT', '100']], [['/n', 'INSTANCE', 'VI_1', 'FAULT', '100']], null]);
  assert.deepEqual(['MASTER', 'BACKUP', 'FAULT'].map((s) => said(s, true)), Array(3).fill([['/x', 'a'], ['/n', 'INSTANCE', 'VI_1', 'DELETED', '100']]));
  assert.deepEqual(removalNotify('MASTER', false, hooks)?.hooks.users, { any: 'n' });
  assert.equal(fifoLine('INSTANCE', 'VI_1', 'DELETED', 100), 'INSTANCE "VI_1" DELETED 100\n');
});

test('old_unicast_checksum: imported (bare = always, never); an advert checksummed over the group is taken as keepalived 2.2.7 takes it', () => {
  const r = importText(
    'vrrp_instance VI_1 {\n interface eth0\n virtual_router_id 51\n priority 100\n old_unicast_checksum\n unicast_peer {\n  10.0.0.2\n }\n virtual_ipaddress {\n  10.0.0.100/24\n }\n}\n' +
      'vrrp_instance VI_2 {\n interface eth0\n virtual_router_id 52\n priority 100\n old_unicast_checksum never\n unicast_peer {\n  10.0.0.2\n }\n virtual_ipaddress {\n  10.0.0.101/24\n }\n}\n' +
      'vrrp_instance VI_3 {\n interface eth0\n virtual_router_id 53\n priority 100\n old_unicast_checksum sometimes\n unicast_peer {\n  10.0.0.2\n }\n virtual_ipaddress {\n  10.0.0.102/24\n }\n}\n',
  );
  assert.deepEqual(r.config.vrrp?.instances?.map((i) => i.oldUnicastChecksum), ['always', 'never', undefined]);
  assert.deepEqual(diag(r), ['29 old_unicast_checksum']);
  const loaded = loadConfigText(r.yaml, 'imported.yaml');
  assert.ok(loaded.ok, JSON.stringify(loaded));
  assert.deepEqual(normalizeOptions(vrrpOptions(loaded.config)).instances.map((i) => i.oldUnicastChecksum), ['always', 'never', 'auto']);

  const group = parseIP('224.0.0.18');
  const peer = parseIP('10.0.0.2');
  const me = parseIP('10.0.0.1');
  const advert = { version: 3 as const, vrid: 51, priority: 200, intervalCs: 100, addresses: [parseIP('10.0.0.100')] };
  const oldWay = encodeAdvert(advert, { family: 4, src: peer, dst: group });
  const rfcWay = encodeAdvert(advert, { family: 4, src: peer, dst: me });
  const view = (mode?: 'old' | 'either'): InstanceView => ({
    family: 4, version: 3, vrid: 51, intervalCs: 100, ownAddresses: [me], unicastPeers: [peer], vips: [parseIP('10.0.0.100')],
    ...(mode === undefined ? {} : { oldChecksum: { group, mode } }),
  });
  const rx = (payload: Buffer) => ({ src: peer, dst: me, ttl: 255, payload });
  const verdict = (v: ReturnType<typeof validateAdvert>): string => (v.ok ? `ok ${v.warnings.join(',')}`.trim() : v.reason);
  // auto ('either'): the RFC's as before, and the old one with a warning that makes the runtime switch.
  assert.deepEqual([verdict(validateAdvert(view('either'), rx(rfcWay))), verdict(validateAdvert(view('either'), rx(oldWay)))], ['ok', 'ok old-checksum']);
  // always ('old'): only the old one; never (no oldChecksum): only the RFC's.
  assert.deepEqual([verdict(validateAdvert(view('old'), rx(rfcWay))), verdict(validateAdvert(view('old'), rx(oldWay)))], ['checksum', 'ok']);
  assert.deepEqual([verdict(validateAdvert(view(), rx(rfcWay))), verdict(validateAdvert(view(), rx(oldWay)))], ['ok', 'checksum']);
});
