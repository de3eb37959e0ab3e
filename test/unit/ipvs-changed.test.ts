// The IPVS backend with the changed services (dataplane/types.ts, ChangedServices): over random runs of the
// director's events, a backend handed the memo's changed services sends the same operations and leaves the
// same kernel table as one that walks the table; a hint is used only when it is counted from the table the
// backend last applied, and what a wrong hint leaves out is put right by the resync (the full read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { IpvsClient } from '../../daemon/ipvs/client.js';
import type { IpvsRequest, IpvsTransport } from '../../daemon/ipvs/transport.js';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import type { VirtualServer } from '../../daemon/config/types.js';
import { createIpvsDataplane, type IpvsDataplane } from '../../daemon/dataplane/ipvs/backend.js';
import { memoryOwnership } from '../../daemon/dataplane/ipvs/ownership.js';
import type { ChangedServices, DesiredTable, ServiceSpec } from '../../daemon/dataplane/types.js';
import { DesiredMemo } from '../../daemon/director/desired-memo.js';
import type { HealthView } from '../../daemon/health/monitor-api.js';
import type { Override } from '../../daemon/state/schema.js';
import { targetKey } from '../../daemon/state/target-key.js';
import { FakeKernel } from '../support/fake-ipvs-kernel.js';

/** The fake kernel, with every change request it is sent recorded (command and payload). */
class RecordingKernel extends FakeKernel {
  sent: string[] = [];
  override async requestMany(reqs: readonly IpvsRequest[]): ReturnType<IpvsTransport['requestMany']> {
    for (const r of reqs) this.sent.push(`${String(r.cmd)}:${r.payload.toString('hex')}`);
    return super.requestMany(reqs);
  }
  dump(): string {
    return JSON.stringify([...this.table.entries()].map(([k, e]) => [k, e.svc.scheduler, [...e.dests.entries()].map(([d, x]) => [d, x.weight])]).sort());
  }
}

async function backend(k: FakeKernel): Promise<IpvsDataplane> {
  return createIpvsDataplane({ client: new IpvsClient(k), ownership: memoryOwnership(), resyncIntervalMs: 0, drainRecheckMs: 1e9, drain: { mode: 'immediate', timeoutMs: 0 } });
}

function servers(text: string): VirtualServer[] {
  const r = loadConfigText(text);
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config.virtualServers;
}

const WEB = `  - { name: web, address: 192.0.2.10, port: 80, quorum: 2, sorryServer: { address: 10.0.9.1, port: 80 },
      realServers: [{ address: 10.0.1.1 }, { address: 10.0.1.2 }, { address: 10.0.1.3, weight: 3 }] }`;
const REST = `  - { name: maglev, address: 192.0.2.11, port: 80, scheduler: mh,
      realServers: [{ address: 10.0.2.10 }, { address: 10.0.2.9 }, { address: 10.0.2.11 }] }
  - { name: api, address: 192.0.2.12, port: 443, inhibitOnFailure: true,
      realServers: [{ address: 10.0.3.1, port: 8443 }, { address: 10.0.3.2, port: 8443 }] }`;
const EXTRA = `  - { name: extra, address: 192.0.2.13, port: 80, scheduler: sh, realServers: [{ address: 10.0.4.1 }, { address: 10.0.4.2 }] }`;

/** A config: web's first weight, with or without the extra service (a reload that adds or removes one). */
const config = (weight: number, extra: boolean): VirtualServer[] =>
  servers(`virtualServers:\n${WEB.replace('{ address: 10.0.1.1 }', `{ address: 10.0.1.1, weight: ${String(weight)} }`)}\n${REST}${extra ? `\n${EXTRA}` : ''}\n`);

type Event =
  | { kind: 'health'; service: number; rs: number; up: boolean }
  | { kind: 'override'; service: number; rs: number | undefined; weight: number | null }
  | { kind: 'quorum'; service: number; lost: boolean }
  | { kind: 'reload'; weight: number; extra: boolean };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('health' as const), service: fc.nat(3), rs: fc.nat(2), up: fc.boolean() }),
  fc.record({ kind: fc.constant('override' as const), service: fc.nat(3), rs: fc.option(fc.nat(2), { nil: undefined }), weight: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }) }),
  fc.record({ kind: fc.constant('quorum' as const), service: fc.nat(3), lost: fc.boolean() }),
  fc.record({ kind: fc.constant('reload' as const), weight: fc.integer({ min: 1, max: 4 }), extra: fc.boolean() }),
);

