// The runtime's pure helpers: receive validation, tracking rules, rise/fall, options, notify arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateAdvert, type InstanceView } from '../../daemon/vrrp/validate.js';
import { encodeAdvert, AUTH_PASS } from '../../daemon/vrrp/packet.js';
import { applyTracking } from '../../daemon/vrrp/tracking.js';
import { RiseFall } from '../../daemon/vrrp/track.js';
import { normalizeOptions, VrrpOptionsError } from '../../daemon/vrrp/options.js';
import { notifyCalls, splitCommand, NotifyRunner } from '../../daemon/vrrp/notify.js';
import { parseIP } from '../../daemon/net/addr.js';
import { garpPayload, unsolicitedNa } from '../../daemon/net/garp.js';

const PEER = parseIP('10.0.0.1');
const ME = parseIP('10.0.0.2');
const GROUP = parseIP('224.0.0.18');
const VIP = parseIP('10.0.0.100');
const view = (o: Partial<InstanceView> = {}): InstanceView => ({ family: 4, version: 3, vrid: 51, intervalCs: 100, ownAddresses: [ME], unicastPeers: [], vips: [VIP], ...o });
const adv = (o: { version?: 2 | 3; vrid?: number; intervalCs?: number; addresses?: Buffer[]; password?: string } = {}, src = PEER, dst = GROUP): Buffer =>
  encodeAdvert(
    { version: o.version ?? 3, vrid: o.vrid ?? 51, priority: 200, intervalCs: o.intervalCs ?? 100, addresses: o.addresses ?? [VIP], ...(o.password !== undefined ? { authType: AUTH_PASS, password: o.password } : {}) },
    { family: 4, src, dst },
  );

test('validation: each RFC 5798 §7.1 / keepalived check drops with its reason', () => {
  const rows: [string, InstanceView, { src?: Buffer; dst?: Buffer; ttl?: number; payload: Buffer }, string][] = [
    ['TTL 64', view(), { ttl: 64, payload: adv() }, 'ttl'],
    ['our own advert', view(), { src: ME, payload: adv({}, ME) }, 'own'],
    ['another VRID', view(), { payload: adv({ vrid: 52 }) }, 'other-vrid'],
    ['v2 advert to a v3 instance', view(), { payload: adv({ version: 2 }) }, 'version-mismatch'],
    ['bad checksum (dst differs)', view(), { dst: parseIP('10.0.0.2'), payload: adv() }, 'checksum'],
    ['unicast: unknown source', view({ unicastPeers: [parseIP('10.0.0.9')] }), { payload: adv() }, 'unknown-peer'],
    ['v2 without the password we need', view({ version: 2, authPass: 'pw' }), { payload: adv({ version: 2 }) }, 'auth-mismatch'],
    ['v2 wrong password', view({ version: 2, authPass: 'pw' }), { payload: adv({ version: 2, password: 'nope' }) }, 'auth-mismatch'],
    ['v2 password we do not expect', view({ version: 2 }), { payload: adv({ version: 2, password: 'pw' }) }, 'auth-mismatch'],
    ['v2 interval mismatch', view({ version: 2 }), { payload: adv({ version: 2, intervalCs: 200 }) }, 'interval-mismatch'],
    ['garbage', view(), { payload: Buffer.from('hello') }, 'too-short'],
  ];
  for (const [name, v, r, reason] of rows) {
    const verdict = validateAdvert(v, { src: r.src ?? PEER, dst: r.dst ?? GROUP, ttl: r.ttl ?? 255, payload: r.payload });
    assert.equal(verdict.ok ? 'accepted' : verdict.reason, reason, name);
  }
});

test('validation: unicast adverts are accepted at any TTL (they may be routed; keepalived sends IPv6 unicast with hop limit 64)', () => {
  const v = view({ unicastPeers: [PEER] });
  for (const ttl of [64, 1, 255]) {
    const verdict = validateAdvert(v, { src: PEER, dst: ME, ttl, payload: adv({}, PEER, ME) });
    assert.ok(verdict.ok, `TTL ${ttl}: ${verdict.ok ? '' : verdict.detail}`);
  }
});

