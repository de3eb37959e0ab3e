// `lvsd status [--json]`: asks the running daemon over its local admin socket
// (GET /api/v1/status on api.socket, served by the API) and prints the state. The socket comes
// from --socket, else from the config's api.socket (--config, default /etc/lvsd/lvsd.yaml when it
// exists), else /run/lvsd/lvsd.sock. "Not running" is a clear message and exit code 3.
import { EXIT, parse, type Command } from './command.js';
import { renderSnapshot } from './status-render.js';
import { findLocalDaemon } from './local.js';
export { DEFAULT_CONFIG } from './local.js';
import { LocalApiError, localRequest, STATUS_ROUTE } from '../api/local-client.js';
import type { DirectorSnapshot } from '../director/snapshot.js';

/** A snapshot, or why there is none: `notRunning` when nothing listens on the socket. */
export type SnapshotRead = { ok: true; snapshot: DirectorSnapshot } | { ok: false; notRunning: boolean; message: string };

/** GET /api/v1/status on the admin socket; `lvsd status` and `lvsd top` share it. */
export async function readSnapshot(socket: string): Promise<SnapshotRead> {
  try {
    return { ok: true, snapshot: (await localRequest<DirectorSnapshot>(socket, 'GET', STATUS_ROUTE, undefined, 5000)).body };
  } catch (e) {
    if (!(e instanceof LocalApiError)) throw e;
    if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') return { ok: false, notRunning: true, message: `lvsd is not running (nothing listens on ${socket})` };
    return { ok: false, notRunning: false, message: `cannot use lvsd on ${e.message}` };
  }
}

export const statusCommand: Command = {
  name: 'status',
  summary: "print the running daemon's state (VRRP instances, virtual and real servers, like ipvsadm -L -n)",
  usage: 'status [--json] [--socket PATH | --config FILE]',
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' }, socket: { type: 'string' }, config: { type: 'string', short: 'c' } });
    const { socket } = await findLocalDaemon({ config: values.config, socket: values.socket }, io);
    const read = await readSnapshot(socket);
    if (!read.ok) {
      io.err(read.message);
      return read.notRunning ? EXIT.notRunning : EXIT.failed;
    }
    io.out(values.json === true ? JSON.stringify(read.snapshot, null, 2) : renderSnapshot(read.snapshot));
    return EXIT.ok;
  },
};
