// How many established connections wait in a listening socket's accept queue, sampled during a round.
//
// Why: wrk times a request from its first write, which follows the handshake at once; the handshake is
// the kernel's, so a connection that waits in the accept queue for the proxy to take it waits inside
// wrk's latency. That wait is the one part of a new connection's latency that tells how promptly a
// proxy accepts, and by Little's law the mean queue over the accept rate is the mean wait. Read for
// issue #19 (p99 of new connections at c64 above HAProxy's).
//
// How: /proc/PID/net/tcp is PID's network namespace's table; for a socket in LISTEN its rx_queue column
// is the accept queue's length (sk_ack_backlog). The kernel lists listening sockets before the others,
// so the first 16 KiB hold them: a sample costs one short read, not a walk of 1,000 connections.
import { closeSync, openSync, readSync } from 'node:fs';

/** The accept queue of the listener on `port` (any address) in one read of /proc/net/tcp; NaN if none. */
export function acceptQueue(table: string, port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let n = NaN;
  for (const line of table.split('\n')) {
    const f = line.trim().split(/\s+/);
    // sl local rem st tx:rx ...; LISTEN is 0A
    if (f[3] !== '0A' || f[1]?.split(':')[1] !== hexPort) continue;
    const rx = Number.parseInt(f[4]?.split(':')[1] ?? '', 16);
    n = (Number.isNaN(n) ? 0 : n) + rx;
  }
  return n;
}

export interface QueueSample {
  /** Largest queue seen. */
  max: number;
  /** Mean over the samples. */
  mean: number;
  samples: number;
}

/** Summary of sampled lengths (NaN ones, a listener not seen, are left out). */
export function summarize(xs: number[]): QueueSample {
  const ok = xs.filter((x) => !Number.isNaN(x));
  return { max: ok.length === 0 ? NaN : Math.max(...ok), mean: ok.length === 0 ? NaN : ok.reduce((a, b) => a + b, 0) / ok.length, samples: ok.length };
}

/** Samples the accept queue of `port` in `pid`'s namespace every `everyMs` until stop(). */
export function sampleAcceptQueue(pid: number, port: number, everyMs = 2): { stop: () => QueueSample } {
  const buf = Buffer.alloc(16_384);
  const xs: number[] = [];
  const timer = setInterval(() => {
    let fd = -1;
    try {
      fd = openSync(`/proc/${pid}/net/tcp`, 'r');
      const n = readSync(fd, buf, 0, buf.length, 0);
      xs.push(acceptQueue(buf.toString('latin1', 0, n), port));
    } catch {
      // the process is gone: the round reports what it had
    } finally {
      if (fd >= 0) closeSync(fd);
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return summarize(xs);
    },
  };
}
