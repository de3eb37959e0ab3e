// The mh scheduler in the nftables and userspace dataplanes: a Maglev table computed by lvsd. Pure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';
import { fingerprint, serviceModel, type NftService } from '../../daemon/dataplane/nftables/model.js';
import { serviceRule, slotElements } from '../../daemon/dataplane/nftables/render.js';
import { maglevRuns } from '../../daemon/dataplane/nftables/maglev-map.js';
import { MH_TABLE_SIZE } from '../../daemon/dataplane/maglev.js';
import { hashSource, MaglevHash, SourceHash, type Pickable } from '../../daemon/dataplane/userspace/schedulers.js';

function rs(address: string, weight = 1, port = 80): RealServerSpec {
  return { id: `${address}:${String(port)}`, address, port, weight, method: 'nat' };
}

function mh(realServers: RealServerSpec[], scheduler: ServiceSpec['scheduler'] = 'mh'): ServiceSpec {
  return { id: 'tcp:192.0.2.10:80', family: 4, protocol: 'tcp', address: '192.0.2.10', port: 80, scheduler, schedulerFlags: ['mh-fallback', 'mh-port'], realServers };
}

const FOUR = ['10.0.1.1', '10.0.1.2', '10.0.1.3', '10.0.1.4'];

/** The real server (address) a flow hash reaches through a model's DNAT map, as the kernel does: hash mod M → slot. */
function target(m: NftService, flowHash: number): string | undefined {
  const slot = flowHash % m.mod;
  return m.slots.find((s) => s.from <= slot && slot <= s.to)?.address;
}

/** A fixed, spread set of flow hashes (a multiplicative sequence: the test must not depend on a random draw). */
const FLOWS = Array.from({ length: 20_000 }, (_, i) => Math.imul(i + 1, 0x9e3779b1) >>> 0);

