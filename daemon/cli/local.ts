// Where the local CLI commands (status, reload, user add) find the running daemon: the admin socket and
// the state file from --socket/--state, else from the config (--config, default /etc/lvsd/lvsd.yaml when
// it exists), else lvsd's defaults.
import { existsSync } from 'node:fs';
import { DEFAULTS } from '../config/normalise.js';
import { UsageError, type Io } from './command.js';

export const DEFAULT_CONFIG = '/etc/lvsd/lvsd.yaml';

export interface LocalDaemon {
  socket: string;
  stateFile: string;
  /** The config file the answer came from, if any. */
  configPath: string | undefined;
}

export async function findLocalDaemon(opts: { config?: string | undefined; socket?: string | undefined; state?: string | undefined }, io: Io): Promise<LocalDaemon> {
  const configPath = opts.config ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
  let socket: string = DEFAULTS.apiSocket;
  let stateFile: string = DEFAULTS.stateFile;
  if (configPath !== undefined && (opts.socket === undefined || opts.state === undefined)) {
    // Loaded here, not at the top: the config loader (schema, validators) is most of `lvsd status`'s start-up.
    const [{ loadConfig }, { formatError }] = await Promise.all([import('../config/load.js'), import('../config/errors.js')]);
    const r = await loadConfig(configPath);
    if (!r.ok) {
      for (const e of r.errors) io.err(formatError(e));
      throw new UsageError(`${configPath} is invalid: cannot tell where lvsd's socket and state file are (use --socket / --state)`);
    }
    socket = r.config.api.socket;
    stateFile = r.config.stateFile;
  }
  return { socket: opts.socket ?? socket, stateFile: opts.state ?? stateFile, configPath };
}
