// Runs INSIDE the QEMU guest (real IPVS): programs every method and scheduler through lvsd's backend,
// reads it back through lvsd and ipvsadm, checks typed errors, reconcile/adopt/drift, the sync daemon,
// timeouts, and a differential against keepalived; and use_ipvlan against keepalived (ipvlan.ts). Prints a JSON report (see checks.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { IpvsClient } from '../../../daemon/ipvs/client.js';
import { IpvsError } from '../../../daemon/ipvs/errors.js';
import { SvcFlag } from '../../../daemon/ipvs/constants.js';
import { canonicalizeDesired } from '../../../daemon/dataplane/ipvs/spec.js';
import { readPacked, readService } from '../../../daemon/dataplane/ipvs/observe.js';
import { ipvsNative } from '../../../daemon/ipvs/native.js';
import type { IpvsOp } from '../../../daemon/ipvs/client.js';
import type { IpvsDest, IpvsService } from '../../../daemon/ipvs/codec.js';
import { createIpvsDataplane, probeIpvs } from '../../../daemon/dataplane/ipvs/backend.js';
import { fileOwnership } from '../../../daemon/dataplane/ipvs/ownership.js';
import type { DesiredTable, ObservedTable, RealServerSpec, Scheduler, ServiceSpec } from '../../../daemon/dataplane/types.js';
import { Checks, ipvsadmSave, sh } from './checks.js';
import { ipvlanChecks } from './ipvlan.js';

const checks = new Checks();
const dir = mkdtempSync(join(tmpdir(), 'lvsd-guest-'));
const SCHEDS: Scheduler[] = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'fo', 'ovf', 'mh'];

function table(): DesiredTable {
  const services: ServiceSpec[] = SCHEDS.map((scheduler, i) => {
    const tunnels: RealServerSpec['tunnel'][] = [{ type: 'ipip' }, { type: 'gue', port: 6080, checksum: 'csum' }, { type: 'gre', checksum: 'csum' }];
    return {
      id: `tcp:10.10.0.${i + 1}:80`, family: 4, protocol: 'tcp', address: `10.10.0.${i + 1}`, port: 80, scheduler,
      realServers: [
        { id: `10.20.${i}.1:8080`, address: `10.20.${i}.1`, port: 8080, weight: 3, method: 'nat', upperThreshold: 100, lowerThreshold: 10 },
        { id: `10.20.${i}.2:80`, address: `10.20.${i}.2`, port: 80, weight: 2, method: 'dr' },
        { id: `10.20.${i}.3:80`, address: `10.20.${i}.3`, port: 80, weight: 1, method: 'tun', tunnel: tunnels[i % 3] },
      ],
    };
  });
  services.push(
    { id: 'udp:[fd00::10]:53', family: 6, protocol: 'udp', address: 'fd00::10', port: 53, scheduler: 'wlc',
      realServers: [{ id: '[fd00:1::1]:53', address: 'fd00:1::1', port: 53, weight: 5, method: 'nat' }, { id: '[fd00:1::2]:5353', address: 'fd00:1::2', port: 5353, weight: 0, method: 'nat' }] },
    { id: 'sctp:10.10.1.1:3868', family: 4, protocol: 'sctp', address: '10.10.1.1', port: 3868, scheduler: 'rr',
      realServers: [{ id: '10.20.100.1:3868', address: '10.20.100.1', port: 3868, weight: 1, method: 'nat' }] },
    { id: 'fwmark:4:7', family: 4, protocol: 'tcp', fwmark: 7, scheduler: 'sh', schedulerFlags: ['sh-port', 'sh-fallback'], persistence: { timeoutSec: 300, netmask: '255.255.255.0' },
      realServers: [{ id: '10.20.101.1:0', address: '10.20.101.1', port: 0, weight: 1, method: 'dr' }] },
    { id: 'fwmark:6:8', family: 6, protocol: 'tcp', fwmark: 8, scheduler: 'mh', schedulerFlags: ['mh-port'], persistence: { timeoutSec: 60, netmask: '64' },
      realServers: [{ id: '[fd00:2::1]:443', address: 'fd00:2::1', port: 443, weight: 2, method: 'nat' }] },
    { id: 'udp:10.10.1.2:53', family: 4, protocol: 'udp', address: '10.10.1.2', port: 53, scheduler: 'rr', onePacket: true,
      realServers: [{ id: '10.20.102.1:53', address: '10.20.102.1', port: 53, weight: 1, method: 'nat' }] },
  );
  return { services };
}

