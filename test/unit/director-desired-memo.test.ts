// The director's memo of the desired table (director/desired-memo.ts): over random runs of the events the
// director sees (health flips, dynamic weights, overrides, quorum, a reload), its table always equals the one
// desired.ts decides from scratch, and a service whose spec did not change is handed over as the very same
// object — the one the dataplane's identity fast path needs (dataplane/types.ts, Dataplane.apply) — and the
// changed services it names beside each table are exactly the services whose object is new.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import type { VirtualServer } from '../../daemon/config/types.js';
import type { DesiredTable } from '../../daemon/dataplane/types.js';
import { desiredTable, type DesiredInputs } from '../../daemon/director/desired.js';
import { DesiredMemo } from '../../daemon/director/desired-memo.js';
import { servicePlan } from '../../daemon/director/plan.js';
import type { HealthView } from '../../daemon/health/monitor-api.js';
import type { Override } from '../../daemon/state/schema.js';
import { targetKey } from '../../daemon/state/target-key.js';
import { startFakeDirector } from '../support/director-fakes.js';

function servers(text: string): VirtualServer[] {
  const r = loadConfigText(text);
  if (!r.ok) assert.fail(r.errors.map(formatError).join('\n'));
  return r.config.virtualServers;
}

const CONFIG = `
virtualServers:
  - { name: web, address: 192.0.2.10, port: 80, quorum: 2, sorryServer: { address: 10.0.9.1, port: 80 },
      realServers: [{ address: 10.0.1.1 }, { address: 10.0.1.2 }, { address: 10.0.1.3, weight: 3 }] }
  - { name: maglev, address: 192.0.2.11, port: 80, scheduler: mh,
      realServers: [{ address: 10.0.2.10 }, { address: 10.0.2.9 }, { address: 10.0.2.11 }] }
  - { name: api, address: 192.0.2.12, port: 443, inhibitOnFailure: true,
      realServers: [{ address: 10.0.3.1, port: 8443 }, { address: 10.0.3.2, port: 8443 }] }
`;

type Event =
  | { kind: 'health'; service: number; rs: number; up: boolean; weight: number | undefined }
  | { kind: 'override'; service: number; rs: number | undefined; override: Override | null }
  | { kind: 'quorum'; service: number; lost: boolean }
  | { kind: 'reload'; weight: number };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('health' as const), service: fc.nat(2), rs: fc.nat(2), up: fc.boolean(), weight: fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined }) }),
  fc.record({
    kind: fc.constant('override' as const), service: fc.nat(2), rs: fc.option(fc.nat(2), { nil: undefined }),
    override: fc.option(fc.oneof(fc.constant({ drain: true }), fc.constant({ maintenance: true }), fc.integer({ min: 0, max: 9 }).map((weight) => ({ weight }))), { nil: null }),
  }),
  fc.record({ kind: fc.constant('quorum' as const), service: fc.nat(2), lost: fc.boolean() }),
  fc.record({ kind: fc.constant('reload' as const), weight: fc.integer({ min: 1, max: 4 }) }),
);

test('the memo decides what desired.ts decides, and keeps every unchanged spec as the same object', () => {
  const seen = { kept: 0, changed: 0 };
  fc.assert(
    fc.property(fc.array(eventArb, { minLength: 1, maxLength: 30 }), (events) => {
      let vs = servers(CONFIG);
      const health = new Map<string, HealthView>();
      const overrides = new Map<string, Override>();
      const quorumLost = new Set<string>();
      const inputs = (): Omit<DesiredInputs, 'services'> => ({ health, overrides, quorumLost });
      const memo = new DesiredMemo();
      let before: DesiredTable = memo.table(vs, inputs());
      for (const e of events) {
        // What the director does on each event: change the input, touch the service it belongs to.
        const svc = vs[e.kind === 'reload' ? 0 : e.service];
        if (svc === undefined) continue;
        if (e.kind === 'health') {
          const rs = svc.realServers[e.rs];
          if (rs === undefined) continue;
          health.set(targetKey({ service: svc.id, realServer: rs.id }), e.weight === undefined ? { up: e.up } : { up: e.up, dynamicWeight: e.weight });
          memo.touch(svc.id);
        } else if (e.kind === 'override') {
          const rs = e.rs === undefined ? undefined : svc.realServers[e.rs];
          const key = targetKey(rs === undefined ? { service: svc.id } : { service: svc.id, realServer: rs.id });
          if (e.override === null) overrides.delete(key);
          else overrides.set(key, e.override);
          memo.touch(svc.id);
        } else if (e.kind === 'quorum') {
          if (e.lost) quorumLost.add(svc.id);
          else quorumLost.delete(svc.id);
          memo.touch(svc.id);
        } else {
          // A reload: a new config object, where only the first service's first weight may differ.
          vs = servers(CONFIG.replace('{ address: 10.0.1.1 }', `{ address: 10.0.1.1, weight: ${String(e.weight)} }`));
        }
        const after = memo.table(vs, inputs());
        const fresh = desiredTable({ services: vs.map(servicePlan), ...inputs() });
        assert.deepEqual(after, fresh, `after ${JSON.stringify(e)}`);
        // The changed services name exactly the services whose object is new, counted from the table before.
        const changed = memo.changed ?? assert.fail('no changed services after the first table');
        assert.equal(changed.since, before);
        assert.deepEqual([...changed.services].sort(), after.services.filter((s, i) => s !== before.services[i]).map((s) => [s.id, s]).sort());
        if (changed.services.size === 0) assert.equal(after, before, 'nothing changed, yet a new table');
        after.services.forEach((spec, i) => {
          const old = before.services[i];
          const equal = JSON.stringify(old) === JSON.stringify(spec);
          assert.equal(spec === old, equal, `${spec.id} after ${JSON.stringify(e)}: ${equal ? 'unchanged but a new object' : 'changed but the old object'}`);
          seen[equal ? 'kept' : 'changed']++;
        });
        before = after;
      }
    }),
    { numRuns: 400, seed: 19 },
  );
  assert.ok(seen.kept > 0 && seen.changed > 0, `both outcomes seen: ${JSON.stringify(seen)}`);
});

