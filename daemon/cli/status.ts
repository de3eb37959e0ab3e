// `lvsd status [--json]`: asks the running daemon over its local admin socket
// (GET /api/v1/status on api.socket, served by the API) and prints the state. The socket comes
// from --socket, else from the config's api.socket (--config, default /etc/lvsd/lvsd.yaml when it
// exists), else /run/lvsd/lvsd.sock. "Not running" is a clear message and exit code 3.
import { request } from 'node:http';
import { EXIT, parse, type Command } from './command.js';
import { renderSnapshot } from './status-render.js';
import { findLocalDaemon } from './local.js';
export { DEFAULT_CONFIG } from './local.js';
import type { DirectorSnapshot } from '../director/snapshot.js';

export const STATUS_PATH = '/api/v1/status';

export interface SocketResponse {
  status: number;
  body: string;
}

/** GET over a unix socket. Rejects with the socket error (ENOENT / ECONNREFUSED = not running). */
export function getOverSocket(socketPath: string, path: string, timeoutMs = 5000): Promise<SocketResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET', headers: { accept: 'application/json' }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end();
  });
}

export const statusCommand: Command = {
  name: 'status',
  summary: "print the running daemon's state (VRRP instances, virtual and real servers)",
  usage: 'status [--json] [--socket PATH | --config FILE]',
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' }, socket: { type: 'string' }, config: { type: 'string', short: 'c' } });
    const { socket } = await findLocalDaemon({ config: values.config, socket: values.socket }, io);
    let res: SocketResponse;
    try {
      res = await getOverSocket(socket, STATUS_PATH);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ECONNREFUSED') {
        io.err(`lvsd is not running (nothing listens on ${socket})`);
        return EXIT.notRunning;
      }
      if (code === 'EACCES') {
        io.err(`permission denied on ${socket} (the admin socket is root-only; try sudo)`);
        return EXIT.failed;
      }
      io.err(`cannot reach lvsd on ${socket}: ${(e as Error).message}`);
      return EXIT.failed;
    }
    if (res.status !== 200) {
      io.err(`lvsd answered ${res.status} on ${STATUS_PATH}: ${res.body.slice(0, 500)}`);
      return EXIT.failed;
    }
    let doc: unknown;
    try {
      doc = JSON.parse(res.body);
    } catch {
      io.err(`lvsd answered with something that is not JSON on ${STATUS_PATH}`);
      return EXIT.failed;
    }
    io.out(values.json === true ? JSON.stringify(doc, null, 2) : renderSnapshot(doc as DirectorSnapshot));
    return EXIT.ok;
  },
};
