// `lvsd status [--json]`: asks the running daemon over its local admin socket
// (GET /api/v1/status on api.socket, served by the API) and prints the state. The socket comes
// from --socket, else from the config's api.socket (--config, default /etc/lvsd/lvsd.yaml when it
// exists), else /run/lvsd/lvsd.sock. "Not running" is a clear message and exit code 3.
import { request } from 'node:http';
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import { formatError } from '../config/errors.js';
import { DEFAULTS } from '../config/normalise.js';
import { EXIT, UsageError, parse, type Command, type Io } from './command.js';

export const DEFAULT_CONFIG = '/etc/lvsd/lvsd.yaml';
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

/**
 * The fields of GET /api/v1/status that the human view shows (the API owns the document and may
 * add more; unknown scalar top-level fields are printed as key: value, and missing ones as "-").
 */
export interface StatusView {
  node?: { name: string };
  instances?: { name: string; state: string; priority: number; interface?: string; virtualRouterId?: number }[];
  virtualServers?: {
    id: string;
    name?: string;
    scheduler?: string;
    quorum?: number | string;
    realServers?: { id: string; health?: string; weight?: number }[];
  }[];
  /** Anything else the API reports (uptime, dataplane, …). */
  [extra: string]: unknown;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
function str(v: unknown): string {
  if (v === undefined || v === null) return '-';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObj) : []);

/**
 * Human view of the status document. Tolerant of its exact shape (the API owns it): it prints the
 * VRRP instances, virtual servers and real servers it finds, and any other top-level fields as
 * key: value.
 */
export function renderStatus(doc: unknown): string {
  if (!isObj(doc)) return JSON.stringify(doc, null, 2);
  const out: string[] = [];
  const node = doc.node;
  if (node !== undefined) out.push(`node: ${isObj(node) ? str(node.name) : str(node)}`);
  for (const [k, v] of Object.entries(doc)) {
    if (['node', 'instances', 'vrrp', 'virtualServers'].includes(k)) continue;
    if (!isObj(v) && !Array.isArray(v)) out.push(`${k}: ${str(v)}`);
  }
  const instances = list(doc.instances ?? (isObj(doc.vrrp) ? doc.vrrp.instances : undefined));
  if (instances.length) {
    out.push('', 'VRRP instances:');
    for (const i of instances) out.push(`  ${str(i.name)}  ${str(i.state)}  priority ${str(i.priority ?? i.effectivePriority)}${i.interface !== undefined ? `  on ${str(i.interface)}` : ''}${i.virtualRouterId !== undefined ? `  vrid ${str(i.virtualRouterId)}` : ''}`);
  }
  const services = list(doc.virtualServers);
  if (services.length) {
    out.push('', 'Virtual servers:');
    for (const v of services) {
      const id = v.id !== undefined && v.id !== v.name ? ` (${str(v.id)})` : '';
      out.push(`  ${str(v.name ?? v.id)}${id}${v.scheduler !== undefined ? `  ${str(v.scheduler)}` : ''}${v.quorum !== undefined ? `  quorum ${str(v.quorum)}` : ''}`);
      for (const r of list(v.realServers))
        out.push(`    ${str(r.id ?? r.address)}  ${str(r.health ?? r.state ?? r.status)}  weight ${str(r.weight ?? r.effectiveWeight)}`);
    }
  }
  return out.join('\n').trim();
}

async function socketFromConfig(configPath: string | undefined, io: Io): Promise<string> {
  const path = configPath ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
  if (path === undefined) return DEFAULTS.apiSocket;
  const r = await loadConfig(path);
  if (!r.ok) {
    for (const e of r.errors) io.err(formatError(e));
    throw new UsageError(`cannot find the admin socket: ${path} is invalid (use --socket PATH)`);
  }
  return r.config.api.socket;
}

export const statusCommand: Command = {
  name: 'status',
  summary: "print the running daemon's state (VRRP instances, virtual and real servers)",
  usage: 'status [--json] [--socket PATH | --config FILE]',
  async run(argv, io) {
    const { values } = parse(argv, { json: { type: 'boolean' }, socket: { type: 'string' }, config: { type: 'string', short: 'c' } });
    const socket = values.socket ?? (await socketFromConfig(values.config, io));
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
    io.out(values.json === true ? JSON.stringify(doc, null, 2) : renderStatus(doc));
    return EXIT.ok;
  },
};
