// The corpus of broken configs: each test/fixtures/config/NAME.yaml yields exactly the lines in
// NAME.expected (`FILE:LINE:COL: path: message`, FILE being the fixture's base name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfigText } from '../../daemon/config/load.js';
import { formatError } from '../../daemon/config/errors.js';

const dir = fileURLToPath(new URL('../../../test/fixtures/config/', import.meta.url));
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();

test('the corpus is there and every fixture has its expectation', () => {
  assert.ok(fixtures.length >= 30, `only ${fixtures.length} fixtures`);
  for (const f of fixtures) assert.ok(readdirSync(dir).includes(f.replace(/\.yaml$/, '.expected')), `${f} has no .expected`);
});

for (const f of fixtures) {
  test(`broken config ${f}`, () => {
    const expected = readFileSync(dir + f.replace(/\.yaml$/, '.expected'), 'utf8').trimEnd().split('\n');
    const r = loadConfigText(readFileSync(dir + f, 'utf8'), f);
    assert.equal(r.ok, false, `${f} was accepted`);
    assert.deepEqual(r.errors.map(formatError), expected);
    for (const line of expected) assert.match(line, /^[\w.-]+\.yaml:\d+:\d+: /);
  });
}
