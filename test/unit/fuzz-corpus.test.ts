// The fuzz harness's regression corpus (test/fixtures/fuzz/): inputs that crashed lvsd once, or that
// probe a known hard spot (alias bombs, deep nesting, NUL bytes, escapes, self-referring parameters).
// Each must pass the same checks as a fuzz input (test/support/fuzz-checks.ts), on every unit run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkKeepalived, checkYaml } from '../support/fuzz-checks.js';
import { importText } from './keepalived-memfs.js';
import { loadConfigText } from '../../daemon/config/load.js';

const CORPUS = fileURLToPath(new URL('../../../test/fixtures/fuzz/', import.meta.url));
const files = (kind: string): string[] => readdirSync(`${CORPUS}${kind}`).sort();

test('the YAML corpus: every input loads or is refused with placed, bounded, escaped errors', () => {
  const names = files('yaml');
  assert.ok(names.length >= 5);
  for (const f of names) checkYaml(readFileSync(`${CORPUS}yaml/${f}`, 'utf8'));
});

test('the keepalived corpus: every input imports or is refused with a place', () => {
  const names = files('keepalived');
  assert.ok(names.length >= 5);
  for (const f of names) checkKeepalived(readFileSync(`${CORPUS}keepalived/${f}`, 'utf8'));
});

test('regression: a self-referring keepalived parameter ($A=$A $A) used to exhaust memory and kill the process', () => {
  const r = importText(readFileSync(`${CORPUS}keepalived/macro-recursion.conf`, 'utf8'));
  assert.ok(r.diagnostics.some((d) => d.line === 4 && /parameter substitution makes this line longer than 65536 characters/.test(d.why)), JSON.stringify(r.diagnostics));
  // one pass of many long values is bounded as well (made here: 1 MB is too big to keep in the corpus)
  const long = `$B=${'x'.repeat(1_000_000)}\nglobal_defs {\n router_id ${'$B '.repeat(30_000)}\n}\n`;
  assert.ok(importText(long).diagnostics.some((d) => d.line === 3 && /longer than 65536/.test(d.why)));
});

test('regression: 1e999 and .inf are named as such in errors, not as "null"', () => {
  const r = loadConfigText(readFileSync(`${CORPUS}yaml/huge-numbers.yaml`, 'utf8'), 'h.yaml');
  assert.ok(!r.ok);
  const text = r.errors.map((e) => e.message).join('\n');
  assert.match(text, /got Infinity/);
  assert.doesNotMatch(text, /got null/);
});
