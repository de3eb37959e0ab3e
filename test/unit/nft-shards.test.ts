// Where the nftables dataplane puts each service among its shard tables (shards.ts). Pure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { place, shardIndex, shardTable } from '../../daemon/dataplane/nftables/shards.js';

const ids = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => `tcp:10.0.${(from + i) >> 8}.${(from + i) & 255}:80`);

function sizes(where: Map<string, number>): number[] {
  const out: number[] = [];
  for (const k of where.values()) out[k] = (out[k] ?? 0) + 1;
  return out;
}

test('a table from nothing fills the shards in order, none above its size', () => {
  const where = place(ids(1201), new Map(), 500);
  assert.deepEqual(sizes(where), [500, 500, 201]);
  assert.equal(where.get(ids(1)[0] ?? ''), 0);
});

test('a service stays where it is held; a new one takes the lowest shard with room', () => {
  const all = ids(1000);
  const first = place(all, new Map(), 500);
  // Ten services of shard 0 leave, two new ones arrive: the newcomers fill shard 0, nothing else moves.
  const kept = all.slice(10);
  const fresh = ids(2, 5000);
  const next = place([...kept, ...fresh], first, 500);
  for (const id of kept) assert.equal(next.get(id), first.get(id), `${id} moved`);
  for (const id of fresh) assert.equal(next.get(id), 0);
  assert.deepEqual(sizes(next), [492, 500]);
});

test('the older single-table layout (shard 0 holding everything) is split: its first services stay, the rest move up', () => {
  const all = ids(1200);
  const held = new Map(all.map((id) => [id, 0]));
  const where = place(all, held, 500);
  assert.deepEqual(sizes(where), [500, 500, 200]);
  for (const id of all.slice(0, 500)) assert.equal(where.get(id), 0);
  assert.equal(where.get(all[500] ?? ''), 1);
});

test('the same ids and holdings give the same placement', () => {
  const all = ids(777);
  const held = new Map(all.map((id, i) => [id, i % 3]));
  assert.deepEqual([...place(all, held, 300)], [...place(all, held, 300)]);
});

test('shard 0 keeps the dataplane\'s table name; only its own shards are recognised', () => {
  assert.equal(shardTable('lvsd', 0), 'lvsd');
  assert.equal(shardTable('lvsd', 3), 'lvsd-3');
  assert.equal(shardIndex('lvsd', 'lvsd'), 0);
  assert.equal(shardIndex('lvsd', 'lvsd-3'), 3);
  assert.equal(shardIndex('lvsd', 'lvsd-03'), undefined);
  assert.equal(shardIndex('lvsd', 'lvsd-x'), undefined);
  assert.equal(shardIndex('lvsd', 'lvsd_vrrp'), undefined);
  assert.equal(shardIndex('lvsd', 'lvsdmasq'), undefined);
});
