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

export const statusCommand: Command = {
  name: 'status',
  summary: "print the running daemon's state (VRRP instances, virtual and real servers)",
  usage: 'status [--json] [--socket PATH | --config FILE]',
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' }, socket: { type: 'string' }, config: { type: 'string', short: 'c' } });
    const { socket } = await findLocalDaemon({ config: values.config, socket: values.socket }, io);
    let doc: DirectorSnapshot;
    try {
      doc = (await localRequest<DirectorSnapshot>(socket, 'GET', STATUS_ROUTE, undefined, 5000)).body;
    } catch (e) {
      if (!(e instanceof LocalApiError)) throw e;
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') {
        io.err(`lvsd is not running (nothing listens on ${socket})`);
        return EXIT.notRunning;
      }
      io.err(`cannot use lvsd on ${e.message}`);
      return EXIT.failed;
    }
    io.out(values.json === true ? JSON.stringify(doc, null, 2) : renderSnapshot(doc));
    return EXIT.ok;
  },
};
