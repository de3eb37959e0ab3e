// The native read's lines (lvsd_ipvs fingerprints, daemon/ipvs/native/ipvs_lines.c) against the JavaScript they stand
// in for: for every service of a table buffer, the line is reconcile.ts's configText of what observe.ts reads from the
// same bytes, or empty where observe.ts refuses them; and two services with equal configText are the same to plan().
// Over random tables, corrupted ones, and the names no kernel line can hold. Needs build/Release/lvsd_ipvs.node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeDest, encodeService, type IpvsDest, type IpvsService } from '../../daemon/ipvs/codec.js';
import { ipvsNative } from '../../daemon/ipvs/native.js';
import { readPacked } from '../../daemon/dataplane/ipvs/observe.js';
import { configText, plan } from '../../daemon/dataplane/ipvs/reconcile.js';
import type { ServiceSpec } from '../../daemon/dataplane/types.js';
import { mangle as mangled, packed, tableArbitraries, word } from '../support/ipvs-tables.js';

const addon = ipvsNative();
const native = (): NonNullable<typeof addon> => {
  // A prerequisite this test cannot install: fail loudly rather than pass without having looked.
  if (addon === null) throw new Error('build/Release/lvsd_ipvs.node is not built (npm ci / node-gyp rebuild)');
  return addon;
};

const { entry } = tableArbitraries({ odd: true });

/** What the line of each service must be: configText of observe.ts's reading, '' where it refuses it. */
const expected = (svc: Buffer, dests: Buffer[]): string => {
  try {
    return configText(readPacked(packed([[svc, dests]]))[0] as unknown as ServiceSpec) ?? '';
  } catch {
    return '';
  }
};

test('fingerprints: each line is configText of what observe.ts reads from the same bytes, over random tables', () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 6 }), (table) => {
      const encoded = table.map(([s, ds]): [Buffer, Buffer[]] => [Buffer.concat(encodeService(s)), ds.map((d) => Buffer.concat(encodeDest(d)))]);
      const lines = native().fingerprints(packed(encoded)).split('\n');
      assert.deepEqual(lines.slice(0, encoded.length), encoded.map(([svc, dests]) => expected(svc, dests)));
    }),
    { numRuns: 2000 },
  );
});

test('fingerprints: corrupted nests give the empty line exactly where observe.ts refuses them', () => {
  fc.assert(
    fc.property(entry, fc.nat(), fc.nat({ max: 255 }), fc.boolean(), fc.boolean(), ([s, ds], at, byte, cut, inDest) => {
      const mangle = (b: Buffer): Buffer => mangled(b, at, byte, cut);
      let svc: Buffer = Buffer.concat(encodeService(s));
      const dests: Buffer[] = ds.map((d) => Buffer.concat(encodeDest(d)));
      if (inDest && dests.length > 0) dests[at % dests.length] = mangle(dests[at % dests.length] ?? Buffer.alloc(0));
      else svc = mangle(svc);
      assert.equal(native().fingerprints(packed([[svc, dests]])), expected(svc, dests));
    }),
    { numRuns: 3000 },
  );
  assert.throws(() => native().fingerprints(packed([]).subarray(0, 2)), /fingerprints: the buffer is shorter than its count/);
  assert.throws(() => native().fingerprints(Buffer.concat([word(2), packed([]).subarray(4)])), /fingerprints: a service runs past the end/);
});

test('configText: equal lines are services plan() finds nothing to do for (the adoption\'s shortcut is sound)', () => {
  // Two readings of random kernel services: whenever their lines are equal, planning one against the other sends nothing.
  fc.assert(
    fc.property(entry, entry, ([a, da], [b, db]) => {
      const read = (s: IpvsService, ds: IpvsDest[]): ServiceSpec | undefined => {
        try {
          return readPacked(packed([[Buffer.concat(encodeService(s)), ds.map((d) => Buffer.concat(encodeDest(d)))]]))[0];
        } catch {
          return undefined;
        }
      };
      const x = read(a, da);
      // b given a's key, so that equal ids are common.
      const y = read({ ...b, key: a.key }, db);
      if (x === undefined || y === undefined) return;
      const tx = configText(x), ty = configText(y);
      if (tx === undefined || tx !== ty) return;
      const p = plan({ services: [x] }, { services: [y] }, new Set([x.id]));
      assert.deepEqual(p.ops, []);
    }),
    { numRuns: 1000 },
  );
  // And the cases equal lines must not hide: a weight, a method, a tunnel, a threshold, a flag, persistence.
  const base: ServiceSpec = { id: 'tcp:10.0.0.1:80', family: 4, protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'sh', realServers: [{ id: '10.0.1.1:80', address: '10.0.1.1', port: 80, weight: 1, method: 'nat' }] };
  const variants: ServiceSpec[] = [
    { ...base, scheduler: 'rr' }, { ...base, schedulerFlags: ['sh-port'] }, { ...base, onePacket: true },
    { ...base, persistence: { timeoutSec: 300, netmask: '255.255.255.255' } }, { ...base, persistence: { timeoutSec: 300, netmask: '255.255.255.255', engine: 'sip' } },
    ...[{ weight: 2 }, { method: 'dr' as const }, { method: 'tun' as const }, { method: 'tun' as const, tunnel: { type: 'gue' as const, port: 6080, checksum: 'none' as const } }, { upperThreshold: 5 }, { lowerThreshold: 5 }, { id: '10.0.1.2:80' }].map((d) => ({ ...base, realServers: [{ ...base.realServers[0], ...d } as ServiceSpec['realServers'][number]] })),
    { ...base, realServers: [] },
  ];
  const lines = new Set([base, ...variants].map((s) => configText(s)));
  assert.equal(lines.size, variants.length + 1);
  assert.equal(configText({ ...base, scheduler: 'w|rr' as ServiceSpec['scheduler'] }), undefined);
  assert.equal(configText({ ...base, persistence: { timeoutSec: 1, netmask: '255.255.255.255', engine: 'S|p' } }), undefined);
  // reversed: the kernel's order for servers added in the desired order.
  const two = { ...base, realServers: [...base.realServers, { id: '10.0.1.2:80', address: '10.0.1.2', port: 80, weight: 1, method: 'nat' as const }] };
  assert.equal(configText(two, true), configText({ ...two, realServers: [...two.realServers].reverse() }));
});

test('match: each service gets the index of the first desired line equal to its own, -1 for none (empty lines match nothing)', () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 6 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom('same', 'changed', 'empty', 'other'))), (table, picks) => {
      const buf = packed(table.map(([s, ds]): [Buffer, Buffer[]] => [Buffer.concat(encodeService(s)), ds.map((d) => Buffer.concat(encodeDest(d)))]));
      const lines = native().fingerprints(buf).split('\n').slice(0, table.length);
      // Desired lines: kernel lines (some twice), altered ones, empty ones, unrelated ones, in any order.
      const desired = picks.map(([i, how]) => {
        const line = lines.length === 0 ? 'x' : (lines[i % lines.length] ?? '');
        return how === 'same' ? line : how === 'changed' ? `${line} ` : how === 'empty' ? '' : `tcp:10.0.0.${i % 256}:80|rr||0|-`;
      });
      const expectedIdx = lines.map((l) => (l === '' ? -1 : desired.indexOf(l)));
      assert.deepEqual([...native().match(buf, desired.join('\n'))], expectedIdx);
    }),
    { numRuns: 1000 },
  );
  assert.throws(() => native().match(packed([]).subarray(0, 2), ''), /match: the buffer is shorter than its count/);
  assert.deepEqual([...native().match(packed([]), 'anything')], []);
});
