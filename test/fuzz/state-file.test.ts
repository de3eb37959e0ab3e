// Fuzzing the state file at start (issue 17): a real state file (users, overrides, audit, sessions),
// mutated as a broken disk or a hand edit would. parseState either accepts it or throws StateFileError
// naming the file — never another throw; and through openStore a refused file is left byte for byte
// as it was, or with startEmpty moved aside whole (nothing lost). Settings: test/support/fuzz-text.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parseState, StateFileError } from '../../daemon/state/file-adapter.js';
import { openStore } from '../../daemon/state/store.js';
import { fuzzSettings, mutatedArb, runFuzz } from '../support/fuzz-text.js';

const SPECIALS = ['"', '{', '}', '[', ']', ',', ':', 'null', 'true', '-1', '1e400', '"version"', '"users"', '"role"', '"admin"', '"root"', '"sessions"', '"idHash"', '\\u0000', '\\ud800', '\n', ' ', '0', '"scrypt$"', '"__proto__"', '"constructor"'];

let base = '';
const FILE = '/var/lib/lvsd/state.json';

test('a real state file to mutate', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-statefuzz-'));
  try {
    const f = join(dir, 'state.json');
    const { store } = await openStore(f, { passwordCost: 1024 });
    await store.addUser('alice', 'alice password', 'admin', 'test');
    await store.addUser('bob', 'bob password', 'viewer', 'test');
    await store.setOverride({ service: 'tcp:192.0.2.1:80' }, { drain: true }, 'alice');
    await store.setOverride({ service: 'tcp:192.0.2.1:80', realServer: '10.0.0.1:80' }, { weight: 5 }, 'alice');
    await store.saveSessions([{ idHash: 'a'.repeat(64), user: 'alice', createdAt: 1, lastSeen: 2 }]);
    base = await readFile(f, 'utf8');
    assert.ok(base.includes('"sessions"'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

function check(text: string): void {
  try {
    const s = parseState(FILE, text);
    assert.equal(s.version, 1);
  } catch (e) {
    assert.ok(e instanceof StateFileError, `not a StateFileError: ${String(e)}`);
    assert.equal(e.file, FILE);
    // the file, and where in it when the JSON itself is broken (FILE:LINE:COL)
    assert.match(e.message, new RegExp(`^${FILE.replace(/[.]/g, '\\.')}(:\\d+:\\d+)?: `));
    assert.ok(e.message.length < 2000, `message of ${String(e.message.length)} characters`);
  }
}

test('fuzz: mutated state files are accepted or refused with a StateFileError naming the file', () => {
  assert.ok(base !== '');
  const r = runFuzz('state file', fc.oneof(mutatedArb([base], SPECIALS), fc.string({ maxLength: 300, unit: 'binary' })), check);
  assert.ok(r.runs > 0);
});

test('fuzz at start: a refused file is kept as it was, or moved aside whole with startEmpty', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lvsd-statefuzz-'));
  try {
    const n = Math.min(300, Math.max(20, Math.floor(fuzzSettings().n / 100)));
    const samples = fc.sample(mutatedArb([base], SPECIALS), { numRuns: n, seed: fuzzSettings().seed });
    let refused = 0;
    for (const [i, text] of samples.entries()) {
      const f = join(dir, `s${String(i)}.json`);
      // compared as bytes: a mutation can leave a lone surrogate, which UTF-8 cannot carry as it is
      const bytes = Buffer.from(text, 'utf8');
      await writeFile(f, bytes);
      let bad = false;
      try {
        await openStore(f, { passwordCost: 1024 });
      } catch (e) {
        assert.ok(e instanceof StateFileError, String(e));
        assert.ok(e.message.includes(f));
        bad = true;
      }
      if (!bad) continue;
      refused++;
      assert.ok((await readFile(f)).equals(bytes), 'a refused file is left as it was');
      const opened = await openStore(f, { passwordCost: 1024, startEmpty: true });
      assert.ok(opened.movedAside !== null);
      assert.ok((await readFile(opened.movedAside)).equals(bytes), 'moved aside whole');
    }
    const left = (await readdir(dir)).filter((x) => x.endsWith('.tmp'));
    assert.deepEqual(left, []);
    process.stdout.write(`# fuzz state file at start: ${String(samples.length)} files, ${String(refused)} refused and kept\n`);
    assert.ok(refused > 0, 'some mutations must be refused, or the check checks nothing');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
