// The loader never throws, whatever it is fed: every outcome is a Config or error lines with a
// place. Mutations of a valid file reach the semantic checks and the normaliser with odd values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { parse, stringify } from 'yaml';
import { loadConfigText, type LoadResult } from '../../daemon/config/load.js';

const EXAMPLE = readFileSync(fileURLToPath(new URL('../../../config/lvsd.yaml', import.meta.url)), 'utf8');
const BASE = parse(EXAMPLE) as unknown;

function wellFormed(r: LoadResult, text: string): void {
  const lines = text.split('\n').length;
  if (r.ok) return;
  assert.ok(r.errors.length > 0);
  for (const e of r.errors) {
    assert.ok(e.line >= 1 && e.line <= lines + 1 && e.col >= 1, JSON.stringify(e));
    assert.ok(e.message.length > 0);
  }
}

test('property: arbitrary text never throws', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300 }), (text) => {
      wellFormed(loadConfigText(text, 'f.yaml'), text);
    }),
    { numRuns: 150 },
  );
});

test('property: arbitrary JSON documents never throw', () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
      const text = stringify(v);
      wellFormed(loadConfigText(text, 'f.yaml'), text);
    }),
    { numRuns: 150 },
  );
});

type Path = (string | number)[];
function paths(v: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(v)) return [prefix, ...v.flatMap((x, i) => paths(x, [...prefix, i]))];
  if (v !== null && typeof v === 'object') return [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, k]))];
  return [prefix];
}
const ALL_PATHS = paths(BASE).filter((p) => p.length > 0);

function setAt(root: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let cur: Record<string | number, unknown> = copy;
  for (const seg of path.slice(0, -1)) cur = cur[seg] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (last !== undefined) cur[last] = value;
  return copy;
}

test('property: a valid file with any one value replaced never throws', () => {
  const odd = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom('', '0', '1s', '-1', '192.0.2.300', '2001:db8::1', 'fe80::1%eth0', '10.0.0.1/33', 'wrr', 'tun', 'VI_OUTSIDE', 65536, 0, -1, 1.5, 1e21, null),
  );
  fc.assert(
    fc.property(fc.constantFrom(...ALL_PATHS), odd, (path, value) => {
      const text = stringify(setAt(BASE, path, value));
      wellFormed(loadConfigText(text, 'f.yaml'), text);
    }),
    { numRuns: 200 },
  );
});

test('property: deleting any key or list item never throws', () => {
  fc.assert(
    fc.property(fc.constantFrom(...ALL_PATHS), (path) => {
      const copy = structuredClone(BASE) as Record<string | number, unknown>;
      let cur: Record<string | number, unknown> = copy;
      for (const seg of path.slice(0, -1)) cur = cur[seg] as Record<string | number, unknown>;
      const last = path[path.length - 1];
      if (Array.isArray(cur) && typeof last === 'number') cur.splice(last, 1);
      else if (last !== undefined) Reflect.deleteProperty(cur, last);
      const text = stringify(copy);
      wellFormed(loadConfigText(text, 'f.yaml'), text);
    }),
    { numRuns: 150 },
  );
});
