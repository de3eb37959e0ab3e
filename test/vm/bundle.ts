// Host side: bundles lvsd's CLI and its VRRP engine process into one file each (esbuild, a dev dependency via
// Vite), for runs of `lvsd run` inside the QEMU guest. The guest reads the project over 9p without a page cache;
// the bundle turns hundreds of module files into two. netlink stays external (a native prebuild it finds next to
// its own files), and so do lvsd's own addons (build/Release, found relative to the bundle as to dist/).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LVSD_BUNDLE } from './bundle-path.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function bundleLvsd(): string {
  const esbuild = join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!existsSync(esbuild)) throw new Error(`vm bundle: ${esbuild} is missing (npm ci installs it with vite)`);
  execFileSync(esbuild, [
    join(ROOT, 'dist/daemon/cli/main.js'), join(ROOT, 'dist/daemon/vrrp/engine-process.js'),
    '--bundle', '--platform=node', '--format=esm', '--target=node20', `--outdir=${dirname(LVSD_BUNDLE)}`, '--entry-names=[name]',
    '--external:netlink', '--log-level=warning',
    "--banner:js=import { createRequire as __lvsdCreateRequire } from 'node:module'; const require = __lvsdCreateRequire(import.meta.url);",
  ], { stdio: ['ignore', 'inherit', 'inherit'] });
  return LVSD_BUNDLE;
}