test('mh renders a jhash map over all 4,093 Maglev slots, in runs, each real server with about M/N of them', () => {
  const m = serviceModel(mh(FOUR.map((a) => rs(a))));
  assert.equal(m.mod, MH_TABLE_SIZE);
  assert.deepEqual(m.dispatch, { kind: 'jhash', fields: ['saddr', 'sport'], seed: (m.dispatch as { seed: number }).seed });
  // Runs cover 0 … M−1 without gap or overlap, and neighbours differ (else they would be one run).
  let next = 0;
  for (const [i, s] of m.slots.entries()) {
    assert.equal(s.from, next, `run ${String(i)} starts where the last ended`);
    assert.ok(s.to >= s.from);
    if (i > 0) assert.notEqual(s.address, m.slots[i - 1]?.address);
    next = s.to + 1;
  }
  assert.equal(next, MH_TABLE_SIZE);
  const owned = new Map<string, number>();
  for (const s of m.slots) owned.set(s.address, (owned.get(s.address) ?? 0) + s.to - s.from + 1);
  assert.deepEqual([...owned.keys()].sort(), FOUR);
  for (const [a, n] of owned) assert.ok(Math.abs(n - MH_TABLE_SIZE / 4) <= MH_TABLE_SIZE * 0.01, `${a} owns ${String(n)} slots`);
  const rule = JSON.stringify(serviceRule('lvsd', m));
  assert.match(rule, /"jhash":\{"mod":4093,/);
  const elems = JSON.stringify(slotElements(m)).match(/"concat":\["10\.0\.1\.\d",80\]/g) ?? [];
  assert.equal(elems.length, m.slots.length, 'one map element per run');
});

test('two directors built independently, real servers listed in another order, pick the same server for every flow', () => {
  const a = serviceModel(mh(FOUR.map((x) => rs(x))));
  const b = serviceModel(mh([...FOUR].reverse().map((x) => rs(x))));
  assert.equal(fingerprint(a), fingerprint(b));
  assert.deepEqual(a.dispatch, b.dispatch, 'same seed on both: it comes from the virtual server id');
  for (const h of FLOWS) assert.equal(target(a, h), target(b, h));
});

test('a failed real server (weight 0): its flows move, about 1/N of all; sh over the same servers moves more', () => {
  const before = serviceModel(mh(FOUR.map((a) => rs(a))));
  const after = serviceModel(mh(FOUR.map((a) => rs(a, a === '10.0.1.2' ? 0 : 1))));
  let moved = 0;
  let movedOthers = 0;
  for (const h of FLOWS) {
    const x = target(before, h);
    const y = target(after, h);
    assert.notEqual(y, '10.0.1.2');
    if (x !== y) moved++;
    if (x !== y && x !== '10.0.1.2') movedOthers++;
  }
  const shBefore = serviceModel(mh(FOUR.map((a) => rs(a)), 'sh'));
  const shAfter = serviceModel(mh(FOUR.map((a) => rs(a, a === '10.0.1.2' ? 0 : 1)), 'sh'));
  const shMoved = FLOWS.filter((h) => target(shBefore, h) !== target(shAfter, h)).length;
  // Maglev's promise is "little more than the leaver's own slots" (bench/maglev.ts measures it, mean +0.76 %).
  assert.ok(moved / FLOWS.length < 0.25 + 0.08, `mh moved ${String(moved)} of ${String(FLOWS.length)}`);
  assert.ok(movedOthers / FLOWS.length < 0.08, `flows of the servers still up that moved: ${String(movedOthers)}`);
  // sh keeps its slot space (model.ts, HASH_SLOTS) but its ranges are contiguous: the ones after the leaver's
  // shift, and a third of all flows move (4 → 3 equal ranges), not a quarter.
  assert.ok(shMoved > moved && shMoved / FLOWS.length > 0.3, `sh moved ${String(shMoved)}, mh ${String(moved)}`);
  // And back: the server's return restores the first table exactly.
  assert.equal(fingerprint(serviceModel(mh(FOUR.map((a) => rs(a))))), fingerprint(before));
});

test('weights: a real server of weight 2 owns about twice the slots of one of weight 1', () => {
  const runs = maglevRuns([rs('10.0.1.1', 2), rs('10.0.1.2', 1), rs('10.0.1.3', 1)]);
  const owned = new Map<string, number>();
  for (const r of runs) owned.set(r.realServer.address, (owned.get(r.realServer.address) ?? 0) + r.to - r.from + 1);
  const heavy = owned.get('10.0.1.1') ?? 0;
  assert.ok(Math.abs(heavy - MH_TABLE_SIZE / 2) < MH_TABLE_SIZE * 0.02, `weight 2 owns ${String(heavy)}`);
  assert.deepEqual(maglevRuns([rs('10.0.1.1', 0)]), [], 'no usable server: no map');
  assert.equal(serviceModel(mh([rs('10.0.1.1', 0)])).mod, 0);
});

function pickables(weights: Record<string, number>): Pickable[] {
  return Object.entries(weights).map(([a, w]) => ({ id: `${a}:80`, weight: w, active: 0 }));
}

const SOURCES = Array.from({ length: 3_000 }, (_, i) => `10.${String((i >> 8) & 255)}.${String(i & 255)}.7`);

test('userspace mh uses the same table as the nftables map: one source lands on the same server in both', () => {
  const m = serviceModel(mh(FOUR.map((a) => rs(a))));
  const picker = new MaglevHash();
  const servers = pickables(Object.fromEntries(FOUR.map((a) => [a, 1])));
  for (const s of SOURCES) assert.equal(picker.pick(servers, s)?.id, `${target(m, hashSource(s)) ?? ''}:80`);
});

test('userspace mh: a failed server moves only about its own clients (sh moves most); a tried server falls back', () => {
  const up = pickables({ '10.0.1.1': 1, '10.0.1.2': 1, '10.0.1.3': 1, '10.0.1.4': 1 });
  const down = pickables({ '10.0.1.1': 1, '10.0.1.2': 0, '10.0.1.3': 1, '10.0.1.4': 1 });
  const count = (p: { pick: MaglevHash['pick'] }): number => SOURCES.filter((s) => p.pick(up, s)?.id !== p.pick(down, s)?.id).length;
  const mhMoved = count(new MaglevHash());
  const shMoved = count(new SourceHash());
  assert.ok(mhMoved / SOURCES.length < 0.33, `mh moved ${String(mhMoved)}`);
  assert.ok(shMoved > 2 * mhMoved, `sh moved ${String(shMoved)}, mh ${String(mhMoved)}`);
  const picker = new MaglevHash();
  const first = picker.pick(up, '10.0.0.9');
  assert.ok(first !== undefined);
  const second = picker.pick(up, '10.0.0.9', new Set([first]));
  assert.ok(second !== undefined && second !== first);
  assert.equal(picker.pick(up, '10.0.0.9', new Set(up)), undefined, 'every server tried: none');
  assert.equal(picker.pick(pickables({ '10.0.1.1': 0 }), '10.0.0.9'), undefined);
});
