// A config with very many keys in one map: every problem still found (TypeBox's error cap once made a
// file with 10,000 unknown keys pass), and duplicate keys found by our own one-pass check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocument } from 'yaml';
import { loadConfigText } from '../../daemon/config/load.js';
import { validateShape } from '../../daemon/config/validate.js';
import { duplicateKeys } from '../../daemon/config/duplicate-keys.js';

function unknownKeys(n: number): Record<string, number> {
  const v: Record<string, number> = {};
  for (let i = 0; i < n; i++) v[`unknownKey${String(i)}`] = 1;
  return v;
}

test('past the validator error cap, unknown keys are still reported (not a clean shape)', () => {
  for (const n of [9_999, 10_000, 12_000]) {
    const issues = validateShape(unknownKeys(n));
    assert.ok(issues.length > 0, `${String(n)} unknown keys`);
    assert.match(issues[0]?.message ?? '', /^unknown key "unknownKey0"/);
  }
});

test('a file of 12,000 unknown keys is refused, at the first one, with the count of the rest', () => {
  const text = Object.keys(unknownKeys(12_000)).map((k) => `${k}: 1`).join('\n');
  const r = loadConfigText(text, 'big.yaml');
  if (r.ok) assert.fail('accepted');
  assert.deepEqual({ line: r.errors[0]?.line, col: r.errors[0]?.col }, { line: 1, col: 1 });
  assert.match(r.errors[0]?.message ?? '', /unknown key "unknownKey0"/);
});

test('duplicate keys: each repeat reported at its line and column, in text order with other YAML errors', () => {
  const r = loadConfigText('vrrp:\n  instances: []\n  instances: []\nvrrp: {}\n', 'd.yaml');
  if (r.ok) assert.fail('accepted');
  assert.deepEqual(
    r.errors.map((e) => `${String(e.line)}:${String(e.col)} ${e.message}`),
    ['3:3 YAML: Map keys must be unique', '4:1 YAML: Map keys must be unique'],
  );
});

test('duplicateKeys: a number key and a string key of the same digits are different keys; nested maps are checked', () => {
  const doc = parseDocument('1: a\n"1": b\nx:\n  y: 1\n  z: 2\n  y: 3\n');
  assert.deepEqual(duplicateKeys(doc), ['1: a\n"1": b\nx:\n  y: 1\n  z: 2\n  '.length]);
});
