// A config over MAX_CONFIG_BYTES is refused before it is parsed (issue 17: a 4 MB validate held the event
// loop 2.5 s and took 850 MB), with one error naming the file, its size and the limit — from a file, from
// text, and by a real director's validate and apply (what the API's routes call).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, loadConfigText } from '../../daemon/config/load.js';
import { formatError, MAX_CONFIG_BYTES } from '../../daemon/config/errors.js';
import { ONE_OF_EACH, startFakeDirector } from '../support/director-fakes.js';

/** Valid YAML lines of junk keys: parsed, each would be an "unknown key" error. */
function junk(bytes: number): string {
  const line = 'bogusKeyThatIsNotASetting000000: 1\n';
  let out = '';
  for (let i = 0; out.length + line.length <= bytes; i++) out += line.replace('000000', String(i).padStart(6, '0'));
  return out + 'x'.repeat(bytes - out.length);
}

test('a text over the limit gets one error naming the file and the limit, and is not parsed', () => {
  const over = loadConfigText(junk(MAX_CONFIG_BYTES + 1), '/etc/lvsd/lvsd.yaml');
  assert.ok(!over.ok);
  assert.deepEqual(over.errors.map(formatError), [`/etc/lvsd/lvsd.yaml:1:1: the config is 1.0 MiB (${String(MAX_CONFIG_BYTES + 1)} bytes); lvsd parses at most 1 MiB — not parsed`]);
  // multi-byte characters count as the bytes they take in the file
  const wide = loadConfigText(`# ${'é'.repeat(MAX_CONFIG_BYTES / 2)}\n{}\n`, 'w.yaml');
  assert.ok(!wide.ok);
  assert.match(wide.errors[0]?.message ?? '', /lvsd parses at most 1 MiB/);
  // at the limit it is parsed (comments padding a small config; many keys in one map are slow to check:
  // the YAML library's duplicate-key check is quadratic, see the closing note)
  const at = loadConfigText(`bogus: 1\n${'#'.repeat(MAX_CONFIG_BYTES - 11)}\n`, 'a.yaml');
  assert.ok(!at.ok);
  assert.match(formatError(at.errors[0] ?? assert.fail()), /^a\.yaml:1:1: .*bogus/);
});

test('a 4 MiB file is refused by its size, read no further than the limit', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-size-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const f = join(dir, 'big.yaml');
  writeFileSync(f, junk(4 * 1024 * 1024));
  const r = await loadConfig(f);
  assert.ok(!r.ok);
  assert.equal(r.errors.length, 1);
  assert.equal(formatError(r.errors[0] ?? assert.fail()), `${f}:1:1: the config is 4 MiB (4194304 bytes); lvsd parses at most 1 MiB — not parsed`);
});

test('a real director refuses a 4 MiB validate and apply by size (nothing parsed) and keeps its running config', async () => {
  const t = await startFakeDirector(ONE_OF_EACH);
  try {
    const before = (await t.d.runningConfig()).hash;
    const text = junk(4 * 1024 * 1024 - 64);
    const v = await t.d.validateConfig(text);
    const a = await t.d.applyConfig(text, 'alice');
    for (const r of [v, a]) {
      assert.equal(r.ok, false);
      assert.equal(r.errors.length, 1);
      assert.match(r.errors[0]?.message ?? '', /:1:1: the config is 4\.0 MiB \(\d+ bytes\); lvsd parses at most 1 MiB — not parsed$/);
    }
    assert.equal((await t.d.runningConfig()).hash, before);
  } finally {
    await t.cleanup();
  }
});