/** Identity + configuration only, sorted: what must survive a round trip through the kernel. */
function config(t: DesiredTable | ObservedTable): unknown {
  return t.services
    .map((s) => ({
      id: s.id, scheduler: s.scheduler, flags: s.schedulerFlags ?? [], persistence: s.persistence ?? null, onePacket: s.onePacket ?? false,
      rs: s.realServers
        .map((r) => ({ id: r.id, weight: r.weight, method: r.method, tunnel: r.tunnel ?? null, u: r.upperThreshold ?? 0, l: r.lowerThreshold ?? 0 }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

const ownFile = join(dir, 'owned.json');
const desired = table();
// No resync timer: the checks call resync() themselves, and in a starved guest (checks of 20–60 s) the 30 s timer
// fired between `ipvsadm -C` and `ipvsadm -R`, re-added the services, met -R's EEXIST and gave up their ownership.
let dp = await createIpvsDataplane({ ownership: fileOwnership(ownFile), drain: { mode: 'immediate', timeoutMs: 0 }, resyncIntervalMs: 0 });
const client = await IpvsClient.open();

await checks.check('probeIpvs finds IPVS 1.2.1 over generic netlink', async () => {
  const p = await probeIpvs();
  assert.deepEqual(p, { available: true, version: '1.2.1' });
  return JSON.stringify(await client.getInfo());
});

await checks.check('every scheduler × NAT/DR/TUN (ipip, gue+csum, gre+csum), IPv6, UDP, SCTP, fwmark, persistence, one-packet: one apply', async () => {
  const n = desired.services.length + desired.services.reduce((a, s) => a + s.realServers.length, 0);
  const r = await dp.apply(desired);
  assert.deepEqual(r.failures, undefined);
  assert.equal(r.operations, n);
  return `${n} operations in ${r.durationMs.toFixed(1)} ms`;
});

await checks.check('read back through lvsd equals the desired table', async () => {
  assert.deepEqual(config(await dp.observe()), config(canonicalizeDesired(desired)));
});

let saved: string[] = [];
await checks.check('read back through ipvsadm -Sn: every service and destination, exact lines', async () => {
  saved = await ipvsadmSave();
  const text = saved.join('\n');
  assert.equal(saved.filter((l) => l.startsWith('-A ')).length, desired.services.length);
  assert.equal(saved.filter((l) => l.startsWith('-a ')).length, desired.services.reduce((a, s) => a + s.realServers.length, 0));
  for (const line of [
    '-A -t 10.10.0.2:80 -s wrr',
    '-a -t 10.10.0.2:80 -r 10.20.1.1:8080 -m -w 3',
    '-a -t 10.10.0.2:80 -r 10.20.1.2:80 -g -w 2',
    '-A -f 7 -s sh -p 300 -M 255.255.255.0 -b sh-fallback,sh-port',
    '-A -f 8 -6 -s mh -p 60 -M 64 -b mh-port',
    '-a -t 10.10.0.3:80 -r 10.20.2.3:80 -i -w 1 --tun-type gre --tun-csum',
    '-A -u 10.10.1.2:53 -s rr -o',
    '-A --sctp-service 10.10.1.1:3868 -s rr',
  ]) {
    assert.ok(saved.includes(line), `ipvsadm -Sn lacks "${line}":\n${text}`);
  }
  assert.ok(saved.includes('-a -t 10.10.0.2:80 -r 10.20.1.3:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-csum'));
  assert.ok(saved.includes('-A -u [fd00::10]:53 -s wlc'));
  // ipvsadm -S leaves thresholds out; -L --thresholds shows them.
  assert.match(await sh('ipvsadm -Ln --thresholds -t 10.10.0.2:80'), /10\.20\.1\.1:8080\s+100\s+10\s/);
  return text;
});

await checks.check('ipvsadm writes, lvsd reads: save → clear → restore reads back the same through lvsd; apply restores only what -S cannot carry', async () => {
  // ipvsadm -S does not save thresholds: compare without them, then lvsd puts back exactly those.
  const noThresholds = (t: ObservedTable): ObservedTable => ({
    services: t.services.map((s) => ({ ...s, realServers: s.realServers.map((r) => ({ ...r, upperThreshold: undefined, lowerThreshold: undefined })) })),
  });
  const before = config(noThresholds(await dp.observe()));
  writeFileSync(join(dir, 'save'), saved.join('\n') + '\n');
  await sh(`ipvsadm -C && ipvsadm -R < ${join(dir, 'save')}`);
  assert.deepEqual(config(noThresholds(await dp.observe())), before);
  const r = await dp.resync(); // re-reads the kernel (apply alone trusts lvsd's cached view)
  assert.equal(r.operations, SCHEDS.length, JSON.stringify(r)); // one NAT server with thresholds per scheduler
  assert.equal(r.drift.length, SCHEDS.length);
  assert.equal((await dp.apply(desired)).operations, 0);
  assert.deepEqual(config(await dp.observe()), config(canonicalizeDesired(desired)));
});

await checks.check('golden: a service made by ipvsadm decodes field by field', async () => {
  await sh('ipvsadm -A -t 10.9.9.9:8443 -s sh -b sh-port -p 120 -M 255.255.255.0 && ipvsadm -a -t 10.9.9.9:8443 -r 10.9.8.1:443 -m -w 7 -x 50 -y 5');
  const s = await client.getService({ family: 4, protocol: 'tcp', address: '10.9.9.9', port: 8443 });
  assert.ok(s);
  assert.equal(s.scheduler, 'sh');
  assert.equal(s.flags & ~SvcFlag.HASHED, SvcFlag.PERSISTENT | SvcFlag.SCHED2);
  assert.equal(s.timeout, 120);
  assert.equal(s.netmask, '255.255.255.0');
  assert.ok(s.stats !== undefined && s.stats64 !== undefined);
  const [d] = await client.listDests(s.key);
  assert.deepEqual({ ...d, stats: undefined, stats64: undefined }, {
    family: 4, address: '10.9.8.1', port: 443, fwd: 'nat', weight: 7, upperThreshold: 50, lowerThreshold: 5, tunType: 'ipip', tunPort: 0, tunFlags: 0,
    activeConns: 0, inactiveConns: 0, persistConns: 0, stats: undefined, stats64: undefined,
  });
});

await checks.check('errors are typed values with the object: EEXIST, ESRCH, ENOENT (twos is not in this kernel)', async () => {
  const key = { family: 4 as const, protocol: 'tcp' as const, address: '10.9.9.9', port: 8443 };
  const svc = { key, scheduler: 'rr', flags: 0, timeout: 0, netmask: '255.255.255.255' };
  const e1 = await client.addService(svc).catch((e: unknown) => e);
  assert.ok(e1 instanceof IpvsError && e1.code === 'EEXIST' && e1.object === 'tcp:10.9.9.9:8443', String(e1));
  const e2 = await client.deleteService({ ...key, port: 1 }).catch((e: unknown) => e);
  assert.ok(e2 instanceof IpvsError && e2.code === 'ESRCH' && e2.command === 'DEL_SERVICE', String(e2));
  const e3 = await client.addService({ ...svc, key: { ...key, port: 2 }, scheduler: 'twos' }).catch((e: unknown) => e);
  assert.ok(e3 instanceof IpvsError && e3.code === 'ENOENT', String(e3));
  const dest = { family: 4 as const, address: '10.9.8.2', port: 443, fwd: 'nat' as const, weight: 1, upperThreshold: 0, lowerThreshold: 0 };
  const e4 = await client.deleteDest(key, dest).catch((e: unknown) => e);
  assert.ok(e4 instanceof IpvsError && e4.code === 'ENOENT' && e4.object === 'tcp:10.9.9.9:8443 → 10.9.8.2:443', String(e4));
  const e5 = await client.addDest({ ...key, port: 3 }, dest).catch((e: unknown) => e);
  assert.ok(e5 instanceof IpvsError && e5.code === 'ESRCH', String(e5));
  return [e1, e2, e3, e4, e5].map(String).join('\n');
});

await checks.check('a foreign service is left alone (conflict) unless takeOver; owned services follow the config', async () => {
  const foreign: ServiceSpec = { id: 'tcp:10.9.9.9:8443', family: 4, protocol: 'tcp', address: '10.9.9.9', port: 8443, scheduler: 'wrr', realServers: [] };
  const r1 = await dp.apply({ services: [...desired.services, foreign] });
  assert.deepEqual(r1.conflicts, ['tcp:10.9.9.9:8443']);
  assert.equal(r1.operations, 0);
  assert.ok((await ipvsadmSave()).includes('-A -t 10.9.9.9:8443 -s sh -p 120 -M 255.255.255.0 -b sh-port'));
  const r2 = await dp.apply({ services: [...desired.services, { ...foreign, takeOver: true }] });
  assert.equal(r2.operations, 2, JSON.stringify(r2)); // scheduler change + its one real server removed
  assert.ok((await ipvsadmSave()).includes('-A -t 10.9.9.9:8443 -s wrr'));
  const r3 = await dp.apply(desired); // no longer desired and now owned: deleted
  assert.equal(r3.operations, 1);
  assert.ok(!(await ipvsadmSave()).some((l) => l.includes('10.9.9.9')));
});

await checks.check('one weight change is one operation; a change made behind lvsd is reported as drift and restored', async () => {
  const changed = structuredClone(desired);
  const rs = changed.services[4]?.realServers[0];
  assert.ok(rs);
  rs.weight = 9;
  const r = await dp.apply(changed);
  assert.equal(r.operations, 1);
  assert.deepEqual(r.drift, []);
  await sh('ipvsadm -e -t 10.10.0.5:80 -r 10.20.4.1:8080 -m -w 1 -x 100 -y 10');
  assert.equal((await dp.apply(changed)).operations, 0); // apply trusts its cached view…
  const r2 = await dp.resync(); // …resync reads the kernel, reports the drift and repairs it
  assert.deepEqual(r2.drift, ['update-real-server tcp:10.10.0.5:80 → 10.20.4.1:8080']);
  assert.ok((await ipvsadmSave()).includes('-a -t 10.10.0.5:80 -r 10.20.4.1:8080 -m -w 9'));
  await dp.apply(desired);
  return `weight change applied in ${r.durationMs.toFixed(2)} ms`;
});

await checks.check('restart: a new backend with the same ownership record adopts the table with 0 operations; an operator service survives', async () => {
  await sh('ipvsadm -A -u 10.9.9.10:123 -s rr');
  await dp.close();
  dp = await createIpvsDataplane({ ownership: fileOwnership(ownFile), drain: { mode: 'immediate', timeoutMs: 0 }, resyncIntervalMs: 0 });
  const r = await dp.apply(desired);
  assert.equal(r.operations, 0, JSON.stringify(r));
  const less = { services: desired.services.slice(1) };
  const r2 = await dp.apply(less);
  assert.equal(r2.operations, 1);
  const s = await ipvsadmSave();
  assert.ok(s.includes('-A -u 10.9.9.10:123 -s rr'), 'operator service was touched');
  assert.ok(!s.some((l) => l.startsWith('-A -t 10.10.0.1:80')));
  await dp.apply(desired);
});

await checks.check('native table read (lvsd_ipvs): the addon\'s buffer reads as the transport\'s replies, on this table and on 3 random ones', async () => {
  assert.ok(ipvsNative() !== null, 'build/Release/lvsd_ipvs.node did not load in the guest');
  const same = async (what: string): Promise<number> => {
    const packed = await client.dumpTablePacked();
    assert.ok(packed !== undefined, 'the client did not read through the addon');
    const replies = (await client.dumpTable()).map((e) => readService(e.service, e.dests));
    assert.deepEqual(readPacked(packed), replies, what);
    return replies.length;
  };
  const counts = [await same('the program table')];
  // Random tables beside it (foreign to lvsd: an operator's), of every family, protocol, fwmark, flag, method,
  // tunnel and threshold, programmed through the client; a seeded generator so a failure can be replayed.
  let seed = 19;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 3; round++) {
    const ops: IpvsOp[] = [];
    const keys: IpvsService['key'][] = [];
    for (let i = 0; i < 40; i++) {
      const family = rnd(3) === 0 ? 6 : 4;
      const key: IpvsService['key'] = rnd(5) === 0 ? { family, fwmark: 1000 + round * 100 + i } : { family, protocol: (['tcp', 'udp', 'sctp'] as const)[rnd(3)] ?? 'tcp', address: family === 4 ? `10.77.${round}.${i + 1}` : `fd77:${round}::${(i + 1).toString(16)}`, port: 1 + rnd(65535) };
      keys.push(key);
      const persistent = rnd(2) === 0;
      ops.push({ op: 'add-service', service: { key, scheduler: SCHEDS[rnd(SCHEDS.length)] ?? 'rr', flags: (persistent ? SvcFlag.PERSISTENT : 0) | (rnd(3) === 0 ? SvcFlag.ONEPACKET : 0), timeout: persistent ? 1 + rnd(3600) : 0, netmask: family === 4 ? '255.255.255.0' : '64' } });
      for (let j = rnd(12); j > 0; j--) {
        const fwd = (['nat', 'dr', 'tun'] as const)[rnd(3)] ?? 'nat';
        const d: IpvsDest = { family, address: family === 4 ? `10.78.${i}.${j}` : `fd78:${i}::${j}`, port: fwd === 'dr' ? (key.port ?? 80) : 1 + rnd(65535), fwd, weight: rnd(100), upperThreshold: rnd(2) * rnd(1000), lowerThreshold: 0 };
        if (fwd === 'tun') Object.assign(d, { tunType: (['ipip', 'gue', 'gre'] as const)[rnd(3)], tunPort: 6080, tunFlags: rnd(3) });
        ops.push({ op: 'add-dest', service: key, dest: d });
      }
    }
    const failed = (await client.batch(ops)).filter((r) => r.error !== undefined);
    assert.deepEqual(failed.map((r) => r.error?.message), [], 'programming the random table');
    counts.push(await same(`random table ${round}`));
    await client.batch(keys.map((key) => ({ op: 'delete-service', key })));
  }
  return `services read both ways: ${counts.join(', ')}`;
});

await checks.check('connection timeouts (tcp, tcpfin, udp) set and read back, also through ipvsadm', async () => {
  await dp.setTimeouts({ tcp: 900, tcpFin: 110, udp: 310 });
  assert.deepEqual(await dp.getTimeouts(), { tcp: 900, tcpFin: 110, udp: 310 });
  const out = await sh('ipvsadm -L --timeout');
  assert.match(out, /900 110 310/);
  return out.trim();
});

await checks.check('sync daemon: master → backup → none via setSyncRole, seen by ipvsadm', async () => {
  await sh('ip link add sync0 type dummy && ip link set sync0 multicast on up && ip addr add 192.168.77.1/24 dev sync0');
  await dp.setSyncRole('master', { interface: 'sync0', syncId: 51 });
  let d = await dp.syncDaemons();
  assert.deepEqual(d.map((x) => [x.role, x.ifname, x.syncId]), [['master', 'sync0', 51]]);
  const first = d[0];
  assert.ok(first);
  assert.equal(first.mcastGroup, '224.0.0.81');
  assert.equal(first.mcastPort, 8848);
  const out1 = await sh('ipvsadm -L --daemon');
  assert.match(out1, /master sync daemon \(mcast=sync0, syncid=51/);
  await dp.setSyncRole('master', { interface: 'sync0', syncId: 51 }); // idempotent
  await dp.setSyncRole('backup', { interface: 'sync0', syncId: 51, mcastGroup: '224.0.0.82', mcastPort: 8850, mcastTtl: 2 });
  d = await dp.syncDaemons();
  assert.deepEqual(d.map((x) => [x.role, x.ifname, x.syncId, x.mcastGroup, x.mcastPort]), [['backup', 'sync0', 51, '224.0.0.82', 8850]]);
  await dp.setSyncRole('none');
  assert.deepEqual(await dp.syncDaemons(), []);
  return out1.trim();
});

await checks.check('sync daemon: both at once (master id 51, backup id 0), the sync sysctls written first; sync_ports restarts them', async () => {
  const vs = (name: string): Promise<string> => readFile(`/proc/sys/net/ipv4/vs/${name}`, 'utf8').then((t) => t.trim().split(/\s+/).join(' '));
  assert.equal(await vs('sync_threshold'), '3 50', 'the kernel default before lvsd writes it');
  const tuning = { threshold: 3, thresholdPeriod: 0, refreshPeriodS: 60, persistMode: 0 as const, ports: 1 };
  await dp.setSyncRole('both', { interface: 'sync0', syncId: 51, tuning });
  const d = await dp.syncDaemons();
  assert.deepEqual(d.map((x) => [x.role, x.ifname, x.syncId]).sort(), [['backup', 'sync0', 0], ['master', 'sync0', 51]]);
  assert.equal(await vs('sync_threshold'), '3 0');
  assert.equal(await vs('sync_refresh_period'), '60');
  const out = await sh('ipvsadm -L --daemon');
  assert.match(out, /master sync daemon \(mcast=sync0, syncid=51/);
  assert.match(out, /backup sync daemon \(mcast=sync0, syncid=0/);
  await dp.setSyncRole('both', { interface: 'sync0', syncId: 51, tuning: { ...tuning, ports: 2, persistMode: 1 } });
  assert.equal(await vs('sync_ports'), '2');
  assert.equal(await vs('sync_persist_mode'), '1');
  assert.equal((await dp.syncDaemons()).length, 2);
  // The kernel's own rule, which the config check mirrors: threshold ≥ period (period > 0) is refused.
  await assert.rejects(dp.setSyncRole('both', { interface: 'sync0', syncId: 51, tuning: { ...tuning, threshold: 50, thresholdPeriod: 50 } }), /sync_threshold/);
  await dp.setSyncRole('none');
  assert.deepEqual(await dp.syncDaemons(), []);
  await writeFile('/proc/sys/net/ipv4/vs/sync_ports', '1');
  return out.trim();
});

await checks.check('stats: counters present for services and real servers; zero works', async () => {
  const o = await dp.observe();
  assert.ok(o.services.every((s) => s.counters !== undefined && s.realServers.every((r) => r.counters !== undefined)));
  await client.zero();
});

// keepalived and lvsd, given the same virtual_server setup, must leave the same ipvsadm -Sn.
await checks.check('differential: keepalived and lvsd program the same table (ipvsadm -Sn)', async () => {
  await dp.apply({ services: [] });
  await sh('ipvsadm -C');
  const conf = join(dir, 'keepalived.conf');
  writeFileSync(conf, `
global_defs { router_id lvsdtest }
virtual_server 10.30.0.1 80 {
  lb_algo wrr
  lb_kind NAT
  protocol TCP
  real_server 10.31.0.1 8080 { weight 3 }
  real_server 10.31.0.2 8080 { weight 1 }
}
virtual_server 10.30.0.2 443 {
  lb_algo sh
  lb_kind DR
  persistence_timeout 300
  persistence_granularity 255.255.255.0
  protocol TCP
  real_server 10.31.0.3 443 { weight 1 }
  real_server 10.31.0.4 443 { weight 2 }
}
virtual_server 10.30.0.3 53 {
  lb_algo rr
  lb_kind TUN
  protocol UDP
  real_server 10.31.0.5 53 { weight 1 }
}
virtual_server fwmark 9 {
  lb_algo lc
  lb_kind DR
  real_server 10.31.0.6 80 { weight 4 }
}
`);
  const ka = spawn('keepalived', ['--dont-fork', '--log-console', '--check', '-f', conf, '-p', join(dir, 'ka.pid'), '-c', join(dir, 'kac.pid'), '-r', join(dir, 'kav.pid')], { stdio: 'ignore' });
  let kaLines: string[] = [];
  try {
    for (let i = 0; i < 100; i++) {
      kaLines = await ipvsadmSave();
      if (kaLines.length === 10) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    ka.kill('SIGTERM');
    await new Promise((r) => ka.once('exit', r));
  }
  await sh('ipvsadm -C');
  const svc = (id: string, s: Omit<ServiceSpec, 'id' | 'realServers'>, rs: [string, number, number, RealServerSpec['method']][]): ServiceSpec => ({
    id, ...s, realServers: rs.map(([a, p, w, m]) => ({ id: `${a}:${p}`, address: a, port: p, weight: w, method: m })),
  });
  const dp2 = await createIpvsDataplane({ ownership: fileOwnership(join(dir, 'owned2.json')) });
  await dp2.apply({
    services: [
      svc('tcp:10.30.0.1:80', { family: 4, protocol: 'tcp', address: '10.30.0.1', port: 80, scheduler: 'wrr' }, [['10.31.0.1', 8080, 3, 'nat'], ['10.31.0.2', 8080, 1, 'nat']]),
      svc('tcp:10.30.0.2:443', { family: 4, protocol: 'tcp', address: '10.30.0.2', port: 443, scheduler: 'sh', persistence: { timeoutSec: 300, netmask: '255.255.255.0' } }, [['10.31.0.3', 443, 1, 'dr'], ['10.31.0.4', 443, 2, 'dr']]),
      svc('udp:10.30.0.3:53', { family: 4, protocol: 'udp', address: '10.30.0.3', port: 53, scheduler: 'rr' }, [['10.31.0.5', 53, 1, 'tun']]),
      svc('fwmark:4:9', { family: 4, protocol: 'tcp', fwmark: 9, scheduler: 'lc' }, [['10.31.0.6', 80, 4, 'dr']]),
    ],
  });
  const lvsdLines = await ipvsadmSave();
  await dp2.close();
  assert.equal(kaLines.length, 10, `keepalived programmed:\n${kaLines.join('\n')}`);
  assert.deepEqual(lvsdLines, kaLines);
  return kaLines.join('\n');
});

await dp.close();
client.close();
// use_ipvlan needs this kernel's ipvlan (the host has none): one more check in this boot, not a boot of its own.
await ipvlanChecks(checks);

checks.finish();
