// The nftables renderer, parser and diff: pure, against the model and nft's own JSON forms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UnsupportedByDataplane, type DesiredTable, type RealServerSpec, type ServiceSpec } from '../../daemon/dataplane/types.js';
import { canonicalAddress, fingerprint, HASH_SLOTS, hashSlots, ModelCache, sameService, serviceModel, sameSpec, slotChainName, tableModel, type NftDispatch, type NftService, type NftTableModel } from '../../daemon/dataplane/nftables/model.js';
import { fullCommands, fullLive, planPhases, planUpdate, serviceCommands, serviceRule, slotMapsIn, slotMapsOf, SLOT_TOP, type NftCommand, type UpdatePlan } from '../../daemon/dataplane/nftables/render.js';
import { tableDelta } from '../../daemon/dataplane/nftables/delta.js';
import { fastChanges } from '../../daemon/dataplane/nftables/fast-path.js';
import { goneTargets } from '../../daemon/dataplane/nftables/conntrack.js';
import { parseTable } from '../../daemon/dataplane/nftables/parse.js';

function rs(address: string, port: number, weight = 1, method: RealServerSpec['method'] = 'nat'): RealServerSpec {
  const id = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  return { id, address, port, weight, method };
}

function svc(partial: Partial<ServiceSpec> & { realServers: RealServerSpec[] }): ServiceSpec {
  return { id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr', ...partial };
}

/** What `nft -j list table` prints for a model: the add commands turned into listed objects, as nft does. */
function listing(m: NftTableModel): unknown {
  const out: unknown[] = [{ metainfo: { version: '1.0.6', json_schema_version: 1 } }];
  const elems = new Map<string, unknown[]>();
  const objects: Record<string, unknown>[] = [];
  for (const cmd of fullCommands(m, false)) {
    const add = (cmd as { add: Record<string, Record<string, unknown>> }).add;
    const [kind, body] = Object.entries(add)[0] as [string, Record<string, unknown>];
    if (kind === 'element') {
      const list = elems.get(String(body.name)) ?? [];
      list.push(...(body.elem as unknown[]));
      elems.set(String(body.name), list);
    } else {
      objects.push({ [kind]: { ...body } });
    }
  }
  for (const o of objects) {
    const [kind, body] = Object.entries(o)[0] as [string, Record<string, unknown>];
    if ((kind === 'map' || kind === 'set') && elems.has(String(body.name))) body.elem = elems.get(String(body.name));
    out.push(o);
  }
  return { nftables: out };
}

test('round robin: one slot per real server, in id order, numgen inc', () => {
  const m = serviceModel(svc({ realServers: [rs('10.0.1.2', 80), rs('10.0.1.1', 8080), rs('10.0.1.3', 80)] }));
  assert.equal(m.chain, 'svc-tcp-10.0.0.1-80');
  assert.deepEqual(m.dispatch, { kind: 'numgen' });
  assert.equal(m.mod, 3);
  assert.deepEqual(m.slots.map((s) => [s.from, s.to, s.address, s.port]), [
    [0, 0, '10.0.1.1', 8080], [1, 1, '10.0.1.2', 80], [2, 2, '10.0.1.3', 80],
  ]);
});

test('rr ignores weights other than 0; wrr gives each server a range as wide as its reduced weight', () => {
  const servers = [rs('10.0.1.1', 80, 200), rs('10.0.1.2', 80, 100), rs('10.0.1.3', 80, 0)];
  const rr = serviceModel(svc({ scheduler: 'rr', realServers: servers }));
  assert.equal(rr.mod, 2);
  const wrr = serviceModel(svc({ scheduler: 'wrr', realServers: servers }));
  assert.equal(wrr.mod, 3);
  assert.deepEqual(wrr.slots.map((s) => [s.from, s.to, s.address]), [[0, 1, '10.0.1.1'], [2, 2, '10.0.1.2']]);
  const rule = JSON.stringify(serviceCommands('lvsd', wrr));
  assert.match(rule, /"range":\[0,1\]/);
  // The last range runs to the top of the slot space (render.ts, slotElements, says why).
  assert.match(rule, new RegExp(`"range":\\[2,${SLOT_TOP}\\]`));
  assert.match(rule, /"numgen":\{"mode":"inc","mod":3/);
  assert.match(rule, /"map":\{"key":\{"numgen":\{"mode":"inc","mod":3,"offset":0\}\},"data":"@svc-tcp-10\.0\.0\.1-80-a"\}/, 'the rule looks up the named slot map');
  assert.doesNotMatch(rule, /10\.0\.1\.3/, 'weight 0 stays out of the map');
});

test('weight 0 everywhere leaves a chain that only counts: new connections fall through to the director', () => {
  const m = serviceModel(svc({ realServers: [rs('10.0.1.1', 80, 0)] }));
  assert.equal(m.mod, 0);
  assert.deepEqual(m.slots, []);
  const rule = serviceRule('lvsd', m) as { add: { rule: { expr: unknown[] } } };
  assert.equal(rule.add.rule.expr.length, 1);
});

test('sh hashes the source address with a seed that is stable per service; sh-port adds the source port', () => {
  const a = serviceModel(svc({ scheduler: 'sh', realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] }));
  const b = serviceModel(svc({ scheduler: 'sh', realServers: [rs('10.0.1.1', 80)] }));
  const seedOf = (d: NftDispatch): number => (d.kind === 'jhash' ? d.seed : -1);
  const fieldsOf = (d: NftDispatch): string[] => (d.kind === 'jhash' ? d.fields : []);
  assert.equal(a.dispatch.kind, 'jhash');
  assert.equal(seedOf(a.dispatch), seedOf(b.dispatch));
  assert.deepEqual(fieldsOf(a.dispatch), ['saddr']);
  const p = serviceModel(svc({ scheduler: 'mh', schedulerFlags: ['mh-port'], realServers: [rs('10.0.1.1', 80)] }));
  assert.deepEqual(fieldsOf(p.dispatch), ['saddr', 'sport']);
  const other = serviceModel(svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', scheduler: 'sh', realServers: [rs('10.0.1.1', 80)] }));
  assert.notEqual(seedOf(other.dispatch), seedOf(a.dispatch));
  const rule = JSON.stringify(serviceCommands('lvsd', p));
  assert.match(rule, /"jhash"/);
  assert.match(rule, /"l4proto"/, 'hashing a port needs a transport match');
});

test('persistence without a hashing scheduler hashes the source (pins a client)', () => {
  const m = serviceModel(svc({ scheduler: 'wlc', persistence: { timeoutSec: 300, netmask: '255.255.255.255' }, realServers: [rs('10.0.1.1', 80)] }));
  assert.equal(m.dispatch.kind, 'jhash');
});

test('fo keeps only the highest-weight real server', () => {
  const m = serviceModel(svc({ scheduler: 'fo', realServers: [rs('10.0.1.1', 80, 5), rs('10.0.1.2', 80, 9), rs('10.0.1.3', 80, 9)] }));
  assert.deepEqual(m.slots.map((s) => s.address), ['10.0.1.2']);
});

test('IPv6 services: canonical addresses, ip6 dnat, chain name without colons', () => {
  const m = serviceModel(svc({ id: 'tcp:[fd00::1]:80', family: 6, address: 'fd00:0:0::1', realServers: [rs('FD00:0::11', 80)] }));
  assert.equal(m.chain, 'svc-tcp-fd00__1-80');
  assert.equal(m.slots[0]?.address, 'fd00::11');
  assert.match(JSON.stringify(serviceCommands('lvsd', m)), /"dnat":\{"family":"ip6"/);
  assert.match(JSON.stringify(serviceCommands('lvsd', m)), /"typeof":"numgen inc mod 1 : ip6 daddr \. th dport"/);
  assert.equal(canonicalAddress('10.1.2.3'), '10.1.2.3');
});

test('fwmark services match the mark; real servers without a port keep the packet port', () => {
  const m = serviceModel({ id: 'fwmark:4:7', family: 4, protocol: 'tcp', fwmark: 7, scheduler: 'rr', realServers: [rs('10.0.1.1', 0), rs('10.0.1.2', 0)] });
  assert.equal(m.chain, 'svc-fwmark4-7');
  const rule = JSON.stringify(serviceCommands('lvsd', m));
  assert.doesNotMatch(rule, /concat/);
  assert.match(rule, /"typeof":"numgen inc mod 1 : ip daddr"/);
  assert.throws(
    () => serviceModel({ id: 'fwmark:4:8', family: 4, protocol: 'tcp', fwmark: 8, scheduler: 'rr', realServers: [rs('10.0.1.1', 0), rs('10.0.1.2', 80)] }),
    UnsupportedByDataplane,
  );
});

test('DR and TUN are refused with UnsupportedByDataplane naming the service and the real server', () => {
  for (const method of ['dr', 'tun'] as const) {
    assert.throws(
      () => tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80, 1, method)] })] }),
      (e: unknown) => e instanceof UnsupportedByDataplane && e.dataplane === 'nftables' && /tcp:10\.0\.0\.1:80 → 10\.0\.1\.2:80/.test(e.message) && e.message.includes(method.toUpperCase()),
    );
  }
});