test('property: with the memo\'s changed services the backend sends what the walk of the table sends, and the kernels agree', async () => {
  const seen = { hinted: 0, removals: 0 };
  await fc.assert(
    fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 25 }), async (events) => {
      let vs = config(1, true);
      const health = new Map<string, HealthView>();
      const overrides = new Map<string, Override>();
      const quorumLost = new Set<string>();
      const memo = new DesiredMemo();
      const kh = new RecordingKernel();
      const kw = new RecordingKernel();
      const hinted = await backend(kh);
      const walking = await backend(kw);
      try {
        const first = memo.table(vs, { health, overrides, quorumLost });
        await hinted.apply(first, memo.changed);
        await walking.apply(first);
        for (const e of events) {
          if (e.kind === 'reload') {
            vs = config(e.weight, e.extra);
          } else {
            const svc = vs[e.service];
            if (svc === undefined) continue;
            const rs = e.kind === 'quorum' ? undefined : e.rs === undefined ? undefined : svc.realServers[e.rs];
            if (e.kind === 'health') {
              if (rs === undefined) continue;
              health.set(targetKey({ service: svc.id, realServer: rs.id }), { up: e.up });
            } else if (e.kind === 'override') {
              const key = targetKey(rs === undefined ? { service: svc.id } : { service: svc.id, realServer: rs.id });
              if (e.weight === null) overrides.delete(key);
              else overrides.set(key, { weight: e.weight });
            } else if (e.lost) {
              quorumLost.add(svc.id);
            } else {
              quorumLost.delete(svc.id);
            }
            memo.touch(svc.id);
          }
          const table = memo.table(vs, { health, overrides, quorumLost });
          const changed = memo.changed;
          if (changed !== undefined) {
            seen.hinted++;
            if ([...changed.services.values()].includes(undefined)) seen.removals++;
          }
          kh.sent = [];
          kw.sent = [];
          const a = await hinted.apply(table, changed);
          const b = await walking.apply(table);
          assert.equal(a.operations, b.operations, `after ${JSON.stringify(e)}`);
          // Across services the order may differ (the hint's order, the table's order): the same requests.
          assert.deepEqual([...kh.sent].sort(), [...kw.sent].sort(), `after ${JSON.stringify(e)}`);
          assert.equal(kh.dump(), kw.dump(), `after ${JSON.stringify(e)}`);
        }
      } finally {
        await hinted.close();
        await walking.close();
      }
    }),
    { numRuns: 150, seed: 27 },
  );
  assert.ok(seen.hinted > 0 && seen.removals > 0, `hints seen, removals among them: ${JSON.stringify(seen)}`);
});

const svc = (n: number, weights: number[]): ServiceSpec => ({
  id: `tcp:10.0.0.${String(n)}:80`, family: 4, protocol: 'tcp', address: `10.0.0.${String(n)}`, port: 80, scheduler: 'wrr',
  realServers: weights.map((w, i) => ({ id: `10.0.1.${String(i + 1)}:80`, address: `10.0.1.${String(i + 1)}`, port: 80, weight: w, method: 'nat' })),
});
const hintOf = (since: DesiredTable, ...services: ServiceSpec[]): ChangedServices => ({ since, services: new Map(services.map((s) => [s.id, s])) });

test('a hint is trusted only from the table last applied; what a wrong one leaves out, the resync puts right', async () => {
  const k = new FakeKernel();
  const dp = await backend(k);
  try {
    const t0: DesiredTable = { services: [svc(1, [1, 1]), svc(2, [1, 1])] };
    await dp.apply(t0);
    // Counted from t0, which the backend last applied, naming service 1 only: service 2's change is not looked for.
    const t1: DesiredTable = { services: [svc(1, [2, 1]), svc(2, [5, 1])] };
    assert.equal((await dp.apply(t1, hintOf(t0, t1.services[0] ?? assert.fail()))).operations, 1);
    assert.deepEqual(k.weights('tcp:10.0.0.1:80'), { '10.0.1.1:80': 2, '10.0.1.2:80': 1 });
    assert.deepEqual(k.weights('tcp:10.0.0.2:80'), { '10.0.1.1:80': 1, '10.0.1.2:80': 1 }, 'the hint was not used: the table was walked');
    // The resync reads the whole kernel and applies the whole last table: service 2 lands.
    await dp.resync();
    assert.deepEqual(k.weights('tcp:10.0.0.2:80'), { '10.0.1.1:80': 5, '10.0.1.2:80': 1 });
    // Counted from a table the backend never applied (a pass whose apply failed): ignored, the table walked.
    const t2: DesiredTable = { services: [svc(1, [3, 1]), svc(2, [6, 1])] };
    const elsewhere: DesiredTable = { services: [...t1.services] };
    assert.equal((await dp.apply(t2, hintOf(elsewhere, t2.services[0] ?? assert.fail()))).operations, 2);
    assert.deepEqual(k.weights('tcp:10.0.0.2:80'), { '10.0.1.1:80': 6, '10.0.1.2:80': 1 });
    // A removal named by the hint (undefined spec) is deleted; an addition named by it is added.
    const t3: DesiredTable = { services: [t2.services[0] ?? assert.fail(), svc(3, [1])] };
    const r3 = await dp.apply(t3, { since: t2, services: new Map<string, ServiceSpec | undefined>([['tcp:10.0.0.2:80', undefined], ['tcp:10.0.0.3:80', t3.services[1]]]) });
    assert.equal(r3.operations, 3);
    assert.deepEqual([...k.table.keys()].sort(), ['tcp:10.0.0.1:80', 'tcp:10.0.0.3:80']);
  } finally {
    await dp.close();
  }
});