test('validation: accepted adverts, with warnings for a differing v3 interval or address list', () => {
  const ok = (v: InstanceView, payload: Buffer): string[] => {
    const r = validateAdvert(v, { src: PEER, dst: GROUP, ttl: 255, payload });
    assert.ok(r.ok, r.ok ? '' : r.detail);
    return r.warnings;
  };
  assert.deepEqual(ok(view(), adv()), []);
  assert.deepEqual(ok(view({ version: 2, authPass: 'pw' }), adv({ version: 2, password: 'pw' })), []);
  assert.deepEqual(ok(view({ unicastPeers: [PEER] }), adv({}, PEER, GROUP)), []);
  assert.deepEqual(ok(view(), adv({ intervalCs: 10 })), ['interval-differs']);
  assert.deepEqual(ok(view(), adv({ addresses: [VIP, parseIP('10.0.0.101')] })), ['address-list']);
});

test('tracking: keepalived weight rules for interfaces, scripts and files', () => {
  const rows: [string, number, Parameters<typeof applyTracking>[1], { priority: number; fault: boolean }][] = [
    ['nothing tracked', 100, [], { priority: 100, fault: false }],
    ['weight 0 interface down → FAULT', 100, [{ kind: 'interface', name: 'eth1', weight: 0, ok: false }], { priority: 100, fault: true }],
    ['negative weight counts while failing', 100, [{ kind: 'script', name: 's', weight: -30, ok: false }], { priority: 70, fault: false }],
    ['negative weight is nothing while passing', 100, [{ kind: 'script', name: 's', weight: -30, ok: true }], { priority: 100, fault: false }],
    ['positive weight counts while passing', 100, [{ kind: 'script', name: 's', weight: 20, ok: true }], { priority: 120, fault: false }],
    ['positive weight is nothing while failing', 100, [{ kind: 'interface', name: 'e', weight: 20, ok: false }], { priority: 100, fault: false }],
    ['file value × weight', 100, [{ kind: 'file', name: '/f', weight: 2, ok: true, value: -15 }], { priority: 70, fault: false }],
    ['file with weight 0 and a non-zero value → FAULT', 100, [{ kind: 'file', name: '/f', weight: 0, ok: true, value: 1 }], { priority: 100, fault: true }],
    ['clamped to 1..254', 100, [{ kind: 'script', name: 's', weight: 200, ok: true }], { priority: 254, fault: false }],
    ['clamped to 1', 10, [{ kind: 'script', name: 's', weight: -50, ok: false }], { priority: 1, fault: false }],
    ['an owner (255) keeps 255', 255, [{ kind: 'script', name: 's', weight: -50, ok: false }], { priority: 255, fault: false }],
  ];
  for (const [name, base, items, want] of rows) {
    const r = applyTracking(base, items);
    assert.deepEqual({ priority: r.priority, fault: r.fault }, want, name);
  }
  assert.deepEqual(applyTracking(100, [{ kind: 'interface', name: 'eth1', weight: 0, ok: false }]).reasons, ['interface eth1 down']);
});

test('rise/fall: the first result decides, then `rise` passes / `fall` failures in a row flip it', () => {
  const rf = new RiseFall(2, 3);
  const seq = [true, false, false, true, false, false, false, true, true].map((x) => rf.push(x));
  assert.deepEqual(seq, [true, null, null, null, null, null, false, null, true]);
});