test('two services with the same address, protocol and port are refused', () => {
  const a = svc({ realServers: [] });
  assert.throws(() => tableModel({ services: [a, { ...a, id: 'dup' }] }), /same address, protocol and port/);
});

test('full render: fixed part, one slot chain + vmap element going to it per service, masquerade sets only when asked', () => {
  const desired: DesiredTable = {
    services: [
      svc({ realServers: [rs('10.0.1.1', 80)] }),
      svc({ id: 'udp:[fd00::1]:53', family: 6, protocol: 'udp', address: 'fd00::1', port: 53, realServers: [rs('fd00::11', 53)] }),
    ],
  };
  const plain = JSON.stringify(fullCommands(tableModel(desired), false));
  assert.doesNotMatch(plain, /postrouting|masquerade|vips4/);
  assert.match(plain, /"hook":"prerouting"/);
  assert.match(plain, /"goto":\{"target":"svc-udp-fd00__1-53-a"\}/);
  assert.doesNotMatch(plain, /"name":"svc-udp-fd00__1-53"/);
  const masq = fullCommands(tableModel(desired, { masquerade: true }), true);
  const text = JSON.stringify(masq);
  assert.match(text, /"masquerade":null/);
  assert.match(text, /"name":"vips6","elem":\["fd00::1"\]/);
  assert.ok('delete' in (masq[1] ?? {}), 'replace deletes the old table inside the same transaction');
});

