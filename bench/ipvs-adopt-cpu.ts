// Benchmark (host, no kernel): lvsd's own CPU in a restart adopting a 1,000 × 10 IPVS table — decoding the
// kernel's dump replies (counters included, as the kernel sends them) and reconciling — with a transport that
// answers at once from replies encoded the way the kernel fills them. The guest figure (bench/ipvs-adopt.ts) is
// this plus the netlink round trips, under TCG. Cold (the first adoption in a fresh process, as a restart is)
// and warm. Anchor: a bare walk over every attribute of the same reply bytes (what any reader must do).
//   node dist/bench/ipvs-adopt-cpu.js
import { IpvsClient } from '../daemon/ipvs/client.js';
import { CmdAttr, Cmd, SvcFlag } from '../daemon/ipvs/constants.js';
import { encodeDest, encodeService, type IpvsDest, type IpvsService } from '../daemon/ipvs/codec.js';
import { nest } from '../daemon/net/nlattr.js';
import type { IpvsRequest, IpvsTransport } from '../daemon/ipvs/transport.js';
import { createIpvsDataplane } from '../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../daemon/dataplane/ipvs/ownership.js';
import type { DesiredTable } from '../daemon/dataplane/types.js';

const SERVICES = Number(process.env.LVSD_BENCH_SERVICES ?? 1000);
const SERVERS = 10;
const ROUNDS = Number(process.env.LVSD_BENCH_ROUNDS ?? 5);
const vip = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const rip = (i: number, j: number): string => `10.200.${j}.${(i % 250) + 1}`;
const desired: DesiredTable = {
  services: Array.from({ length: SERVICES }, (_, i) => ({
    id: `tcp:${vip(i)}:80`, family: 4 as const, protocol: 'tcp' as const, address: vip(i), port: 80, scheduler: 'wrr' as const,
    realServers: Array.from({ length: SERVERS }, (_, j) => ({ id: `${rip(i, j)}:8080`, address: rip(i, j), port: 8080, weight: 1, method: 'nat' as const })),
  })),
};

// The replies, as the kernel fills them (ip_vs_genl_fill_service / _dest): counters and rates included.
const stats = { conns: 12, inPackets: 345, outPackets: 300, inBytes: 40_000, outBytes: 90_000, cps: 0, inPps: 1, outPps: 1, inBps: 100, outBps: 200 };
const svcReply = (i: number): Buffer => {
  const s: IpvsService = { key: { family: 4, protocol: 'tcp', address: vip(i), port: 80 }, scheduler: 'wrr', flags: SvcFlag.HASHED, timeout: 0, netmask: '255.255.255.255', stats, stats64: stats };
  return nest(CmdAttr.SERVICE, encodeService(s));
};
const destReply = (i: number, j: number): Buffer => {
  const d: IpvsDest = { family: 4, address: rip(i, j), port: 8080, fwd: 'nat', weight: 1, upperThreshold: 0, lowerThreshold: 0, tunType: 'ipip', tunPort: 0, tunFlags: 0, activeConns: 0, inactiveConns: 3, persistConns: 0, stats, stats64: stats };
  return nest(CmdAttr.DEST, encodeDest(d));
};
const services = Array.from({ length: SERVICES }, (_, i) => svcReply(i));
const dests = new Map<string, Buffer[]>();
for (let i = 0; i < SERVICES; i++) dests.set(vip(i), Array.from({ length: SERVERS }, (_, j) => destReply(i, j)));
// GET_DEST names its service by address: read it back from the request (SERVICE nest → ADDR, after AF and PROTOCOL).
const addrOf = (payload: Buffer): string => {
  const o = 4 + 8 + 8 + 4; // SERVICE header, AF, PROTOCOL, ADDR header
  return `${payload[o]}.${payload[o + 1]}.${payload[o + 2]}.${payload[o + 3]}`;
};
const kernel: IpvsTransport = {
  request: (cmd: number, payload: Buffer) => Promise.resolve(cmd === Cmd.GET_SERVICE ? services : cmd === Cmd.GET_DEST ? (dests.get(addrOf(payload)) ?? []) : []),
  requestMany: (reqs: readonly IpvsRequest[]) => Promise.resolve(reqs.map(() => [])),
  close: () => undefined,
};

/** The anchor: every attribute of every reply visited once (nested ones descended), nothing built. */
function walk(buf: Buffer, start: number, end: number): number {
  let n = 0;
  for (let off = start; off + 4 <= end; off += (buf.readUInt16LE(off) + 3) & ~3) {
    const len = buf.readUInt16LE(off);
    n += buf.readUInt16LE(off + 2) & 0x8000 ? walk(buf, off + 4, off + len) : buf[off + 4] ?? 0;
  }
  return n;
}
const all = [...services, ...[...dests.values()].flat()];
// CPU time (user + system), not wall time: the figure is lvsd's own work, and this machine is shared.
const cpuMs = (since: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

// LVSD_BENCH_PROFILE=file: a CPU profile of the cold adoption alone (open it in Chrome's DevTools).
const profile = await (async () => {
  const file = process.env.LVSD_BENCH_PROFILE;
  if (file === undefined || file === '') return undefined;
  const { Session } = await import('node:inspector/promises');
  const { writeFileSync } = await import('node:fs');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  return {
    start: () => session.post('Profiler.start'),
    stop: async () => {
      const { profile: p } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(p));
    },
  };
})();
const adoptTimes: number[] = [];
const walkTimes: number[] = [];
for (let k = 0; k < ROUNDS; k++) {
  const w0 = process.cpuUsage();
  let sink = 0;
  for (const b of all) sink += walk(b, 0, b.length);
  walkTimes.push(cpuMs(w0));
  if (sink < 0) throw new Error('unreachable');
  const dp = await createIpvsDataplane({ client: new IpvsClient(kernel), ownership: memoryOwnership(desired.services.map((s) => s.id)), resyncIntervalMs: 0, sysctlDir: '/nonexistent' });
  if (k === 0) await profile?.start();
  const c0 = process.cpuUsage();
  const r = await dp.apply(desired);
  adoptTimes.push(cpuMs(c0));
  if (k === 0) await profile?.stop();
  await dp.close();
  if (r.operations !== 0) throw new Error(`adoption planned ${r.operations} operations`);
}
process.stdout.write(`lvsd adoption, CPU ms, ${SERVICES} services × ${SERVERS} real servers, instant transport (node ${process.version})\n`);
process.stdout.write(`  cold (first in this process): adopt ${adoptTimes[0]?.toFixed(1)} ms, attribute walk ${walkTimes[0]?.toFixed(1)} ms\n`);
const wa = median(adoptTimes.slice(1));
const ww = median(walkTimes.slice(1));
process.stdout.write(`  warm (median of ${ROUNDS - 1}): adopt ${wa.toFixed(1)} ms, attribute walk ${ww.toFixed(1)} ms → adopt / walk = ${(wa / ww).toFixed(1)}\n`);
