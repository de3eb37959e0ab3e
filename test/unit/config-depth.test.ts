// A config nested deeper than MAX_CONFIG_DEPTH is refused while it is parsed, with one error at the place
// the bound is crossed (FILE:LINE:COL), instead of "YAML: Maximum call stack size exceeded" (10,000 '['
// ran the yaml package's recursive composer out of stack); a real director keeps its running config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';
import { MAX_CONFIG_DEPTH } from '../../daemon/config/depth.js';
import { ONE_OF_EACH, startFakeDirector } from '../support/director-fakes.js';

const N = 10_000;
const DEEP: Record<string, string> = {
  'flow sequences': `x: ${'['.repeat(N)}${']'.repeat(N)}\n`,
  'flow mappings': `x: ${'{a: '.repeat(N)}1${'}'.repeat(N)}\n`,
  'compact block sequences': `x:\n  ${'- '.repeat(N)}1\n`,
};

for (const [name, text] of Object.entries(DEEP)) {
  test(`${N} nested ${name}: one error at the ${MAX_CONFIG_DEPTH + 1}th level, no stack overflow`, () => {
    const r = loadConfigText(text, 'deep.yaml');
    assert.ok(!r.ok);
    assert.equal(r.errors.length, 1);
    const e = r.errors[0];
    assert.ok(e !== undefined);
    assert.doesNotMatch(e.message, /call stack/);
    assert.match(formatError(e), new RegExp(`^deep\\.yaml:\\d+:\\d+: nested deeper than ${MAX_CONFIG_DEPTH} levels here; .* — not parsed$`));
    // the place is the collection that crossed the bound: it stands after MAX_CONFIG_DEPTH openers
    const lines = text.split('\n');
    const offset = lines.slice(0, e.line - 1).reduce((n, l) => n + l.length + 1, 0) + e.col - 1;
    const openers = (text.slice(0, offset).match(/[[{-]/g) ?? []).length + 1; // + the top-level map of "x:"
    assert.equal(openers, MAX_CONFIG_DEPTH);
    assert.match(text.charAt(offset), /[[{-]/);
  });
}

test('nesting up to the bound is parsed as usual: the errors are about the keys, not the depth', () => {
  const text = `x: ${'['.repeat(MAX_CONFIG_DEPTH - 1)}1${']'.repeat(MAX_CONFIG_DEPTH - 1)}\n`;
  const r = loadConfigText(text, 'ok.yaml');
  assert.ok(!r.ok);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]?.message ?? '', /unknown key/);
});

test('aliases that stack anchored lists deeper than the bound are refused at the path', () => {
  const half = 40;
  const text = `a: &a ${'['.repeat(half)}1${']'.repeat(half)}\nb: ${'['.repeat(half)}*a${']'.repeat(half)}\n`;
  const r = loadConfigText(text, 'alias.yaml');
  assert.ok(!r.ok);
  assert.equal(r.errors.length, 1);
  assert.match(r.errors[0]?.path ?? '', /^b(\[0\]){63}$/);
  assert.match(r.errors[0]?.message ?? '', new RegExp(`^nested deeper than ${MAX_CONFIG_DEPTH} levels`));
});

test('a real director refuses a deep validate and apply and keeps its running config', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    const before = (await t.d.runningConfig()).hash;
    const text = DEEP['flow sequences'] ?? '';
    for (const r of [await t.d.validateConfig(text), await t.d.applyConfig(text, 'alice')]) {
      assert.equal(r.ok, false);
      assert.equal(r.errors.length, 1);
      assert.match(r.errors[0]?.message ?? '', /:1:67: nested deeper than 64 levels here/);
    }
    assert.equal((await t.d.runningConfig()).hash, before);
  } finally {
    await t.cleanup();
  }
});
