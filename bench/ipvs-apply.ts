// Benchmark (host, no kernel): the CPU lvsd spends in apply() for one weight change, at several table
// sizes, with a transport that answers instantly — the part of a change that is lvsd's own, apart
// from the netlink round trip. Each change twice, alternated: with the changed services the director hands
// beside the table (types.ts, ChangedServices: the backend looks at that service alone) and without them
// (the backend walks the table to find it). Anchors: a full apply of the same table, and the change at 100
// services, in the same run.
//   node dist/bench/ipvs-apply.js
import { IpvsClient } from '../daemon/ipvs/client.js';
import type { IpvsRequest, IpvsTransport } from '../daemon/ipvs/transport.js';
import { createIpvsDataplane } from '../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../daemon/dataplane/ipvs/ownership.js';
import type { ChangedServices, DesiredTable } from '../daemon/dataplane/types.js';

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

const ROUNDS = 201;
process.stdout.write(`lvsd apply() CPU per one weight change (instant transport, median of ${String(ROUNDS >> 1)} each, alternated)\n`);
const rows: { n: number; hinted: number; walk: number }[] = [];
for (const n of [100, 1000, 5000]) {
  let desired = table(n);
  const dp = await createIpvsDataplane({ client: new IpvsClient(instant), ownership: memoryOwnership(), resyncIntervalMs: 0 });
  let t0 = performance.now();
  await dp.apply(desired);
  const full = performance.now() - t0;
  const hinted: number[] = [];
  const walk: number[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    // As the director hands a change (types.ts, Dataplane.apply): a new table whose changed service is a new
    // object, every other one the very object handed before.
    const i = (k * 37) % n;
    const svc = desired.services[i];
    if (svc === undefined) throw new Error('bench table shape');
    const j = k % 10;
    const next = { ...svc, realServers: svc.realServers.map((rs, x) => (x === j ? { ...rs, weight: rs.weight === 1 ? 5 : 1 } : rs)) };
    const services = desired.services.slice();
    services[i] = next;
    const changed: ChangedServices | undefined = k % 2 === 0 ? { since: desired, services: new Map([[next.id, next]]) } : undefined;
    desired = { services };
    t0 = performance.now();
    const r = await dp.apply(desired, changed);
    (changed === undefined ? walk : hinted).push(performance.now() - t0);
    if (r.operations !== 1) throw new Error(`one change took ${r.operations} operations`);
  }
  await dp.close();
  const row = { n, hinted: median(hinted), walk: median(walk) };
  rows.push(row);
  const base = rows[0] ?? row;
  process.stdout.write(`  ${String(n).padStart(5)} services × 10: one change ${row.hinted.toFixed(3)} ms with the changed services, ${row.walk.toFixed(3)} ms walking the table; ` +
    `full apply ${full.toFixed(0)} ms; one/full = ${(row.hinted / full).toFixed(5)}; / at ${String(base.n)} services: ${(row.hinted / base.hinted).toFixed(2)}× (walking ${(row.walk / base.walk).toFixed(2)}×)\n`);
}