test('parse(listing(model)) gives the model back, with no problems', () => {
  for (const masquerade of [false, true]) {
    const m = tableModel({
      services: [
        svc({ scheduler: 'wrr', realServers: [rs('10.0.1.1', 80, 3), rs('10.0.1.2', 80, 1)] }),
        svc({ id: 'tcp:[fd00::1]:443', family: 6, address: 'fd00::1', port: 443, scheduler: 'sh', realServers: [rs('fd00::11', 443)] }),
        { id: 'fwmark:4:7', family: 4, protocol: 'tcp', fwmark: 7, scheduler: 'rr', realServers: [rs('10.0.1.1', 0)] },
        svc({ id: 'tcp:10.0.0.9:80', address: '10.0.0.9', realServers: [] }),
      ],
    }, { masquerade });
    const parsed = parseTable(listing(m), 'lvsd', masquerade);
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual([parsed.live, parsed.leftovers], [fullLive(m), []]);
    assert.equal(parsed.services.size, m.services.size);
    for (const [chain, s] of m.services) {
      const p = parsed.services.get(chain);
      assert.ok(p !== undefined && sameService(s, p), chain);
    }
  }
});

test('parse reports a missing table, a missing hook chain and an orphan chain', () => {
  assert.deepEqual(parseTable({ nftables: [] }, 'lvsd', false).problems, ['table inet lvsd missing']);
  const m = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] })] });
  const doc = listing(m) as { nftables: Record<string, Record<string, unknown>>[] };
  const noOutput = { nftables: doc.nftables.filter((o) => o.chain?.name !== 'output' && o.rule?.chain !== 'output') };
  assert.ok(parseTable(noOutput, 'lvsd', false).problems.some((p) => p.includes('output')));
  const orphan = { nftables: [...doc.nftables, { chain: { family: 'inet', table: 'lvsd', name: 'svc-tcp-10.0.0.2-80' } }] };
  assert.ok(parseTable(orphan, 'lvsd', false).problems.some((p) => p.includes('not reached')));
  assert.throws(() => parseTable({}, 'lvsd', false), /nftables/);
});

test('parse reads nft\'s own printed forms (folded l4proto match, tcp payload for th)', () => {
  const doc = {
    nftables: [
      { table: { family: 'inet', name: 'lvsd' } },
      { map: { name: 'svc6', elem: [[{ concat: ['fd00::1', 'tcp', 80] }, { goto: { target: 'svc-tcp-fd00__1-80' } }]] } },
      { chain: { name: 'svc-tcp-fd00__1-80' } },
      { rule: { chain: 'svc-tcp-fd00__1-80', expr: [
        { counter: { packets: 7, bytes: 420 } },
        { dnat: { family: 'ip6', addr: { map: { key: { jhash: { mod: 2, seed: 4660, expr: { concat: [{ payload: { protocol: 'ip6', field: 'saddr' } }, { payload: { protocol: 'tcp', field: 'sport' } }] } } },
          data: { set: [[1, { concat: ['fd00::2', 80] }], [0, { concat: ['fd00::1', 80] }]] } } } } },
      ] } },
    ],
  };
  const p = parseTable(doc, 'lvsd', false);
  const s = p.services.get('svc-tcp-fd00__1-80');
  assert.deepEqual(s?.dispatch, { kind: 'jhash', fields: ['saddr', 'sport'], seed: 4660 });
  assert.deepEqual(s.slots.map((x) => x.address), ['fd00::1', 'fd00::2']);
  assert.deepEqual(p.counters.get('svc-tcp-fd00__1-80'), { packets: 7, bytes: 420 });
  // The DNAT rule sits in the service chain itself (lvsd's older one-chain layout): no slot side, so the
  // next plan moves the service into a slot chain even if nothing else changed.
  assert.equal(p.live.size, 0);
  const m = { table: 'lvsd', masquerade: false, services: new Map([...p.services]), live: new Map() };
  assert.match(JSON.stringify(planUpdate({ ...m, live: p.live }, m, sameService).switch), /"goto":\{"target":"svc-tcp-fd00__1-80-a"\}/);
});

type J = Record<string, unknown>;

/**
 * listing(m) as lvsd wrote it before stop 29's second session: each vmap element goes to a dispatch chain named chainName,
 * whose one rule goes to the slot chain.
 */
function dispatchListing(m: NftTableModel): unknown {
  const out: J[] = [];
  for (const o of (listing(m) as { nftables: J[] }).nftables) {
    const map = o.map as J | undefined;
    if (map !== undefined && /^(svc|fwmark)[46]$/.test(String(map.name)) && Array.isArray(map.elem)) {
      out.push({ map: { ...map, elem: (map.elem as [unknown, { goto: { target: string } }][]).map(([k, v]) => [k, { goto: { target: v.goto.target.slice(0, -2) } }]) } });
    } else out.push(o);
  }
  for (const chain of m.services.keys()) {
    out.push({ chain: { family: 'inet', table: m.table, name: chain } });
    out.push({ rule: { family: 'inet', table: m.table, chain, expr: [{ goto: { target: slotChainName(chain, 'a') } }] } });
  }
  return { nftables: out };
}

/** The kernel's table as nft would list it, changed command by command: chains with their rules, map elements. */
class SimTable {
  readonly chains = new Map<string, J[]>();
  readonly elems = new Map<string, Map<string, unknown[]>>();
  private readonly fixed: J[] = [];
  private readonly hooked = new Map<string, J>();

  constructor(doc: unknown) {
    for (const o of (doc as { nftables: J[] }).nftables) {
      const [kind, body] = Object.entries(o)[0] as [string, J];
      if (kind === 'chain') {
        this.chains.set(String(body.name), []);
        this.hooked.set(String(body.name), body);
      } else if (kind === 'rule') this.chains.get(String(body.chain))?.push(body);
      else if (kind === 'map' || kind === 'set') {
        this.elems.set(String(body.name), new Map(((body.elem ?? []) as unknown[]).map((e) => [JSON.stringify(Array.isArray(e) ? e[0] : e), [e]])));
        this.fixed.push(o);
      } else this.fixed.push(o);
    }
  }

