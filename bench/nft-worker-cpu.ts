// The CPU of this process's netlink worker (nl-writer.ts: the node process it starts in another namespace),
// from the scheduler's counters. Why: the kernel's commit of a batch runs in the worker's sendmsg, so its CPU
// is the kernel's share of a change, which this process's own process.cpuUsage() never sees.
import { readFileSync } from 'node:fs';
import { processTree, usageOf } from './proc-usage.js';

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** This process's node children: the netlink worker (nft is not node). */
export function workerPids(): number[] {
  return processTree(process.pid).slice(1).filter((p) => comm(p) === 'node');
}

/** Milliseconds on a CPU so far of the netlink worker. */
export function workerCpuMs(): number {
  return usageOf(workerPids()).runNs / 1e6;
}
