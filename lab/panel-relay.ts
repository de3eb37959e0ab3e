// The host side of a director's panel: 127.0.0.1:PORT on the host → a unix socket → 127.0.0.1:9180 inside the
// director's namespace, or its TLS API there (lab/relay.ts runs there), so an operator's browser reaches each director's panel.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import type { Netns } from '../test/support/netns.js';

const RELAY = join(resolve(import.meta.dirname, '..', '..'), 'dist', 'lab', 'relay.js');

export interface PanelRelay {
  child: ChildProcess;
  server: Server;
}

/** `sock`: the relay's unix socket (a path both the host and the namespace see); `to`: lab/relay.ts's target
 * arguments (the API's HOST:PORT, and its CA file when it serves TLS). */
export async function relayPanel(ns: Netns, sock: string, hostPort: number, to: readonly string[] = ['127.0.0.1:9180']): Promise<PanelRelay> {
  const child = ns.spawn('node', [RELAY, sock, ...to], { stdio: 'ignore' });
  const server = createServer((c) => {
    const up = connect(sock);
    c.pipe(up).pipe(c);
    c.on('error', () => up.destroy());
    up.on('error', () => c.destroy());
  });
  // The relay is a fresh node process in the namespace: a browser arriving before it listens would get a reset.
  const end = Date.now() + 30_000;
  while (!existsSync(sock) && child.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(sock)) throw new Error(`the panel relay did not listen on ${sock} (exit ${String(child.exitCode)})`);
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(hostPort, '127.0.0.1', () => { res(); });
  });
  return { child, server };
}
