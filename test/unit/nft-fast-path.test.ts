// Which changes go by one netlink transaction (fast-path.ts), and the text nft is given for the rest (nft-text.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RealServerSpec, ServiceSpec } from '../../daemon/dataplane/types.js';
import { HASH_SLOTS, slotChainName, tableModel, type NftTableModel } from '../../daemon/dataplane/nftables/model.js';
import { fullCommands, fullLive, vmapName } from '../../daemon/dataplane/nftables/render.js';
import { fastChanges } from '../../daemon/dataplane/nftables/fast-path.js';
import { fullText, nftText } from '../../daemon/dataplane/nftables/nft-text.js';
import fc from 'fast-check';
import { decodeAttrs, NFT_MSG, slotElementOps, type NftOp } from '../../daemon/dataplane/nftables/nl-codec.js';
import { FRESH_BATCH_BYTES, freshProgram } from '../../daemon/dataplane/nftables/fresh.js';

const rs = (address: string, port: number, weight = 1): RealServerSpec => ({ id: `${address}:${port}`, address, port, weight, method: 'nat' });
const svc = (p: Partial<ServiceSpec> & { realServers: RealServerSpec[] }): ServiceSpec => ({ id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'wrr', ...p });
const live = (m: NftTableModel): NftTableModel => ({ ...m, live: fullLive(m) });
const VMAPS = new Set(['svc4', 'svc6', 'fwmark4', 'fwmark6']);
/** The set an element message writes (NFTA_SET_ELEM_LIST_SET). */
const setOf = (op: NftOp): string => Buffer.from(decodeAttrs(op.payload)[1]?.hex ?? '', 'hex').toString().replace(/\0$/, '');
/** The chains a verdict map element message's elements go to (ELEMENTS → element → DATA → VERDICT → CHAIN). */
const gotoChains = (op: NftOp): string[] =>
  (decodeAttrs(op.payload)[2]?.children ?? []).map((e) => Buffer.from(e.children?.[1]?.children?.[0]?.children?.[1]?.hex ?? '', 'hex').toString().replace(/\0$/, ''));

test('a weight change of an existing service: its elements out and in, the rule only when the slot space changes', () => {
  const a = live(tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] }), svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] }));
  const same = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80, 1)] }), svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] });
  assert.deepEqual(fastChanges(a, same), { ops: [], chains: [] });
  // wrr 1:1 → 2:1 changes mod 2 → 3: four messages; the other service is untouched.
  const b = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80, 2), rs('10.0.1.2', 80)] }), svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] });
  const f = fastChanges(a, b);
  assert.deepEqual(f.chains, ['svc-tcp-10.0.0.1-80']);
  assert.deepEqual(f.ops.map((o) => o.cmd), [NFT_MSG.DELSETELEM, NFT_MSG.NEWSETELEM, NFT_MSG.DELRULE, NFT_MSG.NEWRULE]);
  // Every op names the live slot chain / its map (side a).
  for (const o of f.ops) assert.equal(Buffer.from(decodeAttrs(o.payload)[1]?.hex ?? '', 'hex').toString(), 'svc-tcp-10.0.0.1-80-a\0');
  // Swapping which server is drained keeps mod 1: elements only.
  const c1 = live(tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80, 0), rs('10.0.1.2', 80)] })] }));
  const c2 = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80, 0)] })] });
  assert.deepEqual(fastChanges(c1, c2).ops.map((o) => o.cmd), [NFT_MSG.DELSETELEM, NFT_MSG.NEWSETELEM]);
});

test('structural changes are left to nft: new, drained to nothing, another scheduler, a port mapping, a fwmark with ports that changes its slot space', () => {
  const base = svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] });
  const a = live(tableModel({ services: [base] }));
  const none = (to: ServiceSpec[]): void => {
    assert.deepEqual(fastChanges(a, tableModel({ services: to })).ops, [], JSON.stringify(to));
  };
  none([base, svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })].slice(1));
  none([svc({ realServers: [rs('10.0.1.1', 80, 0), rs('10.0.1.2', 80, 0)] })]);
  none([svc({ scheduler: 'sh', realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] })]);
  none([svc({ realServers: [rs('10.0.1.1', 0), rs('10.0.1.2', 0)] })]);
  const fw = (servers: RealServerSpec[]): ServiceSpec => ({ id: 'fwmark:4:7', family: 4, protocol: 'tcp', fwmark: 7, scheduler: 'rr', realServers: servers });
  const fwa = live(tableModel({ services: [fw([rs('10.0.1.1', 80)])] }));
  assert.deepEqual(fastChanges(fwa, tableModel({ services: [fw([rs('10.0.1.1', 80), rs('10.0.1.2', 80)])] })).ops, []);
  // Without ports a fwmark service has no transport match: the codec writes it.
  const fwb = live(tableModel({ services: [fw([rs('10.0.1.1', 0)])] }));
  assert.equal(fastChanges(fwb, tableModel({ services: [fw([rs('10.0.1.1', 0), rs('10.0.1.2', 0)])] })).ops.length, 4);
});