test('the memo: an untouched service is not decided again, however its inputs moved', () => {
  // The contract's other side: the director must touch a service on every change (director.ts does, on
  // every health, quorum and override event). An input changed without a touch stays unseen, which is
  // what makes a pass cost what changed.
  const vs = servers(CONFIG);
  const web = vs[0] ?? assert.fail();
  const health = new Map<string, HealthView>();
  const memo = new DesiredMemo();
  const first = memo.table(vs, { health, overrides: new Map(), quorumLost: new Set() });
  health.set(targetKey({ service: web.id, realServer: web.realServers[0]?.id ?? '' }), { up: false });
  const untouched = memo.table(vs, { health, overrides: new Map(), quorumLost: new Set() });
  assert.equal(untouched.services[0], first.services[0]);
  memo.touch(web.id);
  const touched = memo.table(vs, { health, overrides: new Map(), quorumLost: new Set() });
  assert.notEqual(touched.services[0], first.services[0]);
  assert.equal(touched.services[0]?.realServers.length, 2, 'the failed server left');
  assert.equal(touched.services[1], first.services[1], 'the other services kept their objects');
});

test('director: a health change, an override and a reload each hand the untouched service over as the same object', async () => {
  const up = createServer((s) => s.destroy());
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  const port = (up.address() as AddressInfo).port;
  const text = (w: number) => `
vrrp: { instances: [] }
virtualServers:
  - name: checked
    address: 192.0.2.10
    port: 80
    healthCheck: { type: tcp, interval: 100ms, timeout: 300ms, fall: 1 }
    realServers: [{ address: 127.0.0.1, port: ${String(port)} }, { address: 127.0.0.2, port: ${String(port)}, healthCheck: { type: none } }]
  - name: quiet
    address: 192.0.2.11
    port: 80
    realServers: [{ address: 10.0.1.1, weight: ${String(w)} }]
`;
  const t = await startFakeDirector(text(1));
  const applied = t.dataplane.applied;
  const last = (): DesiredTable => applied[applied.length - 1] ?? assert.fail('nothing applied');
  const waitFor = async (what: string, ok: () => boolean): Promise<void> => {
    const deadline = Date.now() + 10_000;
    while (!ok()) {
      assert.ok(Date.now() < deadline, what);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    const start = last();
    const [checked, quiet] = start.services;
    assert.ok(checked && quiet);
    // health: the checked server goes down
    await new Promise((r) => up.close(r));
    await waitFor('the failed server never left the table', () => last().services[0]?.realServers.length === 1);
    assert.notEqual(last().services[0], checked);
    assert.equal(last().services[1], quiet, 'a health change elsewhere rebuilt the quiet service');
    // an override on the quiet service
    const before = last();
    await t.d.setOverride({ service: quiet.id, realServer: quiet.realServers[0]?.id ?? '' }, { weight: 7 }, 'test');
    assert.equal(last().services[1]?.realServers[0]?.weight, 7);
    assert.equal(last().services[0], before.services[0], 'an override on the quiet service rebuilt the checked one');
    // Handed to the dataplane beside the table: the changed services, the quiet one alone, counted from the table before.
    const changed = t.dataplane.changed[t.dataplane.changed.length - 1] ?? assert.fail('no changed services handed');
    assert.equal(changed.since, before);
    assert.deepEqual([...changed.services.keys()], [quiet.id]);
    assert.equal(changed.services.get(quiet.id), last().services[1]);
    await t.d.clearOverride({ service: quiet.id, realServer: quiet.realServers[0]?.id ?? '' }, 'test');
    assert.equal(last().services[1]?.realServers[0]?.weight, 1);
    // a reload that changes the quiet service only: the checked one is decided again, and kept
    const beforeReload = last();
    writeFileSync(t.file, text(4));
    const r = await t.d.reloadFile('test');
    assert.ok(r.ok, JSON.stringify(r.errors));
    assert.equal(last().services[1]?.realServers[0]?.weight, 4);
    assert.equal(last().services[0], beforeReload.services[0], 'a reload of the quiet service rebuilt the checked one');
  } finally {
    await t.cleanup();
  }
});
