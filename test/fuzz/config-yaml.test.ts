// Fuzzing the YAML config loader (issue 17): mutated real configs, whole sections and single sections
// of them, and soups of YAML punctuation and lvsd's keys. Whatever it is fed, the loader returns a
// Config or error lines with a place — never a throw — and what it prints is bounded and escaped.
// Settings (N, time bound, seed): test/support/fuzz-text.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { checkYaml } from '../support/fuzz-checks.js';
import { mutatedArb, runFuzz, soupArb } from '../support/fuzz-text.js';

const CONFIG = fileURLToPath(new URL('../../../config/', import.meta.url));
const FILES = ['lvsd.yaml', ...readdirSync(`${CONFIG}examples`).filter((f) => f.endsWith('.yaml')).map((f) => `examples/${f}`)].map((f) => readFileSync(`${CONFIG}${f}`, 'utf8'));

/** Each top-level section of a file on its own (small inputs run fast and reach deep). */
function sections(text: string): string[] {
  return text.split(/\n(?=[A-Za-z])/).filter((s) => /^[A-Za-z]/.test(s));
}
const BASES = [...FILES, ...FILES.flatMap(sections)];

const YAML_SPECIALS = [
  ': ', '- ', '[', ']', '{', '}', ', ', '&a ', '*a', '<<: *a', '!!str ', '!!binary ', '!tag ', '| ', '> ', '# ', "'", '"', '---\n', '...\n',
  '%YAML 1.2\n', '? ', '@', '`', 'null', '~', 'true', 'yes', 'no', '0x1F', '1e999', '-0', '.inf', '.nan', '0o17', '2001:db8::1', 'fe80::1%eth0',
  '10.0.0.1/24', '255.255.255.256', '1s', '250ms', '0ms', '-1', '65536', '4294967296', 'virtualServers:', 'realServers:', 'vrrp:', 'instances:',
  'healthCheck:', 'password:', 'weight:', 'virtualRouterId:', 'priority:', 'name:', 'address:', 'port:', 'interface:', 'dataplane:', '\n', '\n  ', '\t',
];
const SOUP_WORDS = [...YAML_SPECIALS, 'VI_1', 'eth0', 'tcp', 'udp', 'rr', 'wrr', 'nat', 'dr', 'tun', 'MASTER', 'BACKUP', 'http', 'PASS', '80', '150', 'x'];

test('fuzz: mutated configs never make the loader throw; errors are placed, bounded and escaped', () => {
  const r = runFuzz('yaml mutated', mutatedArb(BASES, YAML_SPECIALS), checkYaml);
  assert.ok(r.runs > 0);
});

test('fuzz: soups of YAML punctuation and lvsd keys never make the loader throw', () => {
  const r = runFuzz('yaml soup', fc.oneof(soupArb(SOUP_WORDS), fc.string({ maxLength: 200, unit: 'binary' })), checkYaml);
  assert.ok(r.runs > 0);
});