test('a hashed service keeps its slot space: a member added, removed, drained or reweighted is its elements alone', () => {
  // No new rule, so no validation of the whole table at commit (model.ts, HASH_SLOTS); sh-port too, whose
  // rule (source address and port) the codec cannot write: it need not, the rule stays.
  for (const flags of [[], ['sh-port' as const]]) {
    const sh = (servers: RealServerSpec[]): ServiceSpec => svc({ scheduler: 'sh', schedulerFlags: flags, realServers: servers });
    const steps = [
      [rs('10.0.1.1', 80)],
      [rs('10.0.1.1', 80), rs('10.0.1.2', 80)],
      [rs('10.0.1.1', 80, 5), rs('10.0.1.2', 80)],
      [rs('10.0.1.1', 80, 0), rs('10.0.1.2', 80)],
      [rs('10.0.1.2', 80, 3), rs('10.0.1.3', 80)],
    ];
    for (let i = 1; i < steps.length; i++) {
      const from = live(tableModel({ services: [sh(steps[i - 1] ?? [])] }));
      const to = tableModel({ services: [sh(steps[i] ?? [])] });
      assert.equal(to.services.get('svc-tcp-10.0.0.1-80')?.mod, HASH_SLOTS);
      assert.deepEqual(fastChanges(from, to).ops.map((o) => o.cmd), [NFT_MSG.DELSETELEM, NFT_MSG.NEWSETELEM], `${JSON.stringify(flags)} step ${String(i)}`);
    }
  }
  // A Maglev map's thousands of intervals go as several messages of one batch (an attribute's length is 16 bits).
  const mh = (servers: RealServerSpec[]): ServiceSpec => svc({ scheduler: 'mh', realServers: servers });
  const ops = fastChanges(live(tableModel({ services: [mh([rs('10.0.2.10', 80), rs('10.0.2.9', 80), rs('10.0.2.11', 80)])] })),
    tableModel({ services: [mh([rs('10.0.2.10', 80, 0), rs('10.0.2.9', 80), rs('10.0.2.11', 80)])] })).ops;
  assert.ok(ops.length > 2 && ops.every((o) => o.payload.length < 65536 && (o.cmd === NFT_MSG.DELSETELEM || o.cmd === NFT_MSG.NEWSETELEM)), JSON.stringify(ops.map((o) => [o.cmd, o.payload.length])));
});

test('nft text: the full program, one command a line, typeof slot maps and open last intervals', () => {
  const m = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80, 2), rs('10.0.1.2', 81)] })] }, { masquerade: true });
  const text = nftText(fullCommands(m, true));
  const lines = text.trimEnd().split('\n');
  assert.deepEqual(lines.slice(0, 3), ['add table inet lvsd', 'delete table inet lvsd', 'add table inet lvsd']);
  assert.ok(lines.includes('add map inet lvsd svc-tcp-10.0.0.1-80-a { typeof numgen inc mod 1 : ip daddr . th dport; flags interval; }'));
  assert.ok(lines.includes('add element inet lvsd svc-tcp-10.0.0.1-80-a { 0-1 : 10.0.1.1 . 80, 2-4294967295 : 10.0.1.2 . 81 }'));
  assert.ok(lines.includes('add rule inet lvsd svc-tcp-10.0.0.1-80-a counter meta l4proto tcp dnat ip to numgen inc mod 3 map @svc-tcp-10.0.0.1-80-a'));
  assert.ok(lines.includes('add chain inet lvsd prerouting { type nat hook prerouting priority -100; policy accept; }'));
  assert.ok(lines.includes('add rule inet lvsd postrouting ct status dnat ct original ip daddr @vips4 masquerade'));
  // The vmap element goes straight to the slot chain: one chain per service.
  assert.ok(lines.includes('add element inet lvsd svc4 { 10.0.0.1 . tcp . 80 : goto svc-tcp-10.0.0.1-80-a }'));
  assert.deepEqual(lines.filter((l) => l.startsWith('add chain inet lvsd svc-')), ['add chain inet lvsd svc-tcp-10.0.0.1-80-a']);
  // A name nft would read as something else is refused, not written.
  assert.throws(() => nftText([{ add: { table: { family: 'inet', name: 'x; flush ruleset' } } }]), /lvsd writes only/);
});

