// What a proxy's processes spent during one benchmark round, from the scheduler's own counters
// (/proc/PID/task/TID/schedstat: nanoseconds on a CPU, nanoseconds runnable but waiting for one).
//
// Why: on this machine (two cores shared with other work) a proxy's requests per second at 1,000
// connections is mostly the share of the cores it was given. Measured for issue #19: both HAProxy's
// threads and the native relay's were runnable ~95 % of a round and waited for a CPU 60–75 % of it;
// the native relay spent less CPU per request yet got less CPU in some rounds. CPU per request is the
// proxy's own cost, whatever the load; the wait share says how much the rate figure is the scheduler's.
import { readFileSync, readdirSync } from 'node:fs';

/** Summed over a process tree's threads. */
export interface Usage {
  runNs: number;
  waitNs: number;
  /** Times put on a CPU (schedstat's third field). */
  slices: number;
}

/** A schedstat line (run ns, wait ns, times run); zeros when unreadable. */
export function parseSchedstat(line: string): Usage {
  const [run, wait, slices] = line.trim().split(/\s+/).map(Number);
  const num = (x: number | undefined): number => (Number.isFinite(x) ? (x ?? 0) : 0);
  return { runNs: num(run), waitNs: num(wait), slices: num(slices) };
}

export interface RoundCost {
  /** CPUs' worth used over the round (1 = one core all the time). */
  cores: number;
  /** Microseconds of CPU per request (or per connection). */
  usPer: number;
  /** Of the time its threads wanted a CPU, the share they waited for one (0–1). */
  waited: number;
  /** Mean µs waited for a CPU each time a thread was put on one: how long a woken proxy sits runnable. */
  usWaitPerRun: number;
}

/** The cost of a round from usage before and after, its length and what it served. */
export function roundCost(before: Usage, after: Usage, elapsedMs: number, served: number): RoundCost {
  const run = Math.max(0, after.runNs - before.runNs);
  const wait = Math.max(0, after.waitNs - before.waitNs);
  return {
    cores: elapsedMs > 0 ? run / (elapsedMs * 1e6) : NaN,
    usPer: served > 0 ? run / 1000 / served : NaN,
    waited: run + wait > 0 ? wait / (run + wait) : NaN,
    usWaitPerRun: after.slices > before.slices ? wait / 1000 / (after.slices - before.slices) : NaN,
  };
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The thread ids of a process; none once it has exited. */
function threadsOf(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
}

const threadSchedstat = (pid: number, tid: string): Usage => parseSchedstat(readOr(`/proc/${pid}/task/${tid}/schedstat`));

/** pid and its descendants (a userspace runner and its helper processes). */
export function processTree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    for (const t of threadsOf(out[i] ?? 0)) {
      for (const c of readOr(`/proc/${out[i] ?? 0}/task/${t}/children`).split(/\s+/).filter(Boolean)) out.push(Number(c));
    }
  }
  return out;
}

/** Run and wait time of every thread of the processes (a thread that exited is not counted). */
export function usageOf(pids: number[]): Usage {
  const sum: Usage = { runNs: 0, waitNs: 0, slices: 0 };
  for (const pid of pids) {
    for (const t of threadsOf(pid)) {
      const u = threadSchedstat(pid, t);
      sum.runNs += u.runNs;
      sum.waitNs += u.waitNs;
      sum.slices += u.slices;
    }
  }
  return sum;
}

/** Run nanoseconds of each thread ("pid/tid") of the processes. */
export function runByThread(pids: number[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of pids) {
    for (const t of threadsOf(pid)) out.set(`${pid}/${t}`, threadSchedstat(pid, t).runNs);
  }
  return out;
}

/**
 * The busiest threads' shares of a round's CPU, largest first (those with ≥ 5 % of it). Why: two relay
 * threads that accept on one socket need not share the connections (issue #19 found 63 of 64 on one);
 * the thread that carries them is where the waiting for a CPU lands.
 */
export function threadShares(before: Map<string, number>, after: Map<string, number>): number[] {
  const deltas = [...after].map(([k, v]) => Math.max(0, v - (before.get(k) ?? 0)));
  const total = deltas.reduce((a, b) => a + b, 0);
  if (total === 0) return [];
  return deltas.map((d) => d / total).filter((s) => s >= 0.05).sort((a, b) => b - a);
}