  /** Runs one transaction's commands; returns the chains whose rules it touched. */
  run(cmds: NftCommand[]): Set<string> {
    const touched = new Set<string>();
    for (const cmd of cmds) {
      const [verb, body] = Object.entries(cmd)[0] as [string, Record<string, J>];
      const [kind, o] = Object.entries(body)[0] as [string, J];
      if (kind === 'chain') {
        const name = String(o.name);
        if (verb === 'add' && !this.chains.has(name)) this.chains.set(name, []);
        if (verb === 'flush' || verb === 'delete') {
          assert.ok(this.chains.has(name), `${verb} of missing chain ${name}`);
          touched.add(name);
        }
        if (verb === 'flush') this.chains.set(name, []);
        if (verb === 'delete') {
          assert.deepEqual(this.chains.get(name), [], `delete of non-empty chain ${name}`);
          // The kernel refuses to delete a chain that a rule or a vmap element still goes to (EBUSY).
          for (const [other, rules] of this.chains) assert.ok(!rules.some((r) => JSON.stringify(r.expr).includes(`"target":"${name}"`)), `delete of chain ${name} that ${other} still goes to`);
          for (const [set, elems] of this.elems) assert.ok(![...elems.values()].some((e) => JSON.stringify(e).includes(`"target":"${name}"`)), `delete of chain ${name} that map ${set} still goes to`);
          this.chains.delete(name);
        }
      } else if (kind === 'rule') {
        const chain = this.chains.get(String(o.chain));
        assert.ok(chain !== undefined, `rule for missing chain ${String(o.chain)}`);
        chain.push(o);
        touched.add(String(o.chain));
      } else if (kind === 'map') {
        const name = String(o.name);
        if (verb === 'add' && !this.elems.has(name)) {
          this.elems.set(name, new Map());
          this.fixed.push({ map: { family: o.family, table: o.table, name, type: 'integer', map: 'ipv4_addr . inet_service', flags: o.flags } });
        }
        if (verb === 'delete') {
          assert.ok(this.elems.has(name), `delete of missing map ${name}`);
          for (const [chain, rules] of this.chains) assert.ok(!rules.some((r) => JSON.stringify(r.expr).includes(`"@${name}"`)), `delete of map ${name} still used in ${chain}`);
          this.elems.delete(name);
          this.fixed.splice(this.fixed.findIndex((f) => (f.map as J | undefined)?.name === name), 1);
        }
        touched.add(`map:${name}`);
      } else if (kind === 'element') {
        const set = this.elems.get(String(o.name));
        assert.ok(set !== undefined);
        for (const e of o.elem as unknown[]) {
          const key = JSON.stringify(Array.isArray(e) ? e[0] : e);
          if (verb === 'add') set.set(key, [e]);
          else assert.ok(set.delete(key), `delete of missing element ${key}`);
        }
      }
    }
    return touched;
  }

  /** Chains a packet can reach from the vmaps. */
  reachable(): Set<string> {
    const out = new Set<string>();
    const walk = (name: string): void => {
      if (out.has(name)) return;
      out.add(name);
      for (const r of this.chains.get(name) ?? []) {
        const target = (r.expr as J[]).map((e) => (e.goto as { target?: string } | undefined)?.target).find((x) => x !== undefined);
        if (target !== undefined) walk(target);
      }
    };
    for (const name of ['svc4', 'svc6', 'fwmark4', 'fwmark6']) {
      for (const [e] of this.elems.get(name)?.values() ?? []) walk(((e as unknown[])[1] as { goto: { target: string } }).goto.target);
    }
    return out;
  }

  listing(): unknown {
    const out: J[] = [];
    for (const o of this.fixed) {
      const [kind, body] = Object.entries(o)[0] as [string, J];
      const elems = this.elems.get(String(body.name));
      out.push(elems === undefined ? o : { [kind]: { ...body, elem: [...elems.values()].flat() } });
    }
    for (const [name, rules] of this.chains) {
      out.push({ chain: this.hooked.get(name) ?? { family: 'inet', table: 'lvsd', name } });
      for (const r of rules) out.push({ rule: r });
    }
    return { nftables: out };
  }
}

/**
 * Runs a plan on the listing of `from` and checks what makes it safe under traffic: staging and retiring
 * touch no chain a packet can reach, and the switch creates and removes no DNAT map.
 */
function runPlan(sim: SimTable, plan: UpdatePlan): void {
  const outside = (phase: string, touched: Set<string>, reach: Set<string>): void => {
    // A slot map is named after its slot chain: touching it while that chain is reachable is as unsafe.
    for (const c of touched) assert.ok(!reach.has(c.replace(/^map:/, '')), `${phase} touches reachable ${c}`);
  };
  outside('stage', sim.run(plan.stage), sim.reachable());
  const before = new Map([...sim.chains].map(([k, v]) => [k, JSON.stringify(v.filter((r) => JSON.stringify(r.expr).includes('dnat')))]));
  const switched = sim.run(plan.switch);
  assert.deepEqual([...switched].filter((c) => c.startsWith('map:')), [], 'the switch creates or removes no slot map');
  for (const [k, v] of sim.chains) {
    const maps = JSON.stringify(v.filter((r) => JSON.stringify(r.expr).includes('dnat')));
    if (before.has(k)) assert.equal(maps, before.get(k), `the switch changed the DNAT map in ${k}`);
    else assert.equal(maps, '[]', `the switch created ${k} with a DNAT map`);
  }
  const reach = sim.reachable();
  outside('retire', sim.run(plan.retire), reach);
}