test('property: fullText writes exactly nftText(fullCommands(m, true)), and a fresh program the same but for the slot maps\' elements, which it sends by netlink, for every kind of service', () => {
  const server = fc.record({ host: fc.integer({ min: 1, max: 5 }), weight: fc.integer({ min: 0, max: 3 }) });
  const service = fc.record({
    n: fc.integer({ min: 1, max: 6 }),
    family: fc.constantFrom(4 as const, 6 as const),
    kind: fc.constantFrom('tcp', 'udp', 'fwmark'),
    scheduler: fc.constantFrom('rr', 'wrr', 'sh', 'dh', 'mh', 'fo' as const),
    hashPort: fc.boolean(),
    persistent: fc.boolean(),
    keepPort: fc.boolean(),
    servers: fc.uniqueArray(server, { selector: (s) => s.host, maxLength: 4 }),
  });
  fc.assert(fc.property(fc.boolean(), fc.uniqueArray(service, { selector: (s) => `${s.n}/${s.family}/${s.kind === 'fwmark' ? 'f' : 't'}`, maxLength: 5 }), (masquerade, list) => {
    const services = list.map((s): ServiceSpec => {
      const addr = (pre: string, h: number): string => (s.family === 4 ? `10.${pre}.0.${h}` : `fd00:${pre}::${h}`);
      const realServers = s.servers.map((x) => rs(addr('1', x.host), s.keepPort ? 0 : 8080, x.weight));
      const base = { family: s.family, scheduler: s.scheduler, realServers, ...(s.hashPort ? { schedulerFlags: [s.scheduler === 'mh' ? 'mh-port' as const : 'sh-port' as const] } : {}), ...(s.persistent ? { persistence: { timeoutSec: 60, netmask: '255.255.255.255' } } : {}) };
      if (s.kind === 'fwmark') return { ...base, id: `fwmark:${s.family}:${s.n}`, protocol: 'tcp', fwmark: s.n };
      const a = addr('0', s.n);
      return { ...base, id: `${s.kind}:${s.family === 6 ? `[${a}]` : a}:80`, protocol: s.kind, address: a, port: 80, realServers: realServers.map((r) => ({ ...r, port: r.port === 0 ? 80 : r.port })) };
    });
    const m = tableModel({ services }, { masquerade, table: 'lvsd' });
    const { text, commands } = fullText(m);
    const cmds = fullCommands(m, true);
    assert.equal(text, nftText(cmds));
    assert.equal(commands, cmds.length);
    const fresh = freshProgram(m);
    const slotMaps = new Set([...m.services.values()].filter((x) => x.slots.length > 0).map((x) => slotChainName(x.chain, 'a')));
    const isElements = (line: string): boolean => {
      const set = /^add element inet lvsd (\S+) /.exec(line)?.[1] ?? '';
      return slotMaps.has(set) || VMAPS.has(set);
    };
    assert.equal(fresh.structure, text.split('\n').filter((line) => !isElements(line)).join('\n'));
    assert.equal(fresh.commands, commands);
    const ops = fresh.batches.flat();
    const want = [...m.services.values()].filter((x) => x.slots.length > 0).flatMap((x) => slotElementOps('add', 'lvsd', slotChainName(x.chain, 'a'), x.slots));
    assert.deepEqual(ops.filter((op) => !VMAPS.has(setOf(op))), want);
    // Every service's goto, to its slot chain, in the map it belongs to.
    const gotos = ops.filter((op) => VMAPS.has(setOf(op))).flatMap((op) => gotoChains(op).map((c) => `${setOf(op)} ${c}`));
    assert.deepEqual(gotos.sort(), [...m.services.values()].map((x) => `${vmapName(x)} ${slotChainName(x.chain, 'a')}`).sort());
  }));
});

test('a fresh program\'s netlink batches: a service whole in one (its slot map and its goto), each under FRESH_BATCH_BYTES when its maps fit', () => {
  // Maglev maps of a few thousand ranges: ~100 KB of messages each.
  const services = Array.from({ length: 12 }, (_, i) => svc({ id: `tcp:10.0.0.${i + 1}:80`, address: `10.0.0.${i + 1}`, scheduler: 'mh', realServers: Array.from({ length: 8 }, (_, j) => rs(`10.0.1.${j + 1}`, 80)) }));
  const m = tableModel({ services });
  const fresh = freshProgram(m);
  assert.ok(fresh.batches.length > 1, `${fresh.batches.length} batch(es)`);
  const seen = new Set<string>();
  for (const batch of fresh.batches) {
    assert.ok(batch.reduce((n, op) => n + op.payload.length + 20, 0) <= FRESH_BATCH_BYTES);
    const maps = new Set(batch.map(setOf).filter((set) => !VMAPS.has(set)));
    for (const set of maps) {
      assert.ok(!seen.has(set), `${set} split between two batches`);
      seen.add(set);
    }
    assert.deepEqual(batch.filter((op) => VMAPS.has(setOf(op))).flatMap(gotoChains).sort(), [...maps].sort(), 'the gotos of the batch\'s services, and only those');
  }
  assert.equal(seen.size, services.length);
});
