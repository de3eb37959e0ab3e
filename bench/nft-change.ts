// nftables reprogramming at 100, 1,000 and 5,000 virtual servers × 10 real servers (issue #19, goal 2), in
// a namespace of its own: the full program of the table (into a namespace without it: a fresh start), an unchanged re-apply, and one
// service change through the dataplane (median: a weight changed, which is one netlink transaction; handed
// with the changed services (types.ts, ChangedServices: the backend looks at that service alone), alternated
// with the same change handed without them (the unchanged services as the same objects: the backend walks the
// table to find it), and again with every spec a new equal object; then the whole of what the daemon pays,
// the director's pass with its memo and the apply, with and without the changed services, beside the same
// pass decided afresh), that transaction alone, and the same change through nft (the structural path: three
// transactions), beside
// four anchors measured at the same size:
//   nft -f           the whole table as one transaction (fullText of one table), written to a file and loaded
//                    by `nft -f` (what the full program would cost with lvsd's modelling and rendering left
//                    out, were it nft's alone); alternated with it
//   nft round trip   an empty line through the long-lived nft (the sentinel alone: the pipe, no kernel)
//   nft 1 element    one vmap element added or removed through nft: nft's cost for the least a change can be
//   netlink 1 element  the same kind of transaction as one netlink batch from this process (nft-netlink-floor.ts)
// Beside it the same change of service 1, a sh service: a hashed slot space never changes size (model.ts,
// HASH_SLOTS), so its change is the map's elements alone, and no new rule makes the kernel validate the table.
// The dataplane spreads its services over shard tables of SHARD_SIZE (shards.ts): the full program of a fresh start
// is every shard's structure in one `nft -f`, then their maps' elements by netlink (fresh.ts; the netlink worker's
// start, a process only a namespace other than lvsd's own needs, is in it), and a change is written in its own
// shard's table, which is what the kernel validates.
// The ratios printed are full program / (nft -f), change / (nft 1 element) and each size's change / the
// 100-service change (the issue asks that a change not grow with the table).
// Last, the wrr change split by who pays: its netlink transaction (the kernel, and the pipe to the worker that
// sends it), of which the floor — one data-map element, which validates nothing: what any commit costs in a
// namespace of that many chains, since the commit visits every chain of every table (nft-chain-walk.ts) —
// and the rest of apply() (lvsd: modelling, planning, encoding; its CPU beside it). Beside those the netlink
// worker's CPU (nft-worker-cpu.ts: the kernel's commit runs in its sendmsg, which process.cpuUsage() never
// sees) in the change and in the transaction alone, and what is left of the change off any CPU.
//
//   node dist/bench/nft-change.js          (BENCH_NFT_SIZES=100,1000,5000  BENCH_NFT_ROUNDS=21)
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Topology } from '../test/support/netns.js';
import { removeStaleNamespaces } from '../test/support/netns.js';
import { createNftablesDataplane, SHARD_SIZE, shardIndex } from '../daemon/dataplane/nftables/shards.js';
import { NftShell } from '../daemon/dataplane/nftables/nft-shell.js';
import { sameService, slotChainName, tableModel } from '../daemon/dataplane/nftables/model.js';
import { fullCommands, planPhases, planUpdate } from '../daemon/dataplane/nftables/render.js';
import { nftText } from '../daemon/dataplane/nftables/nft-text.js';
import { fastChanges } from '../daemon/dataplane/nftables/fast-path.js';
import { netfilterWriter } from '../daemon/dataplane/nftables/nl-writer.js';
import type { ChangedServices, DesiredTable } from '../daemon/dataplane/types.js';
import { loadConfigText } from '../daemon/config/load.js';
import type { VirtualServer } from '../daemon/config/types.js';
import { DesiredMemo } from '../daemon/director/desired-memo.js';
import { desiredTable } from '../daemon/director/desired.js';
import { servicePlan } from '../daemon/director/plan.js';
import type { Override } from '../daemon/state/schema.js';
import { targetKey } from '../daemon/state/target-key.js';
import { bigTable } from './nft-big-table.js';
import { workerCpuMs } from './nft-worker-cpu.js';