test('plan: nothing for an unchanged table; a change stages the other slot chain, replaces the vmap element, retires the old chain', () => {
  const a = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] })] });
  const fromA = { ...a, live: fullLive(a) };
  assert.deepEqual(planPhases(planUpdate(fromA, a, sameService)), []);
  const b = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80, 0)] })] });
  const shape = (cmds: NftCommand[]): string[] => cmds.map((x) => `${Object.keys(x)[0] ?? ''} ${JSON.stringify(Object.values(x)[0]).replace(/.*"(?:name|chain)":"([^"]+)".*/, '$1')}`);
  const change = planUpdate(fromA, b, sameService);
  // chain, flush, its slot map, the map's elements, the rule.
  assert.deepEqual(shape(change.stage), ['add svc-tcp-10.0.0.1-80-b', 'flush svc-tcp-10.0.0.1-80-b', 'add svc-tcp-10.0.0.1-80-b', 'add svc-tcp-10.0.0.1-80-b', 'add svc-tcp-10.0.0.1-80-b']);
  // The same key deleted and added in one transaction, now going to the staged slot chain.
  assert.deepEqual(shape(change.switch), ['delete svc4', 'add svc4']);
  assert.match(JSON.stringify(change.switch[1]), /"goto":\{"target":"svc-tcp-10\.0\.0\.1-80-b"\}/);
  assert.deepEqual(shape(change.retire), ['flush svc-tcp-10.0.0.1-80-a', 'delete svc-tcp-10.0.0.1-80-a', 'delete svc-tcp-10.0.0.1-80-a']);
  assert.ok('map' in ((change.retire[2] as { delete: object }).delete), 'the old slot map goes with its chain');
  assert.deepEqual([...change.live], [['svc-tcp-10.0.0.1-80', 'b']]);
  // And back: from b to a again.
  assert.match(JSON.stringify(planUpdate({ ...b, live: change.live }, a, sameService).switch), /-80-a"/);
  const c = tableModel({ services: [svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] });
  const swap = planUpdate(fromA, c, sameService);
  assert.deepEqual(shape(swap.switch), ['add svc4', 'delete svc4']);
  assert.deepEqual(shape(swap.retire), ['flush svc-tcp-10.0.0.1-80-a', 'delete svc-tcp-10.0.0.1-80-a', 'delete svc-tcp-10.0.0.1-80-a']);
});

test('plan keeps the masquerade sets in step: added before the switch, removed after it', () => {
  const a = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] })] }, { masquerade: true });
  const b = tableModel({ services: [svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] }, { masquerade: true });
  const plan = planUpdate({ ...a, live: fullLive(a) }, b, sameService);
  assert.match(JSON.stringify(plan.stage), /"add":\{"element":\{"family":"inet","table":"lvsd","name":"vips4","elem":\["10\.0\.0\.2"\]/);
  assert.match(JSON.stringify(plan.retire), /"delete":\{"element":\{"family":"inet","table":"lvsd","name":"vips4","elem":\["10\.0\.0\.1"\]/);
});

test('parse: an update stopped after its stage leaves a leftover slot chain, which the next plan reuses or retires', () => {
  const a = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] })] });
  const b = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] })] });
  const sim = new SimTable(listing(a));
  sim.run(planUpdate({ ...a, live: fullLive(a) }, b, sameService).stage);
  const k = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual(k.problems, []);
  assert.deepEqual(k.leftovers, ['svc-tcp-10.0.0.1-80-b']);
  assert.deepEqual([...k.live], [['svc-tcp-10.0.0.1-80', 'a']]);
  const from = { ...a, services: k.services, live: k.live };
  // Unchanged after all: the leftover goes.
  assert.deepEqual(planUpdate(from, a, sameService, k.leftovers, k.maps).retire.map((c) => Object.keys(c)[0]), ['flush', 'delete', 'delete']);
  // Changed: the leftover is the chain staged again (its map made anew), not retired.
  const again = planUpdate(from, b, sameService, k.leftovers, k.maps);
  assert.doesNotMatch(JSON.stringify(again.retire), /-80-b"/);
  runPlan(sim, again);
  const done = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual([done.problems, done.leftovers], [[], []]);
});

test('upgrade from the dispatch-chain layout: the elements go straight to the live slot chains, the dispatch chains go', () => {
  const a = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] }), svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', scheduler: 'sh', realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] })] });
  const sim = new SimTable(dispatchListing(a));
  const k = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual([k.problems, k.leftovers], [[], []]);
  assert.deepEqual([...k.oldLayout].sort(), [...a.services.keys()].sort());
  assert.deepEqual([...k.live], [...fullLive(a)]);
  for (const [chain, s] of a.services) assert.ok(sameService(s, k.services.get(chain) ?? s) && k.services.has(chain), chain);
  const from = { ...a, services: k.services, live: k.live, oldLayout: k.oldLayout };
  // Nothing else changed: nothing staged, each element replaced, each dispatch chain removed; the slot chains stay.
  const plan = planUpdate(from, a, sameService, k.leftovers, k.maps);
  assert.deepEqual(plan.stage, []);
  assert.deepEqual(plan.switch.map((c) => Object.keys(c)[0]), ['delete', 'add', 'delete', 'add']);
  assert.deepEqual(plan.retire.map((c) => `${Object.keys(c)[0] ?? ''} ${JSON.stringify(c).replace(/.*"name":"([^"]+)".*/, '$1')}`), ['flush svc-tcp-10.0.0.1-80', 'delete svc-tcp-10.0.0.1-80', 'flush svc-tcp-10.0.0.2-80', 'delete svc-tcp-10.0.0.2-80']);
  assert.deepEqual(fastChanges(from, a).ops, [], 'the fast path leaves an older layout to the plan');
  runPlan(sim, plan);
  const done = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual([done.problems, done.leftovers, [...done.oldLayout]], [[], [], []]);
  assert.deepEqual([...done.live], [...plan.live]);
  assert.deepEqual([...sim.chains.keys()].filter((c) => c.startsWith('svc-')).sort(), ['svc-tcp-10.0.0.1-80-a', 'svc-tcp-10.0.0.2-80-a']);
});

