// Every package the code imports is declared in package.json: the daemon's in `dependencies` (an installed
// lvsd has no devDependencies), the rest (tests, benchmarks, the lab, the panel's build) in either. An
// undeclared one works only while another package happens to pull it in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name === 'dist') continue;
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|tsx)$/.test(name)) out.push(p);
  }
  return out;
}

/** The packages a file imports ("@scope/name" or "name"), builtins left out. */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = new Set<string>();
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*'([^'.][^']*)'|\bimport\s*\(\s*'([^'.][^']*)'\s*\)/gm)) {
    const spec = m[1] ?? m[2] ?? '';
    const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? spec);
    if (!spec.startsWith('node:') && !builtinModules.includes(name)) found.add(name);
  }
  return [...found];
}

test('the daemon imports only packages in dependencies', () => {
  const missing = sources(join(ROOT, 'daemon')).flatMap((f) => packagesOf(f).filter((p) => !(p in pkg.dependencies)).map((p) => `${f.slice(ROOT.length + 1)}: ${p}`));
  assert.deepEqual(missing, []);
});

test('tests, benchmarks, the lab, scripts and the panel import only declared packages', () => {
  const declared = { ...pkg.dependencies, ...pkg.devDependencies };
  const files = ['test', 'bench', 'lab', 'scripts', 'webui/src'].flatMap((d) => sources(join(ROOT, d)));
  assert.ok(files.length > 50, `found only ${files.length} files`);
  const missing = files.flatMap((f) => packagesOf(f).filter((p) => !(p in declared)).map((p) => `${f.slice(ROOT.length + 1)}: ${p}`));
  assert.deepEqual(missing, []);
});
