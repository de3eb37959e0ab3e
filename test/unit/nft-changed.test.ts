// The nftables apply from the changed services (dataplane/nftables/changed.ts): over random runs of the
// director's events (health, overrides, quorum, reloads that add and remove a service), with and without
// masquerade, the steps built from the memo's changed services alone — the netlink batch, the nft plan, the
// conntrack targets and the record they leave — are those of the walk of the whole table, and the hint is
// declined (the table walked) exactly where the small tables cannot say all: a service coming or going while
// masquerading. The real kernel is test/netns/dataplane-nftables.test.ts's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import type { VirtualServer } from '../../daemon/config/types.js';
import type { ChangedServices, DesiredTable } from '../../daemon/dataplane/types.js';
import { fingerprint, ModelCache, sameService, tableModel, type NftTableModel } from '../../daemon/dataplane/nftables/model.js';
import { fullLive, planPhases, planUpdate, slotMapsIn } from '../../daemon/dataplane/nftables/render.js';
import { tableDelta, type TableDelta } from '../../daemon/dataplane/nftables/delta.js';
import { fastChanges } from '../../daemon/dataplane/nftables/fast-path.js';
import { goneTargets } from '../../daemon/dataplane/nftables/conntrack.js';
import { changedStep, landStep } from '../../daemon/dataplane/nftables/changed.js';
import { DesiredMemo } from '../../daemon/director/desired-memo.js';
import type { HealthView } from '../../daemon/health/monitor-api.js';
import type { Override } from '../../daemon/state/schema.js';
import { targetKey } from '../../daemon/state/target-key.js';

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
      realServers: [{ address: 10.0.3.1, port: 8443 }, { address: 10.0.3.2, port: 8443 }] }
  - { name: web81, address: 192.0.2.10, port: 81, scheduler: sh, realServers: [{ address: 10.0.1.1 }, { address: 10.0.1.2 }] }`;
const EXTRA = `  - { name: extra, address: 192.0.2.13, port: 80, scheduler: rr, realServers: [{ address: 10.0.4.1 }, { address: 10.0.4.2 }] }`;

const config = (weight: number, extra: boolean): VirtualServer[] =>
  servers(`virtualServers:\n${WEB.replace('{ address: 10.0.1.1 }', `{ address: 10.0.1.1, weight: ${String(weight)} }`)}\n${REST}${extra ? `\n${EXTRA}` : ''}\n`);

type Event =
  | { kind: 'health'; service: number; rs: number; up: boolean }
  | { kind: 'override'; service: number; rs: number | undefined; weight: number | null }
  | { kind: 'quorum'; service: number; lost: boolean }
  | { kind: 'reload'; weight: number; extra: boolean };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('health' as const), service: fc.nat(4), rs: fc.nat(2), up: fc.boolean() }),
  fc.record({ kind: fc.constant('override' as const), service: fc.nat(4), rs: fc.option(fc.nat(2), { nil: undefined }), weight: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }) }),
  fc.record({ kind: fc.constant('quorum' as const), service: fc.nat(4), lost: fc.boolean() }),
  fc.record({ kind: fc.constant('reload' as const), weight: fc.integer({ min: 1, max: 4 }), extra: fc.boolean() }),
);

/** What one apply sends and leaves, in a form two paths can be compared by (order across services aside). */
interface Outcome {
  fast: string[];
  phases: string[][];
  gone: string[];
  services: string[];
  live: string[];
}

/** The backend's record and model cache, as an apply leaves them. */
class Record {
  readonly cache = new ModelCache();
  expected: NftTableModel;
  constructor(first: DesiredTable, readonly masquerade: boolean) {
    const m = tableModel(first, { masquerade }, this.cache);
    this.cache.commit();
    this.expected = { ...m, live: fullLive(m) };
  }

  /** The fast path, then nft for the rest (backend.ts), from two tables and their delta. */
  private step(from: NftTableModel, to: NftTableModel, delta: TableDelta): Omit<Outcome, 'services' | 'live'> & { live: Map<string, 'a' | 'b'> } {
    const fast = fastChanges(from, to, delta.changed);
    const written = new Set(fast.chains);
    const plan = planUpdate(from, to, sameService, [], slotMapsIn(this.expected), { changed: delta.changed.filter((c) => !written.has(c)), removed: delta.removed });
    return {
      fast: fast.ops.map((op) => JSON.stringify(op)).sort(),
      phases: planPhases(plan).map((p) => p.map((c) => JSON.stringify(c)).sort()),
      gone: goneTargets(from.services, to, [...delta.changed, ...delta.removed]).map((t) => JSON.stringify(t)).sort(),
      live: plan.live,
    };
  }

  private outcome(o: ReturnType<Record['step']>): Outcome {
    return {
      ...o,
      services: [...this.expected.services].map(([chain, s]) => `${chain} ${s.id} ${fingerprint(s)}`).sort(),
      live: [...this.expected.live].map(([chain, side]) => `${chain} ${side}`).sort(),
    };
  }

  walk(desired: DesiredTable): Outcome {
    const next = tableModel(desired, { masquerade: this.masquerade }, this.cache);
    const o = this.step(this.expected, next, tableDelta(this.expected, next));
    this.cache.commit();
    this.expected = { ...next, live: o.live };
    return this.outcome(o);
  }

  /** The apply from the changed services; undefined where changedStep declines (the backend then walks). */
  changed(changed: ChangedServices): Outcome | undefined {
    const step = changedStep(this.expected, changed, this.cache);
    if (step === undefined) {
      this.cache.discard();
      return undefined;
    }
    const o = this.step(step.from, step.to, step.delta);
    landStep(this.expected, step, o.live);
    this.cache.commitChanged([...changed.services].filter(([, s]) => s === undefined).map(([id]) => id));
    return this.outcome(o);
  }
}

test('property: the apply from the memo\'s changed services sends and leaves what the walk of the table does', () => {
  const seen = { changed: 0, declined: 0, structural: 0 };
  fc.assert(
    fc.property(fc.boolean(), fc.array(eventArb, { minLength: 1, maxLength: 25 }), (masquerade, events) => {
      let vs = config(1, true);
      const health = new Map<string, HealthView>();
      const overrides = new Map<string, Override>();
      const quorumLost = new Set<string>();
      const memo = new DesiredMemo();
      const first = memo.table(vs, { health, overrides, quorumLost });
      const hinted = new Record(first, masquerade);
      const walking = new Record(first, masquerade);
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
        const changed = memo.changed ?? assert.fail('no changed services after the first table');
        const want = walking.walk(table);
        const comes = [...changed.services].some(([id, s]) => s === undefined || !changed.since.services.some((f) => f.id === id));
        const got = hinted.changed(changed);
        if (got === undefined) {
          // Declined only where the masquerade sets need the whole table; then the backend walks.
          assert.ok(masquerade && comes, `declined after ${JSON.stringify(e)}`);
          seen.declined++;
          assert.deepEqual(hinted.walk(table), want);
          continue;
        }
        seen.changed++;
        if (got.phases.length > 0) seen.structural++;
        assert.deepEqual(got, want, `after ${JSON.stringify(e)}`);
      }
    }),
    { numRuns: 200, seed: 27 },
  );
  assert.ok(seen.changed > 0 && seen.declined > 0 && seen.structural > 0, `every path seen: ${JSON.stringify(seen)}`);
});