const SIZES = (process.env.BENCH_NFT_SIZES ?? '100,1000,5000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_NFT_ROUNDS ?? 21);
const TABLE = 'lvsdbench';
const here = dirname(fileURLToPath(import.meta.url));

/** bigTable's services as the config holds them: what the director decides the table from. */
function bigConfig(services: number, servers: number): VirtualServer[] {
  const rs = Array.from({ length: servers }, (_, j) => `{ address: 10.201.${j >> 8}.${(j & 255) + 1}, port: 80 }`).join(', ');
  const r = loadConfigText(`virtualServers:\n  - { address: 10.200.0.0, port: 80, scheduler: wrr, realServers: [${rs}] }\n`);
  if (!r.ok) throw new Error(r.errors.map((e) => e.message).join('; '));
  const one = r.config.virtualServers[0];
  if (one === undefined) throw new Error('no virtual server');
  return Array.from({ length: services }, (_, i) => {
    const address = `10.200.${i >> 8}.${i & 255}`;
    return { ...one, id: `tcp:${address}:80`, name: `vs${String(i)}`, address };
  });
}

/** Shard 0's part of a table as the dataplane fills it from nothing (shards.ts, place): its first SHARD_SIZE services. */
function shard0(t: DesiredTable): DesiredTable {
  return { services: t.services.slice(0, SHARD_SIZE) };
}

/** Deletes the dataplane's tables: shard 0 (TABLE) and every other shard. */
async function dropAll(exec: (cmd: string, args: string[]) => Promise<string>): Promise<void> {
  const doc = JSON.parse(await exec('nft', ['-j', 'list', 'tables', 'inet'])) as { nftables?: { table?: { name?: string } }[] };
  for (const item of doc.nftables ?? []) {
    const name = item.table?.name;
    if (name !== undefined && shardIndex(TABLE, name) !== undefined) await exec('nft', ['delete', 'table', 'inet', name]);
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function timed(n: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

interface Row {
  size: number;
  full: number;
  nftFile: number;
  changeCpu: number;
  /** The netlink worker's CPU in the change (user and kernel: the commit runs in its sendmsg), and in the transaction timed alone. */
  changeWorker: number;
  batchWorker: number;
  shChange: number;
  shChangeCpu: number;
  shBatch: number;
  shBatchOps: number;
  walk: number;
  walkCpu: number;
  changeFresh: number;
  changeFreshCpu: number;
  director: number;
  directorCpu: number;
  directorWalk: number;
  directorWalkCpu: number;
  directorFresh: number;
  directorFreshCpu: number;
  again: number;
  change: number;
  raw: number;
  batch: number;
  batchOps: number;
  roundTrip: number;
  oneElement: number;
  netlink: number;
  netlinkData: number;
  /** Chains in the namespace (every shard) while the transactions above were timed. */
  chains: number;
}

async function measure(ns: string, exec: (cmd: string, args: string[]) => Promise<string>, size: number): Promise<Row> {
  // The full program and its anchor, alternated (three of each: the median), each into a namespace without the table.
  const dir = mkdtempSync(join(tmpdir(), 'nft-change-'));
  const file = join(dir, 'full.nft');
  writeFileSync(file, nftText(fullCommands(tableModel(bigTable(size, 10), { table: TABLE }), true)));
  const fulls: number[] = [];
  const files: number[] = [];
  let dp = createNftablesDataplane({ netns: ns, table: TABLE, driftCheckIntervalMs: 3_600_000 });
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await exec('nft', ['-f', file]);
    files.push(performance.now() - t0);
    await dropAll(exec);
    await dp.close();
    dp = createNftablesDataplane({ netns: ns, table: TABLE, driftCheckIntervalMs: 3_600_000 });
    fulls.push((await dp.apply(bigTable(size, 10))).durationMs);
    if (i < 2) await dropAll(exec);
  }
  rmSync(dir, { recursive: true, force: true });
  const full = median(fulls);
  const nftFile = median(files);
  const again = (await dp.apply(bigTable(size, 10))).durationMs;
  // apply()'s own figure: from the desired table handed over to the kernel's last ack (not building it here).
  // And the CPU this process spent on it (load on a shared machine stretches the wall time, not this).
  // Twice: the unchanged services handed again as the very same objects (the dataplane contract, types.ts:
  // what a change costs when only it is new), and every spec a new equal object (a director that builds the
  // whole table afresh: the dataplane then compares each spec field by field).
  const kept = bigTable(size, 10);
  let last: DesiredTable | undefined;
  /**
   * Medians of wall and CPU: [with the changed services, without] when `hinted` alternates, else [without];
   * then the netlink worker's CPU with the changed services (the kernel's commit runs in its sendmsg).
   */
  const rounds = async (tableOf: (i: number) => DesiredTable, hinted: (i: number) => boolean, touched = 0): Promise<[number, number, number, number, number]> => {
    const changes: [number[], number[]] = [[], []];
    const cpus: [number[], number[]] = [[], []];
    const workers: number[] = [];
    for (let i = 0; i < 2 * ROUNDS; i++) {
      const table = tableOf(i);
      const first = table.services[touched];
      const changed: ChangedServices | undefined = hinted(i) && last !== undefined && first !== undefined ? { since: last, services: new Map([[first.id, first]]) } : undefined;
      const hint = changed !== undefined;
      const w0 = workerCpuMs();
      const c0 = process.cpuUsage();
      changes[hint ? 0 : 1].push((await dp.apply(table, changed)).durationMs);
      const c = process.cpuUsage(c0);
      if (hint) workers.push(workerCpuMs() - w0);
      cpus[hint ? 0 : 1].push((c.user + c.system) / 1000);
      last = table;
    }
    return [median(changes[0]), median(cpus[0]), median(changes[1]), median(cpus[1]), median(workers)];
  };
  const [change, changeCpu, walk, walkCpu, changeWorker] = await rounds((i) => ({ services: [...bigTable(1, 10, i).services, ...kept.services.slice(1)] }), (i) => i % 2 === 0);
  const [, , changeFresh, changeFreshCpu] = await rounds((i) => bigTable(size, 10, i), () => false);
  // The same change of the sh service (service 1): its slot space stays, so it is the map's elements alone.
  // The other services as the last round left them, the very same objects (the hint names service 1 alone).
  const before = last ?? kept;
  const [shChange, shChangeCpu] = await rounds((i) => ({ services: before.services.map((s, k) => (k === 1 ? bigTable(2, 10, i % 2, 1).services[1] ?? s : s)) }), () => true, 1);
  // The whole of what the daemon pays for one change: the director's pass (an override on service 0's first
  // real server, the service touched) and the apply, wall and CPU. Beside it, the same pass as the director
  // made it before its memo: every plan and spec decided afresh.
  const config = bigConfig(size, 10);
  const overrides = new Map<string, Override>();
  const target = targetKey({ service: config[0]?.id ?? '', realServer: config[0]?.realServers[0]?.id ?? '' });
  const inputs = { health: new Map(), overrides, quorumLost: new Set<string>() };
  const memo = new DesiredMemo();
  await dp.apply(memo.table(config, inputs));
  /** Medians of wall and CPU, by the key `pass` files each round under. */
  const passes = async (n: number, pass: (i: number) => [DesiredTable, ChangedServices | undefined, number]): Promise<[number, number][]> => {
    const walls: number[][] = [[], []];
    const cpus: number[][] = [[], []];
    for (let i = 0; i < n; i++) {
      overrides.set(target, { weight: 2 + (i % 2) });
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const [table, changed, key] = pass(i);
      await dp.apply(table, changed);
      walls[key]?.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpus[key]?.push((c.user + c.system) / 1000);
    }
    return walls.map((w, k) => [median(w), median(cpus[k] ?? [])]);
  };
  // The memo's pass handed with its changed services, alternated with the same pass handed without them.
  const [[director, directorCpu] = [NaN, NaN], [directorWalk, directorWalkCpu] = [NaN, NaN]] = await passes(2 * ROUNDS, (i) => {
    memo.touch(config[0]?.id ?? '');
    const table = memo.table(config, inputs);
    return i % 2 === 0 ? [table, memo.changed, 0] : [table, undefined, 1];
  });
  const [[directorFresh, directorFreshCpu] = [NaN, NaN]] = await passes(ROUNDS, () => [desiredTable({ services: config.map(servicePlan), ...inputs }), undefined, 0]);
  await dp.close();

  const shell = new NftShell({ netns: ns });
  // Shard 0 (TABLE) as the dataplane left it, rewritten on its own; the other shards stay loaded beside it.
  const a = tableModel(shard0(bigTable(size, 10, 0)), { table: TABLE });
  const b = tableModel(shard0(bigTable(size, 10, 1)), { table: TABLE });
  const liveA = { ...a, live: new Map([...a.services.keys()].map((k) => [k, 'a' as const])) };
  await shell.apply(nftText(fullCommands(a, true)));
  // The change's netlink transaction alone (the modelling of the other services left out), there and back.
  const nl = netfilterWriter(ns);
  const fastThere = fastChanges(liveA, b).ops;
  const fastBack = fastChanges({ ...b, live: liveA.live }, a).ops;
  await nl.send(fastThere);
  await nl.send(fastBack);
  const shA = tableModel(shard0(bigTable(size, 10, 0, 1)), { table: TABLE });
  const shB = tableModel(shard0(bigTable(size, 10, 1, 1)), { table: TABLE });
  const shThere = fastChanges(liveA, shA).ops;
  const shFwd = fastChanges({ ...shA, live: liveA.live }, shB).ops;
  const shBack = fastChanges({ ...shB, live: liveA.live }, shA).ops;
  await nl.send(shThere);
  const shBatch = median(await timed(ROUNDS - (ROUNDS % 2), (i) => nl.send(i % 2 === 0 ? shFwd : shBack)));
  await nl.send(fastChanges({ ...shA, live: liveA.live }, a).ops);
  // The worker's counters are read outside the timing (reading /proc takes longer than the transaction).
  const batches: number[] = [];
  const batchWorkers: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const w0 = workerCpuMs();
    const t0 = performance.now();
    await nl.send(i % 2 === 0 ? fastThere : fastBack);
    batches.push(performance.now() - t0);
    batchWorkers.push(workerCpuMs() - w0);
  }
  const batch = median(batches);
  const batchWorker = median(batchWorkers);
  nl.close();
  // The same change through nft: the structural path's three transactions (stage, switch, retire).
  const thereLive = planUpdate(liveA, b, sameService);
  const there = planPhases(thereLive).map(nftText);
  const back = planPhases(planUpdate({ ...b, live: thereLive.live }, a, sameService)).map(nftText);
  // An even number: there and back, so that the first service's live slot chain is side a again (below).
  const raw = median(await timed(ROUNDS - (ROUNDS % 2), async (i) => {
    for (const t of i % 2 === 0 ? there : back) await shell.apply(t);
  }));
  const roundTrip = median(await timed(ROUNDS, () => shell.apply('')));
  // A chain the vmap may go to: the first service's live slot chain (it has one in every layout since stop 28).
  const chain = slotChainName([...a.services.keys()][0] ?? '', 'a');
  const elem = (verb: 'add' | 'delete'): string => nftText([{ [verb]: { element: { family: 'inet', table: TABLE, name: 'svc4',
    elem: verb === 'add' ? [[{ concat: ['10.250.0.2', 'tcp', 80] }, { goto: { target: chain } }]] : [{ concat: ['10.250.0.2', 'tcp', 80] }] } } }]);
  const oneElement = median(await timed(ROUNDS, (i) => shell.apply(elem(i % 2 === 0 ? 'add' : 'delete'))));
  await shell.close();
  const floor = JSON.parse(await exec('node', [join(here, 'nft-netlink-floor.js'), TABLE, chain, String(ROUNDS), 'vmap'])) as { medianMs: number };
  const chains = (JSON.parse(await exec('nft', ['-j', 'list', 'chains', 'inet'])) as { nftables: { chain?: unknown }[] }).nftables.filter((o) => o.chain !== undefined).length;
  await exec('nft', ['add', 'map', 'inet', TABLE, 'probe4', '{ type mark : ipv4_addr; }']);
  const dataFloor = JSON.parse(await exec('node', [join(here, 'nft-netlink-floor.js'), TABLE, chain, String(ROUNDS), 'data'])) as { medianMs: number };
  await dropAll(exec);
  return { size, full, nftFile, shChange, shChangeCpu, shBatch, shBatchOps: shFwd.length, changeCpu, changeWorker, batchWorker, walk, walkCpu, changeFresh, changeFreshCpu, director, directorCpu, directorWalk, directorWalkCpu, directorFresh, directorFreshCpu, again, change, raw, batch, batchOps: fastThere.length, roundTrip, oneElement, netlink: floor.medianMs, netlinkData: dataFloor.medianMs, chains };
}

async function main(): Promise<void> {
  removeStaleNamespaces();
  const topo = await Topology.create('nftchg');
  try {
    const host = await topo.addHost({ name: 'dir', addresses: ['10.9.0.2/24'] });
    const exec = async (cmd: string, args: string[]): Promise<string> => (await host.exec(cmd, args, { timeoutMs: 600_000 })).stdout;
    console.log(`nft reprogramming, S virtual servers × 10 real servers, medians of ${ROUNDS} (full program: of 3); anchors at the same size: nft -f of the full program's transaction, nft round trip, one vmap element through nft, the same through netlink`);
    const rows: Row[] = [];
    for (const size of SIZES) {
      const r = await measure(host.name, exec, size);
      rows.push(r);
      console.log(`S=${String(size).padStart(5)}  one change of the sh service ${r.shChange.toFixed(2)} ms (lvsd CPU ${r.shChangeCpu.toFixed(2)} ms; its netlink transaction of ${r.shBatchOps} messages, elements alone, ${r.shBatch.toFixed(2)} ms)`);
      console.log(`S=${String(size).padStart(5)}  full program ${r.full.toFixed(0).padStart(6)} ms (nft -f of its transaction ${r.nftFile.toFixed(0)} ms)  unchanged ${r.again.toFixed(1).padStart(6)} ms  one change ${r.change.toFixed(2).padStart(6)} ms (lvsd CPU ${r.changeCpu.toFixed(2)} ms; without the changed services ${r.walk.toFixed(2)} ms, CPU ${r.walkCpu.toFixed(2)} ms; every spec a new object ${r.changeFresh.toFixed(1)} ms, CPU ${r.changeFreshCpu.toFixed(2)} ms) ` +
        `(with the director's pass: ${r.director.toFixed(2)} ms, CPU ${r.directorCpu.toFixed(2)} ms; without the changed services ${r.directorWalk.toFixed(2)} ms, CPU ${r.directorWalkCpu.toFixed(2)} ms; the pass decided afresh ${r.directorFresh.toFixed(1)} ms, CPU ${r.directorFreshCpu.toFixed(2)} ms) ` +
        `(its netlink transaction of ${r.batchOps} messages ${r.batch.toFixed(2)} ms; the same change through nft, three transactions, ${r.raw.toFixed(1)} ms)  |  nft round trip ${r.roundTrip.toFixed(2)} ms  nft 1 element ${r.oneElement.toFixed(1)} ms  netlink 1 vmap element ${r.netlink.toFixed(3)} ms, 1 data-map element ${r.netlinkData.toFixed(3)} ms`);
    }
    const base = rows[0];
    for (const r of rows) {
      console.log(`S=${r.size}: the sh change / the sh change at S=${base?.size ?? '?'} ${base === undefined ? '?' : (r.shChange / base.shChange).toFixed(1)}× (CPU ${base === undefined ? '?' : (r.shChangeCpu / base.shChangeCpu).toFixed(1)}×, its netlink transaction ${base === undefined ? '?' : (r.shBatch / base.shBatch).toFixed(1)}×); the wrr change's netlink transaction ${base === undefined ? '?' : (r.batch / base.batch).toFixed(1)}×`);
      console.log(`S=${r.size}: full program / (nft -f) ${(r.full / r.nftFile).toFixed(2)}×; change / (nft 1 element) ${(r.change / r.oneElement).toFixed(2)}×; change / change at S=${base?.size ?? '?'} ${base === undefined ? '?' : (r.change / base.change).toFixed(1)}× (CPU ${base === undefined ? '?' : (r.changeCpu / base.changeCpu).toFixed(1)}×; without the changed services ${base === undefined ? '?' : (r.walk / base.walk).toFixed(1)}×; every spec new ${base === undefined ? '?' : (r.changeFresh / base.changeFresh).toFixed(1)}×; with the director's pass ${base === undefined ? '?' : (r.director / base.director).toFixed(1)}×, without the changed services ${base === undefined ? '?' : (r.directorWalk / base.directorWalk).toFixed(1)}×); ` +
        `director's pass with its memo / afresh ${(r.director / r.directorFresh).toFixed(2)}×; ` +
        `netlink transaction / (nft 1 element) ${(r.batch / r.oneElement).toFixed(3)}×; ` +
        `nft 1 element / netlink 1 element ${(r.oneElement / r.netlink).toFixed(0)}×`);
    }
    for (const r of rows) {
      // Who pays for the wrr change: the kernel's floor (any commit among this many chains), the rest of its
      // transaction (validating shard 0, the elements, the new rule; the pipe), and lvsd (apply() minus the transaction).
      const own = r.batch - r.netlinkData;
      const lvsd = r.change - r.batch;
      const x = (v: number, b: number | undefined): string => (b === undefined ? '?' : `${(v / b).toFixed(1)}×`);
      console.log(`S=${r.size} (${r.chains} chains): wrr change ${r.change.toFixed(2)} ms = its transaction ${r.batch.toFixed(2)} ms [the kernel's floor among ${r.chains} chains ${r.netlinkData.toFixed(2)} ms + the rest ${own.toFixed(2)} ms] + lvsd ${lvsd.toFixed(2)} ms (CPU ${r.changeCpu.toFixed(2)} ms); ` +
        `the netlink worker's CPU (its commit in the kernel and its JS) ${r.changeWorker.toFixed(2)} ms in the change, ${r.batchWorker.toFixed(2)} ms in the transaction alone; ` +
        `off-CPU in the change (neither this process nor the worker on a CPU) ${(r.change - r.changeCpu - r.changeWorker).toFixed(2)} ms; ` +
        `/ S=${base?.size ?? '?'}: change ${x(r.change, base?.change)}, the worker's CPU in it ${x(r.changeWorker, base?.changeWorker)}, floor ${x(r.netlinkData, base?.netlinkData)}, the rest of the transaction ${x(own, base === undefined ? undefined : base.batch - base.netlinkData)}, lvsd ${x(lvsd, base === undefined ? undefined : base.change - base.batch)} (CPU ${x(r.changeCpu, base?.changeCpu)}); the change less the floor ${(r.change - r.netlinkData).toFixed(2)} ms, ${x(r.change - r.netlinkData, base === undefined ? undefined : base.change - base.netlinkData)}`);
    }
  } finally {
    topo.destroy();
  }
}

await main();