test('upgrade with a change, stopped after its switch: the dispatch chain is a leftover the next plan removes first', () => {
  const a = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] })] });
  const b = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] })] });
  const sim = new SimTable(dispatchListing(a));
  const k = parseTable(sim.listing(), 'lvsd', false);
  const plan = planUpdate({ ...a, services: k.services, live: k.live, oldLayout: k.oldLayout }, b, sameService, k.leftovers, k.maps);
  assert.match(JSON.stringify(plan.switch), /"goto":\{"target":"svc-tcp-10\.0\.0\.1-80-b"\}/);
  sim.run(plan.stage);
  sim.run(plan.switch);
  const half = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual(half.problems, []);
  assert.deepEqual([...half.oldLayout], []);
  assert.deepEqual(half.leftovers, ['svc-tcp-10.0.0.1-80', 'svc-tcp-10.0.0.1-80-a']);
  // The dispatch chain's goto holds slot chain a: it must go before a does (SimTable checks the order).
  const again = planUpdate({ ...b, services: half.services, live: half.live }, b, sameService, half.leftovers, half.maps);
  runPlan(sim, again);
  const done = parseTable(sim.listing(), 'lvsd', false);
  assert.deepEqual([done.problems, done.leftovers], [[], []]);
  assert.deepEqual([...done.live], [['svc-tcp-10.0.0.1-80', 'b']]);
});

test('property: a plan from a to b is safe under traffic at every step and lands exactly on b', () => {
  const server = fc.record({ host: fc.integer({ min: 1, max: 6 }), weight: fc.integer({ min: 0, max: 4 }) });
  const service = fc.record({ vip: fc.integer({ min: 1, max: 5 }), sched: fc.constantFrom('rr', 'wrr', 'sh' as const), servers: fc.uniqueArray(server, { selector: (s) => s.host, maxLength: 4 }) });
  const table = fc.record({ masquerade: fc.boolean(), list: fc.uniqueArray(service, { selector: (s) => s.vip, maxLength: 4 }) });
  const model = (t: { masquerade: boolean; list: { vip: number; sched: 'rr' | 'wrr' | 'sh'; servers: { host: number; weight: number }[] }[] }, masquerade: boolean): NftTableModel =>
    tableModel({ services: t.list.map((s) => svc({ id: `tcp:10.0.0.${s.vip}:80`, address: `10.0.0.${s.vip}`, scheduler: s.sched, realServers: s.servers.map((x) => rs(`10.0.1.${x.host}`, 80, x.weight)) })) }, { masquerade });
  fc.assert(fc.property(table, table, table, fc.boolean(), (ta, tb, tc, older) => {
    // a → b → c, so that services start on either slot side; a in the dispatch-chain layout (stop 29's first session) or in this one.
    const a = model(ta, ta.masquerade);
    const b = model(tb, ta.masquerade);
    const c = model(tc, ta.masquerade);
    const sim = new SimTable(older ? dispatchListing(a) : listing(a));
    let live = fullLive(a);
    let oldLayout = new Set(older ? a.services.keys() : []);
    for (const [from, to] of [[a, b], [b, c]] as const) {
      const plan = planUpdate({ ...from, live, oldLayout }, to, sameService);
      oldLayout = new Set();
      runPlan(sim, plan);
      live = plan.live;
      const k = parseTable(sim.listing(), 'lvsd', ta.masquerade);
      assert.deepEqual([k.problems, k.leftovers], [[], []]);
      assert.deepEqual([...k.live].sort(), [...live].sort());
      assert.deepEqual([...k.services.keys()].sort(), [...to.services.keys()].sort());
      // No slot map is left behind: exactly one per live slot chain that dispatches.
      assert.deepEqual([...(k.maps ?? [])].filter((n) => n.startsWith('svc-')).sort(), [...slotMapsOf({ ...to, live })].sort());
      for (const [chain, s] of to.services) assert.ok(sameService(s, k.services.get(chain) ?? s) && k.services.has(chain), chain);
    }
  }));
});

