// Starts the API where the config says: TCP (127.0.0.1:9180 by default; HTTPS when api.tls is given) for
// browsers and scripts, and the local unix socket (mode 0600, root only) that `lvsd status` and the other
// local CLI commands use — trusted as admin, because only root can open it.
import { chmod, lstat, unlink } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { buildApi, connectEvents } from './server.js';
import { EventLog } from './event-log.js';
import { SessionTable } from './sessions.js';
import { History } from './history.js';
import type { DirectorPort } from '../director/port.js';
import type { StateStore } from '../state/store.js';
import type { Api } from './types.js';
import { MAX_PEM_BYTES, pemText, readCapped } from '../read-capped.js';

export const DEFAULT_LISTEN = '127.0.0.1:9180';

export interface ApiListenConfig {
  /** "host:port" or "[v6]:port"; default 127.0.0.1:9180. */
  listen?: string;
  /** Unix socket path; absent/null = no socket. */
  socket?: string | null;
  tls?: { cert: string; key: string } | null;
  /** Host header names answered besides localhost and the listener's own address. */
  allowedHosts?: readonly string[];
  /** The graphs drawn from this Prometheus. */
  prometheus?: { url: string; match: string };
}

export interface RunningApi {
  /** Base URL of the TCP listener, e.g. http://127.0.0.1:9180 */
  url: string;
  socket: string | null;
  tcp: Api;
  local: Api | null;
  events: EventLog;
  close(): Promise<void>;
}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(listen.trim());
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  if (m === null || host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new Error(`api.listen: "${listen}" is not host:port (e.g. 127.0.0.1:9180 or [::1]:9180)`);
  }
  return { host, port };
}

async function removeStaleSocket(path: string): Promise<void> {
  try {
    const st = await lstat(path);
    if (!st.isSocket()) throw new Error(`api.socket: ${path} exists and is not a socket; refusing to replace it`);
    await unlink(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * api.tls.key / api.tls.cert, read before anything starts. A FIFO there held the start for ever (systemd then
 * killed lvsd for never saying READY) and /dev/zero filled the heap; each is now an error naming the file.
 */
async function readPem(file: string, what: 'key' | 'cert'): Promise<string> {
  try {
    return pemText(await readCapped(file, { max: MAX_PEM_BYTES }));
  } catch (e) {
    throw new Error(`api.tls.${what} ${file}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

export async function startApi(
  cfg: ApiListenConfig,
  deps: { director: DirectorPort; store: StateStore; logger?: FastifyBaseLogger | false; webuiDir?: string | null },
): Promise<RunningApi> {
  const { host, port } = parseListen(cfg.listen ?? DEFAULT_LISTEN);
  const https = cfg.tls ? { key: await readPem(cfg.tls.key, 'key'), cert: await readPem(cfg.tls.cert, 'cert') } : null;
  const events = new EventLog();
  const off = connectEvents(deps.director, events);
  // browser sessions are kept in the state file, so a restart does not log everyone out
  const log = deps.logger === false ? undefined : deps.logger;
  const sessions = new SessionTable(undefined, undefined, undefined, {
    load: () => deps.store.sessionRecords(),
    save: (records) => deps.store.saveSessions(records),
    secret: deps.store.cookieSecret,
    onError: (e) => log?.warn({ err: e, file: deps.store.file }, 'could not save the browser sessions to the state file; they work until lvsd restarts'),
  });
  // Beside the state file: the graphs of the last hours survive a restart.
  const history = new History(deps.director, {
    file: join(dirname(deps.store.file), 'history.bin'),
    onError: (e) => log?.warn({ err: e }, 'graph history not kept on disk; the graphs go on in memory'),
    ...(cfg.prometheus === undefined ? {} : { prometheus: cfg.prometheus }),
  }).start();
  const shared = { director: deps.director, store: deps.store, logger: deps.logger ?? false, events, sessions, history };
  const tcp = await buildApi({ ...shared, https, webuiDir: deps.webuiDir, processMetrics: true, allowedHosts: cfg.allowedHosts ?? [] });
  let local: Api | null = null;
  try {
    const address = await tcp.listen({ host, port });
    let socket: string | null = null;
    if (cfg.socket) {
      socket = cfg.socket;
      mkdirSync(dirname(socket), { recursive: true, mode: 0o755 });
      await removeStaleSocket(socket);
      local = await buildApi({ ...shared, localAdmin: true, webuiDir: null });
      // the socket is born 0600 (umask), then chmod makes sure of it
      const old = process.umask(0o177);
      try {
        await local.listen({ path: socket });
      } finally {
        process.umask(old);
      }
      await chmod(socket, 0o600);
    }
    const sock = socket;
    const localApi = local;
    return {
      url: address,
      socket,
      tcp,
      local,
      events,
      async close() {
        off();
        history.stop();
        await Promise.allSettled([tcp.close(), localApi?.close()]);
        await sessions.flushed();
        if (sock !== null) await unlink(sock).catch(() => undefined);
      },
    };
  } catch (e) {
    off();
    history.stop();
    await tcp.close();
    await local?.close();
    throw e;
  }
}
