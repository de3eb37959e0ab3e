// A stand-in for lvsd's admin socket in the CLI tests: a real HTTP server on a unix socket in a fresh
// temporary directory, answering each request with what `handler` returns for its path.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function withStatusSocket(handler: (path: string) => [number, string], body: (socket: string, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lvsd-status-'));
  const socket = join(dir, 'lvsd.sock');
  const server: Server = createServer((req, res) => {
    const [code, text] = handler(req.url ?? '');
    res.writeHead(code, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(socket, r));
  try {
    await body(socket, dir);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => { r(); }));
    rmSync(dir, { recursive: true, force: true });
  }
}