test('property: an apply that looks only at tableDelta\'s services (slot maps rewritten in place, nft for the rest) lands where a full render would', () => {
  type Svc = { vip: number; sched: 'rr' | 'wrr' | 'sh'; servers: { host: number; weight: number }[] };
  const server = fc.record({ host: fc.integer({ min: 1, max: 6 }), weight: fc.integer({ min: 0, max: 4 }) });
  const service = fc.record({ vip: fc.integer({ min: 1, max: 8 }), sched: fc.constantFrom('rr', 'wrr', 'sh' as const), servers: fc.uniqueArray(server, { selector: (s) => s.host, maxLength: 4 }) });
  // A change keeps, drops or rewrites each service (same VIP), and may add some: most services stay as they were.
  const edit = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant('keep' as const) }, fc.constant('drop' as const), service), { maxLength: 8 });
  const spec = (s: Svc): ServiceSpec => svc({ id: `tcp:10.0.0.${s.vip}:80`, address: `10.0.0.${s.vip}`, scheduler: s.sched, realServers: s.servers.map((x) => rs(`10.0.1.${x.host}`, 80, x.weight)) });
  const apply = (list: Svc[], edits: ('keep' | 'drop' | Svc)[], added: Svc[]): Svc[] => {
    const out = list.flatMap((s, i) => {
      const e = edits[i] ?? 'keep';
      return e === 'keep' ? [s] : e === 'drop' ? [] : [{ ...e, vip: s.vip }];
    });
    for (const s of added) if (!out.some((o) => o.vip === s.vip)) out.push(s);
    return out;
  };
  fc.assert(fc.property(fc.boolean(), fc.uniqueArray(service, { selector: (s) => s.vip, maxLength: 5 }), edit, fc.array(service, { maxLength: 2 }), edit, fc.array(service, { maxLength: 2 }),
    (masquerade, la, eb, addb, ec, addc) => {
      const cache = new ModelCache();
      const build = (list: Svc[]): NftTableModel => {
        const m = tableModel({ services: list.map(spec) }, { masquerade }, cache);
        cache.commit();
        return m;
      };
      const lb = apply(la, eb, addb);
      const lists = [la, lb, apply(lb, ec, addc)];
      const a = build(la);
      const sim = new SimTable(listing(a));
      let from: NftTableModel = { ...a, live: fullLive(a) };
      let prev = la;
      for (const list of lists.slice(1)) {
        const to = build(list);
        // tableDelta against a comparison of models built afresh (no shared objects: no `===` shortcut).
        const fresh = (l: Svc[]): Map<string, string> => new Map([...tableModel({ services: l.map(spec) }).services].map(([k, v]) => [k, fingerprint(v)]));
        const [fa, fb] = [fresh(prev), fresh(list)];
        const delta = tableDelta(from, to);
        assert.deepEqual(delta.changed, [...fb.keys()].filter((k) => fa.get(k) !== fb.get(k)));
        assert.deepEqual(delta.removed, [...fa.keys()].filter((k) => !fb.has(k)));
        // Looking at the delta's services only finds what looking at all of them finds.
        const fast = fastChanges(from, to, delta.changed);
        assert.deepEqual(fast, fastChanges(from, to));
        const targets = (chains?: string[]): string[] => goneTargets(from.services, to, chains).map((t) => JSON.stringify(t)).sort();
        assert.deepEqual(targets([...delta.changed, ...delta.removed]), targets());
        // The netlink batch, as the simulator can run it: the live slot map and its rule written anew in place.
        for (const chain of fast.chains) {
          const slot = slotChainName(chain, from.live.get(chain) ?? 'a');
          sim.run([{ flush: { chain: { family: 'inet', table: 'lvsd', name: slot } } }, { delete: { map: { family: 'inet', table: 'lvsd', name: slot } } }, ...serviceCommands('lvsd', to.services.get(chain) ?? serviceModel(spec(list[0] as Svc)), slot)]);
        }
        const written = new Set(fast.chains);
        const plan = planUpdate(from, to, sameService, [], slotMapsIn(from), { changed: delta.changed.filter((c) => !written.has(c)), removed: delta.removed });
        runPlan(sim, plan);
        // The same table as a full render of `to`: services, slot sides, masquerade sets.
        const k = parseTable(sim.listing(), 'lvsd', masquerade);
        const full = new SimTable(listing(to));
        assert.deepEqual([k.problems, k.leftovers], [[], []]);
        assert.deepEqual([...k.services.keys()].sort(), [...to.services.keys()].sort());
        for (const [chain, s] of to.services) assert.ok(sameService(s, k.services.get(chain) ?? s) && k.services.has(chain), chain);
        assert.deepEqual([...k.live].sort(), [...plan.live].sort());
        for (const set of ['vips4', 'vips6', 'marks4', 'marks6']) assert.deepEqual([...(sim.elems.get(set)?.keys() ?? [])].sort(), [...(full.elems.get(set)?.keys() ?? [])].sort(), set);
        from = { ...to, live: plan.live };
        prev = list;
      }
    }));
});

test('ModelCache reuses the model of an unchanged spec and rebuilds a changed one', () => {
  const cache = new ModelCache();
  const a = svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] });
  const first = tableModel({ services: [a] }, {}, cache);
  cache.commit();
  const again = tableModel({ services: [structuredClone(a)] }, {}, cache);
  cache.commit();
  assert.equal(again.services.get('svc-tcp-10.0.0.1-80'), first.services.get('svc-tcp-10.0.0.1-80'));
  const changed = structuredClone(a);
  const second = changed.realServers[1];
  assert.ok(second !== undefined);
  second.weight = 0;
  const third = tableModel({ services: [changed] }, {}, cache);
  assert.notEqual(third.services.get('svc-tcp-10.0.0.1-80'), first.services.get('svc-tcp-10.0.0.1-80'));
  assert.equal(third.services.get('svc-tcp-10.0.0.1-80')?.mod, 1);
  assert.equal(sameSpec(a, changed), false);
  assert.equal(sameSpec(a, structuredClone(a)), true);
});

