// Benchmark (host, no kernel): the CPU lvsd spends in apply() for one weight change, at several table
// sizes, with a transport that answers instantly — the part of a change that is lvsd's own, apart
// from the netlink round trip. Anchor: a full apply of the same table in the same run.
//   node dist/bench/ipvs-apply.js
import { IpvsClient } from '../daemon/ipvs/client.js';
import type { IpvsRequest, IpvsTransport } from '../daemon/ipvs/transport.js';
import { createIpvsDataplane } from '../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../daemon/dataplane/ipvs/ownership.js';
import type { DesiredTable } from '../daemon/dataplane/types.js';

// The kernel's side is free here: every change is acked at once, every dump is empty.
const instant: IpvsTransport = {
  request: () => Promise.resolve([]),
  requestMany: (reqs: readonly IpvsRequest[]) => Promise.resolve(reqs.map(() => [])),
  close: () => undefined,
};

const vip = (i: number): string => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
function table(n: number): DesiredTable {
  return {
    services: Array.from({ length: n }, (_, i) => ({
      id: `tcp:${vip(i)}:80`, family: 4 as const, protocol: 'tcp' as const, address: vip(i), port: 80, scheduler: 'wrr' as const,
      realServers: Array.from({ length: 10 }, (_, j) => ({ id: `10.200.${j}.${(i % 250) + 1}:8080`, address: `10.200.${j}.${(i % 250) + 1}`, port: 8080, weight: 1, method: 'nat' as const })),
    })),
  };
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

process.stdout.write('lvsd apply() CPU per one weight change (instant transport, median of 101)\n');
for (const n of [100, 1000, 5000]) {
  const desired = table(n);
  const dp = await createIpvsDataplane({ client: new IpvsClient(instant), ownership: memoryOwnership(), resyncIntervalMs: 0 });
  let t0 = performance.now();
  await dp.apply(desired);
  const full = performance.now() - t0;
  const times: number[] = [];
  for (let k = 0; k < 101; k++) {
    // As the director hands a change (types.ts, Dataplane.apply): the changed service a new object, every
    // other one the very object handed before.
    const i = (k * 37) % n;
    const svc = desired.services[i];
    if (svc === undefined) throw new Error('bench table shape');
    const j = k % 10;
    desired.services[i] = { ...svc, realServers: svc.realServers.map((rs, x) => (x === j ? { ...rs, weight: rs.weight === 1 ? 5 : 1 } : rs)) };
    t0 = performance.now();
    const r = await dp.apply(desired);
    times.push(performance.now() - t0);
    if (r.operations !== 1) throw new Error(`one change took ${r.operations} operations`);
  }
  await dp.close();
  const one = median(times);
  process.stdout.write(`  ${String(n).padStart(5)} services × 10: one change ${one.toFixed(2)} ms; full apply ${full.toFixed(0)} ms; one/full = ${(one / full).toFixed(4)}\n`);
}
