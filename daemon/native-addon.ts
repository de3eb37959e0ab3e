// Finds and loads one of lvsd's N-API addons (binding.gyp builds them into build/Release). One place knows
// where they lie: from the compiled tree (dist/daemon/, two levels under the project) and from the one-file
// bundle (dist/bundle/lvsd/, three levels) alike, since the bundle keeps this file's import.meta.url.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PLACES = ['../../build/Release/', '../../../build/Release/'];

/**
 * build/Release/<name>.node loaded (its caller knows its type), or null when it is not built or the environment variable `envSwitch` is '0'
 * (each optional addon has one, so its JavaScript fallback can be run and compared).
 */
export function loadAddon(name: string, envSwitch?: string): unknown {
  if (envSwitch !== undefined && process.env[envSwitch] === '0') return null;
  const found = PLACES.map((p) => fileURLToPath(new URL(`${p}${name}.node`, import.meta.url))).find((p) => existsSync(p));
  return found === undefined ? null : (createRequire(import.meta.url)(found) as unknown);
}
