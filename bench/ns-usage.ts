// CPU and memory of the processes in a network namespace, from /proc (the benchmarks' view of a daemon
// and its children: keepalived's parent and checker/VRRP processes, lvsd and its VRRP engine).
import { readFileSync } from 'node:fs';
import type { Netns } from '../test/support/netns.js';

/** One process's RSS: `name` is its program (for node, the script's file name: lvsd's main vs its VRRP engine). */
export interface ProcessRss {
  name: string;
  rssMiB: number;
}

/** CPU seconds (user+system) and RSS (MiB, summed, largest, and per process) over the namespace's processes named `comm` (all when absent). */
export async function namespaceUsage(ns: Netns, comm?: string): Promise<{ cpuS: number; rssMiB: number; maxRssMiB: number; processes: ProcessRss[] }> {
  const { stdout } = await ns.exec('ip', ['netns', 'pids', ns.name]).catch(() => ({ stdout: '' }));
  let ticks = 0;
  let sum = 0;
  let max = 0;
  const processes: ProcessRss[] = [];
  for (const pid of stdout.split(/\s+/).filter(Boolean)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (comm !== undefined && !stat.includes(`(${comm})`)) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      sum += kb;
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const script = argv[0]?.endsWith('node') === true ? argv.find((a, i) => i > 0 && a.endsWith('.js')) : undefined;
      processes.push({ name: (script ?? argv[0] ?? '?').split('/').at(-1) ?? '?', rssMiB: kb / 1024 });
      max = Math.max(max, kb);
    } catch {
      /* exited meanwhile */
    }
  }
  return { cpuS: ticks / 100, rssMiB: sum / 1024, maxRssMiB: max / 1024, processes };
}
