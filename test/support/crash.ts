// A crash of lvsd as a host failure or a kernel OOM kill would cause it: SIGKILL to the main process and
// its children (the VRRP engine process) at once. SIGKILL to the main process alone is not a VRRP
// crash any more: the engine sees its parent go and resigns with priority-0 adverts
// (test/netns/vrrp-process.test.ts). keepalived's support does the same for its parent and VRRP child.
import { readFileSync } from 'node:fs';

/** The direct children of `pid` (from /proc). */
export function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((x) => x !== '').map(Number);
  } catch {
    return [];
  }
}

/** SIGKILL to `pid`'s children first (so none can act on its death), then to `pid`. */
export function crashTree(pid: number): void {
  for (const p of [...children(pid), pid]) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