test('options: keepalived defaults, and every error names the instance and field', () => {
  const n = normalizeOptions({ instances: [{ name: 'VI_1', interface: 'eth0', vrid: 51, priority: 100, vips: ['10.0.0.100/24', { address: '10.0.1.100/24', dev: 'eth1', label: 'eth1:v' }] }] });
  const i = n.instances[0];
  assert.ok(i !== undefined);
  assert.equal(i.version, 3);
  assert.equal(i.intervalCs, 100);
  assert.equal(i.preempt, true);
  assert.deepEqual(i.garp, { masterDelayMs: 5000, masterRepeat: 5, masterRefreshMs: 0, masterRefreshRepeat: 1, intervalMs: 0, naIntervalMs: 0, extraIfMs: 0, lowerPrioRepeat: 5, lowerPrioDelayMs: 5000 });
  assert.deepEqual(i.vips.map((v) => [v.cidr, v.dev, v.label]), [['10.0.0.100/24', 'eth0', undefined], ['10.0.1.100/24', 'eth1', 'eth1:v']]);
  const bad = (): void => {
    normalizeOptions({
      instances: [
        { name: 'A', interface: 'eth0', vrid: 0, priority: 300, version: 2, advertIntervalMs: 1500, authPass: '123456789', vips: ['fd00::1/64'] },
        { name: 'B', interface: 'eth0', vrid: 7, priority: 100, advertIntervalMs: 5, vips: ['10.0.0.1/24', 'fd00::2/64'], trackScripts: [{ name: 'nope' }] },
        { name: 'C', interface: 'eth0', vrid: 7, priority: 100, vips: ['10.0.0.2/24'] },
      ],
      syncGroups: [{ name: 'G', instances: ['A', 'Z'] }],
    });
  };
  assert.throws(bad, VrrpOptionsError);
  try {
    bad();
  } catch (e) {
    const m = (e as Error).message;
    for (const want of [
      'instances[0] (A).vrid: 0 not in 1..255',
      'instances[0] (A).priority: 300 not in 1..255',
      'instances[0] (A).advertIntervalMs: VRRPv2 needs whole seconds',
      'instances[0] (A).authPass: longer than 8 bytes',
      'instances[0] (A).version: VRRPv2 is IPv4 only',
      'instances[1] (B).advertIntervalMs: VRRPv3 needs 10..40950 ms',
      'instances[1] (B).vips[1]: IPv4 and IPv6 VIPs cannot share one instance',
      'instances[1] (B).trackScripts: no script named nope',
      'instances[2] (C).vrid: VRID 7 already used on eth0 by B',
      'syncGroups (G).instances: no instance named Z',
    ]) assert.ok(m.includes(want), `missing "${want}" in:\n${m}`);
  }
});

test('notify: specific hook first, then `notify` with INSTANCE|GROUP name STATE priority appended', () => {
  assert.deepEqual(splitCommand(`/bin/x "a b" 'c d' e`), ['/bin/x', 'a b', 'c d', 'e']);
  assert.deepEqual(notifyCalls('INSTANCE', 'VI_1', 'MASTER', 150, { master: '/m.sh arg', any: '/any.sh' }), [['/m.sh', 'arg'], ['/any.sh', 'INSTANCE', 'VI_1', 'MASTER', '150']]);
  assert.deepEqual(notifyCalls('GROUP', 'VG', 'FAULT', 0, { master: '/m.sh', any: '/any.sh' }), [['/any.sh', 'GROUP', 'VG', 'FAULT', '0']]);
  assert.deepEqual(notifyCalls('INSTANCE', 'VI_1', 'STOP', 100, { stop: '/s.sh' }), [['/s.sh']]);
});

test('notify runner: hooks of one instance run one after the other, in order', async () => {
  const seen: string[] = [];
  const r = new NotifyRunner((_o, res) => {
    seen.push(`${res.args.join(' ')}:${res.code}`);
  });
  // The first hook sleeps; if hooks ran concurrently the second would finish first.
  r.run('INSTANCE', 'VI_1', 'MASTER', 100, { master: '/bin/sh -c "sleep 0.2" first', any: '/bin/true' });
  r.run('INSTANCE', 'VI_1', 'BACKUP', 100, { backup: '/bin/false' });
  await r.idle();
  assert.deepEqual(seen, ['-c sleep 0.2 first:0', 'INSTANCE VI_1 MASTER 100:0', ':1']);
});

test('GARP and unsolicited NA payloads, as keepalived sends them', () => {
  const mac = Buffer.from('02aabbccddee', 'hex');
  // ARP request: Ethernet/IPv4, sender = target = VIP, target MAC all ones (notes/vrrp.md).
  assert.equal(garpPayload(mac, VIP).toString('hex'), '0001080006040001' + '02aabbccddee' + '0a000064' + 'ffffffffffff' + '0a000064');
  const na = unsolicitedNa(mac, parseIP('fd00::100'));
  assert.equal(na[0], 136);
  assert.equal(na.readUInt32BE(4), 0x20000000); // Override, not Solicited
  assert.equal(na.subarray(8, 24).toString('hex'), 'fd000000000000000000000000000100');
  assert.equal(na.subarray(24).toString('hex'), '0201' + '02aabbccddee');
});
