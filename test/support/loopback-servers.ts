// Small TCP servers on 127.0.0.1 for the checker tests: every connection is tracked (a test can see
// that a checker closed its socket), and closeAll() in after() ends whatever is left. Also the way the
// monitor runs one probe: with an AbortSignal that fires at the check's timeout.
import { createServer, type Server, type Socket } from 'node:net';
import type { Probe } from '../../daemon/health/checkers/probe.js';
import type { CheckVerdict } from '../../daemon/health/types.js';

export class LoopbackServers {
  /** Connections the servers accepted and that are still open. */
  readonly connections = new Set<Socket>();
  private readonly closers: (() => void)[] = [];

  /** A server on `host:port` (0: any free port) running `handler` per connection; resolves to its port. */
  listen(handler: (s: Socket) => void, host = '127.0.0.1', port = 0): Promise<number> {
    const server = createServer((s) => {
      this.connections.add(s);
      s.on('close', () => this.connections.delete(s));
      s.on('error', () => undefined);
      handler(s);
    });
    this.closers.push(() => server.close());
    return new Promise((resolve) => {
      server.listen(port, host, () => {
        resolve(portOf(server));
      });
    });
  }

  /** Something else (a UDP socket…) to close with the servers. */
  adopt(thing: { close(): unknown }): void {
    this.closers.push(() => thing.close());
  }

  closeAll(): void {
    for (const c of this.connections) c.destroy();
    for (const close of this.closers.splice(0)) close();
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = portOf(server);
  await new Promise((r) => server.close(r));
  return port;
}

/** Runs one probe as the monitor does: its signal aborts it at `timeoutMs`. */
export async function runProbe(probe: Probe, timeoutMs: number): Promise<CheckVerdict> {
  const ac = new AbortController();
  const t = setTimeout(() => { ac.abort(); }, timeoutMs);
  try {
    return await probe(ac.signal);
  } finally {
    clearTimeout(t);
  }
}

function portOf(server: Server): number {
  const a = server.address();
  return typeof a === 'object' && a !== null ? a.port : 0;
}
