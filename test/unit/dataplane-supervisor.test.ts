// What the director shows as "in the dataplane" (the snapshot's effective weights, `lvsd status`) follows
// an apply at once, not a counters period later: right after a start or a drain the snapshot said every
// real server was "out of the table" for up to 2 s (CI, stop 30: `lvsd status` after a drain).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import type { Config } from '../../daemon/config/types.js';
import type { ApplyReport, Dataplane, DesiredTable, ObservedTable, ServiceSpec } from '../../daemon/dataplane/types.js';
import { DataplaneSupervisor } from '../../daemon/director/dataplane-supervisor.js';

const svc = (weights: number[]): ServiceSpec => ({
  id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr',
  realServers: weights.map((weight, i) => ({ id: `10.0.1.${i + 1}:80`, address: `10.0.1.${i + 1}`, port: 80, weight, method: 'nat' as const })),
});

/** Holds what it was given; its reads can be held open (`hold`) to land an apply while one is in flight. */
class MemoryDataplane implements Dataplane {
  readonly kind = 'nftables' as const;
  table: DesiredTable = { services: [] };
  reads = 0;
  /** How long each read takes. */
  readMs = 0;
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open?.();
    this.gate = null;
  }
  apply(desired: DesiredTable): Promise<ApplyReport> {
    const same = JSON.stringify(desired) === JSON.stringify(this.table);
    this.table = desired;
    return Promise.resolve({ operations: same ? 0 : 1, drift: [], durationMs: 0 });
  }
  async observe(): Promise<ObservedTable> {
    this.reads++;
    const seen = this.table;
    await this.gate;
    if (this.readMs > 0) await new Promise((r) => setTimeout(r, this.readMs));
    return {
      services: seen.services.map((s) => ({ ...s, realServers: s.realServers.map((r) => ({ ...r, activeConns: 0, inactiveConns: 0, persistConns: 0 })) })),
    };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const weights = (o: ObservedTable): number[] => o.services[0]?.realServers.map((r) => r.weight) ?? [];

async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 2_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** By default a period no test waits for: every read is one an apply asked for. */
function supervisor(dp: MemoryDataplane, desired: () => DesiredTable, statsIntervalMs = 1e9): DataplaneSupervisor {
  return new DataplaneSupervisor(
    { dataplane: dp, kind: 'nftables', reason: 'test', sync: null, retune: () => Promise.resolve() },
    { logger: pino({ level: 'silent' }), emit: () => undefined, desired, statsIntervalMs },
  );
}

test('the first apply and a drain are read back at once, not a counters period later', async () => {
  const dp = new MemoryDataplane();
  let desired: DesiredTable = { services: [svc([1, 1, 1])] };
  const sup = supervisor(dp, () => desired);
  await sup.start({ virtualServers: [] } as unknown as Config);
  try {
    await until('the started table in the snapshot', () => weights(sup.observed).length === 3);
    assert.deepEqual(weights(sup.observed), [1, 1, 1]);
    desired = { services: [svc([0, 1, 1])] };
    await sup.request();
    await until('the drain in the snapshot', () => weights(sup.observed)[0] === 0);
    assert.equal(dp.reads, 2);
    // An apply that changed nothing costs no read.
    await sup.request();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(dp.reads, 2);
  } finally {
    await sup.close();
  }
});

test('an apply landing while a read is in flight gets one more read: the snapshot ends on the new table', async () => {
  const dp = new MemoryDataplane();
  let desired: DesiredTable = { services: [svc([1, 1])] };
  const sup = supervisor(dp, () => desired);
  dp.hold();
  await sup.start({ virtualServers: [] } as unknown as Config);
  try {
    await until('the first read to start', () => dp.reads === 1);
    // Two applies while the first read (of the old table) is held: they ask for one more read, not two.
    desired = { services: [svc([1, 2])] };
    await sup.request();
    desired = { services: [svc([3, 2])] };
    await sup.request();
    dp.release();
    await until('the newest table in the snapshot', () => weights(sup.observed)[0] === 3);
    assert.deepEqual(weights(sup.observed), [3, 2]);
    assert.equal(dp.reads, 2);
  } finally {
    await sup.close();
  }
});

test('a burst of applies on a table slow to read: reads take a fifth of the time at most, the snapshot ends on the newest table', async () => {
  const dp = new MemoryDataplane();
  dp.readMs = 40;
  let desired: DesiredTable = { services: [svc([1, 1])] };
  const sup = supervisor(dp, () => desired);
  await sup.start({ virtualServers: [] } as unknown as Config);
  try {
    // 100 applies, each changing a weight, over ~600 ms: read back to back that is ~15 reads of 40 ms.
    const t0 = Date.now();
    for (let i = 2; i <= 101; i++) {
      desired = { services: [svc([i, 1])] };
      await sup.request();
      await new Promise((r) => setTimeout(r, 5));
    }
    const burstMs = Date.now() - t0;
    await until('the newest table in the snapshot', () => weights(sup.observed)[0] === 101);
    // The first read, then one at most every 40 + 4 × 40 ms during the burst, and the one after it.
    const most = 1 + Math.ceil(burstMs / 200) + 1;
    assert.ok(dp.reads <= most, `${dp.reads} reads in a ${burstMs} ms burst (at most ${most})`);
    assert.ok(dp.reads >= 2, `${dp.reads} reads`);
  } finally {
    await sup.close();
  }
});

test('the periodic read of a table slow to read keeps a fifth of the time too', async () => {
  const dp = new MemoryDataplane();
  dp.readMs = 40;
  const sup = supervisor(dp, () => ({ services: [svc([1, 1])] }), 10);
  const t0 = Date.now();
  await sup.start({ virtualServers: [] } as unknown as Config);
  try {
    await new Promise((r) => setTimeout(r, 600));
    // A tick every 10 ms read back to back is ~15 reads of 40 ms; one at most every 40 + 4 × 40 ms.
    const most = 1 + Math.ceil((Date.now() - t0) / 200) + 1;
    assert.ok(dp.reads <= most, `${dp.reads} reads in ${Date.now() - t0} ms (at most ${most})`);
    assert.ok(dp.reads >= 2, `${dp.reads} reads: the period still reads`);
  } finally {
    await sup.close();
  }
});
