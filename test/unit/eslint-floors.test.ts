// The house's import rules (eslint/floors.js) fail the lint on an upward import and on a circle: run on a
// small daemon/ tree made for the test, with only these two rules, through ESLint's own API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

async function lint(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-floors-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const plugin = ((await import(pathToFileURL(join(ROOT, 'eslint/floors.js')).href)) as { default: NonNullable<Linter.Config['plugins']>[string] }).default;
    const eslint = new ESLint({
      cwd: dir,
      overrideConfigFile: true,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, plugins: { lvsd: plugin }, rules: { 'lvsd/floors': 'error', 'lvsd/no-cycle': 'error' } }],
    });
    const results = await eslint.lintFiles(['daemon/**/*.ts']);
    return results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(dir.length + 1)}:${m.line}: ${m.message}`)).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('imports that run down the floors, or stay in their room, pass', async () => {
  assert.deepEqual(await lint({
    'daemon/cli/run.ts': "import { d } from '../director/director.js';\nimport { log } from '../log.js';\nexport const r = d + log;\n",
    'daemon/director/director.ts': "import type { C } from '../config/types.js';\nimport { k } from '../state/target-key.js';\nimport { p } from './plan.js';\nexport const d: C = k + p;\n",
    'daemon/director/plan.ts': "export const p = 'p';\n",
    'daemon/config/types.ts': 'export type C = string;\n',
    'daemon/state/target-key.ts': "export const k = 'k';\n",
    'daemon/log.ts': "export const log = 'l';\n",
  }), []);
});

test('an upward import fails, naming both floors', async () => {
  const found = await lint({
    'daemon/ipvs/codec.ts': "import type { Counters } from '../dataplane/types.js';\nexport type S = Counters;\n",
    'daemon/dataplane/types.ts': 'export type Counters = number;\n',
    'daemon/state/store.ts': "export { key } from '../director/snapshot.js';\n",
    'daemon/director/snapshot.ts': "export const key = 1;\n",
  });
  assert.deepEqual(found, [
    'daemon/ipvs/codec.ts:1: an upward import: ipvs (floor 0) may not import from dataplane (floor 1); imports run cli > api > director > config > dataplane, vrrp, systemd, bgp > ipvs, health, alerts, state, net',
    'daemon/state/store.ts:1: an upward import: state (floor 0) may not import from director (floor 3); imports run cli > api > director > config > dataplane, vrrp, systemd, bgp > ipvs, health, alerts, state, net',
  ]);
});

test('a room with no floor is named', async () => {
  const found = await lint({ 'daemon/cli/x.ts': "import { y } from '../attic/y.js';\nexport const x = y;\n", 'daemon/attic/y.ts': 'export const y = 1;\n' });
  assert.deepEqual(found, ['daemon/cli/x.ts:1: daemon/attic/ has no floor: add it to FLOORS in eslint/floors.js (and to DESIGN.md\'s floors)']);
});

test('a circle fails at every import that closes it, also when one side imports types only', async () => {
  const found = await lint({
    'daemon/cli/run.ts': "import { DirectorDaemon } from './daemon.js';\nexport interface Daemon { x: number }\nexport const r = DirectorDaemon;\n",
    'daemon/cli/daemon.ts': "import type { Daemon } from './run.js';\nexport const DirectorDaemon = (d: Daemon) => d.x;\n",
    'daemon/cli/ok.ts': "import { r } from './run.js';\nexport const ok = r;\n",
  });
  assert.deepEqual(found, [
    'daemon/cli/daemon.ts:1: an import circle: cli/daemon.ts → cli/run.ts (move what both need to a file on the lower floor)',
    'daemon/cli/run.ts:1: an import circle: cli/daemon.ts → cli/run.ts (move what both need to a file on the lower floor)',
  ]);
});
