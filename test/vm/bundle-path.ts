// Where test/vm/bundle.ts writes the one-file lvsd for the guest (a leaf: guest scripts import it too).
import { fileURLToPath } from 'node:url';

/** dist/bundle/lvsd/main.js: three levels below the repository, as dist/daemon/cli/main.js, so the paths lvsd
 * finds relative to itself (build/Release/*.node, package.json) stay the same. */
export const LVSD_BUNDLE = fileURLToPath(new URL('../../bundle/lvsd/main.js', import.meta.url));