test('ModelCache: a discarded build leaves the last committed models in use; a commit forgets what its build did not use', () => {
  const cache = new ModelCache();
  const a = svc({ realServers: [rs('10.0.1.1', 80)] });
  const b = svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] });
  const first = tableModel({ services: [a, b] }, {}, cache);
  cache.commit();
  const chain = (m: NftTableModel, n: number): unknown => m.services.get(`svc-tcp-10.0.0.${n}-80`);
  // A build that changes a and then fails (b clashes with a copy of itself): discarded.
  assert.throws(() => tableModel({ services: [{ ...a, realServers: [rs('10.0.1.2', 80)] }, b, { ...b, id: 'tcp:10.0.0.2:80/dup' }] }, {}, cache));
  cache.discard();
  const again = tableModel({ services: [structuredClone(a), structuredClone(b)] }, {}, cache);
  assert.equal(chain(again, 1), chain(first, 1));
  assert.equal(chain(again, 2), chain(first, 2));
  cache.commit();
  // b left this build: the next one that has it builds it anew.
  tableModel({ services: [a] }, {}, cache);
  cache.commit();
  const later = tableModel({ services: [a, b] }, {}, cache);
  assert.equal(chain(later, 1), chain(first, 1));
  assert.notEqual(chain(later, 2), chain(first, 2));
  assert.ok(sameService(chain(later, 2) as NftService, chain(first, 2) as NftService));
});

test('ModelCache settles a spec handed again as the same object by identity, without reading it', () => {
  const cache = new ModelCache();
  const plain = svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] });
  let reads = 0;
  // Counts what a field-by-field comparison would read; the identity path reads nothing of it.
  const spec = Object.defineProperty({ ...plain }, 'realServers', { get: () => { reads++; return plain.realServers; }, enumerable: true });
  const first = tableModel({ services: [spec] }, {}, cache);
  cache.commit();
  const before = reads;
  const again = tableModel({ services: [spec] }, {}, cache);
  cache.commit();
  assert.equal(reads, before);
  assert.equal(again.services.get('svc-tcp-10.0.0.1-80'), first.services.get('svc-tcp-10.0.0.1-80'));
  // An equal new object is compared (and then remembered, so the one after it meets identity too).
  const copy = structuredClone(plain);
  assert.equal(tableModel({ services: [copy] }, {}, cache).services.get('svc-tcp-10.0.0.1-80'), first.services.get('svc-tcp-10.0.0.1-80'));
  cache.commit();
});

test('ModelCache with a parent takes its model of the very same spec object, and models an equal copy itself', () => {
  const parent = new ModelCache();
  const a = svc({ realServers: [rs('10.0.1.1', 80), rs('10.0.1.2', 80)] });
  const whole = tableModel({ services: [a] }, {}, parent);
  parent.commit();
  const child = new ModelCache(parent);
  const shard = tableModel({ services: [a] }, { table: 'lvsd-1' }, child);
  assert.equal(shard.services.get('svc-tcp-10.0.0.1-80'), whole.services.get('svc-tcp-10.0.0.1-80'));
  child.commit();
  // An equal copy is not the parent's object: the child does not compare it with the parent's spec.
  const other = new ModelCache(parent);
  const copy = tableModel({ services: [structuredClone(a)] }, {}, other).services.get('svc-tcp-10.0.0.1-80');
  assert.notEqual(copy, whole.services.get('svc-tcp-10.0.0.1-80'));
  assert.ok(copy !== undefined && sameService(copy, whole.services.get('svc-tcp-10.0.0.1-80') as NftService));
});

test('planUpdate of a table the fast path already wrote: no commands, and the sides kept without a copy', () => {
  const m = tableModel({ services: [svc({ realServers: [rs('10.0.1.1', 80)] }), svc({ id: 'tcp:10.0.0.2:80', address: '10.0.0.2', realServers: [rs('10.0.1.1', 80)] })] }, { masquerade: true });
  const from = { ...m, live: fullLive(m) };
  const plan = planUpdate(from, m, sameService, [], slotMapsIn(from), { changed: [], removed: [] });
  assert.deepEqual(planPhases(plan), []);
  assert.equal(plan.live, from.live);
  // A side `from` does not know is still planned (the service is written).
  const partial = { ...m, live: new Map([...from.live].slice(0, 1)) };
  assert.equal(planPhases(planUpdate(partial, m, sameService)).length > 0, true);
});

test('property: a hashed service\'s slots fill HASH_SLOTS, one at least per real server, the rest within one slot of its weight\'s share', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 65535 }), { minLength: 1, maxLength: 64 }), (weights) => {
      const n = hashSlots(weights, HASH_SLOTS);
      assert.equal(n.reduce((a, x) => a + x, 0), HASH_SLOTS);
      const total = weights.reduce((a, w) => a + w, 0);
      n.forEach((x, i) => {
        assert.ok(x >= 1);
        const share = 1 + ((HASH_SLOTS - weights.length) * (weights[i] ?? 0)) / total;
        assert.ok(Math.abs(x - share) < 1, `${String(x)} slots for a share of ${String(share)}`);
      });
      // And the model: the ranges tile [0, HASH_SLOTS - 1] in the order of the real servers' ids.
      const m = serviceModel(svc({ scheduler: 'sh', realServers: weights.map((w, i) => rs(`10.0.${String(i >> 8)}.${String((i & 255) + 1)}`, 80, w)) }));
      assert.equal(m.mod, HASH_SLOTS);
      m.slots.forEach((s, i) => {
        assert.equal(s.from, i === 0 ? 0 : (m.slots[i - 1]?.to ?? NaN) + 1);
      });
      assert.equal(m.slots.at(-1)?.to, HASH_SLOTS - 1);
    }),
    { numRuns: 200, seed: 28 },
  );
});
