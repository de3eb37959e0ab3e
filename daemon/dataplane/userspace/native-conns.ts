// The connections of one TCP virtual server when the native relay carries them (engine 'native'):
// the accept, the scheduler's pick and the retry on the next real server stay here, the connect and
// the copying run in the relay thread (native-relay.ts). Logs are the handles engine's; a connection is
// counted in conns when its real server is picked (taken back if that server refuses).
import { getSystemErrorName } from 'node:util';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../types.js';
import type { Pool, RealServer } from './backend-pool.js';
import { proxyHeader, type ProxyProtocolVersion } from './proxy-protocol.js';
import type { CloseReason, NativeRelay, RelayedConnection } from './native-relay.js';

export interface NativeConnsOptions {
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  proxyProtocol?: ProxyProtocolVersion;
  logger?: Logger;
}

/** What an accepted libuv TCP handle offers (process.binding('tcp_wrap').TCP). */
export interface AcceptedHandle {
  readonly fd: number;
  getpeername(out: { address?: string; port?: number }): number;
  getsockname(out: { address?: string; port?: number }): number;
  close(): void;
}

function errName(errno: number): string {
  try {
    return getSystemErrorName(-Math.abs(errno));
  } catch {
    return `errno ${errno}`;
  }
}

class Conn implements RelayedConnection {
  slot = -1;
  token = 0;
  rs: RealServer | undefined;
  tried: Set<RealServer> | undefined;
  constructor(
    readonly owner: NativeConns,
    readonly source: string,
    readonly head: Buffer | null,
  ) {}
  onRefused(errno: number): void {
    this.owner.refused(this, errno);
  }
  onClosed(fromClient: number, fromServer: number, why: CloseReason): void {
    this.owner.closed(this, fromClient, fromServer, why);
  }
}

export class NativeConns {
  /** Connections that found no real server at all. */
  dropped = 0;
  private readonly open = new Set<Conn>();

  constructor(
    private readonly relay: NativeRelay,
    private readonly pool: Pool,
    private spec: ServiceSpec,
    private opts: NativeConnsOptions,
  ) {}

  update(spec: ServiceSpec, opts: NativeConnsOptions): void {
    this.spec = spec;
    this.opts = opts;
  }

  accept(handle: AcceptedHandle): void {
    const peer: { address?: string; port?: number } = {};
    handle.getpeername(peer);
    const source = peer.address ?? '';
    let head: Buffer | null = null;
    if (this.opts.proxyProtocol !== undefined) {
      const local: { address?: string; port?: number } = {};
      handle.getsockname(local);
      head = proxyHeader(this.opts.proxyProtocol, { protocol: 'tcp', srcAddress: source, srcPort: peer.port ?? 0, dstAddress: local.address ?? '', dstPort: local.port ?? 0 });
    }
    const conn = new Conn(this, source, head);
    const rs = this.pick(conn);
    if (rs === undefined) {
      handle.close();
      return;
    }
    const r = this.relay.adopt(conn, handle.fd, rs.address, rs.port, head, this.opts.connectTimeoutMs, this.opts.idleTimeoutMs);
    // The relay holds its own descriptor of the client now.
    handle.close();
    if (typeof r === 'number') {
      rs.active--;
      rs.conns--;
      conn.rs = undefined;
      this.opts.logger?.warn({ service: this.spec.id, client: source, reason: errName(r) }, 'userspace: the relay could not take a new connection');
      return;
    }
    [conn.slot, conn.token] = r;
    this.open.add(conn);
  }

  /** The scheduler's next real server for conn (never one it tried), counted active; undefined: none. */
  private pick(conn: Conn): RealServer | undefined {
    const rs = this.pool.picker.pick(this.pool.servers, conn.source, conn.tried) as RealServer | undefined;
    if (rs === undefined) {
      this.dropped++;
      this.opts.logger?.warn({ service: this.spec.id, client: conn.source, tried: conn.tried?.size ?? 0 }, 'userspace: no real server for a new connection');
      return undefined;
    }
    // Counted as made now, taken back if refused: the relay reports no successful connect (one
    // crossing into JavaScript fewer per connection).
    rs.active++;
    rs.conns++;
    conn.rs = rs;
    return rs;
  }

  refused(conn: Conn, errno: number): void {
    const rs = conn.rs;
    if (rs === undefined) return;
    rs.active--;
    rs.conns--;
    rs.refused++;
    conn.rs = undefined;
    this.opts.logger?.info({ service: this.spec.id, realServer: rs.id, reason: errno === 110 ? 'connect timeout' : errName(errno) }, 'userspace: real server did not take the connection; trying the next');
    (conn.tried ??= new Set()).add(rs);
    const next = this.pick(conn);
    if (next === undefined) this.relay.drop(conn.slot, conn.token);
    else this.relay.retry(conn.slot, conn.token, next.address, next.port, conn.head);
  }

  closed(conn: Conn, fromClient: number, fromServer: number, why: CloseReason): void {
    this.open.delete(conn);
    const rs = conn.rs;
    if (rs === undefined) return;
    rs.active--;
    rs.inBytes += fromClient;
    rs.outBytes += fromServer;
    if (why === 'idle') this.opts.logger?.debug({ service: this.spec.id, client: conn.source }, 'userspace: idle timeout');
  }

  /** Ends every connection (process shutdown). */
  destroyAll(): void {
    for (const c of this.open) this.relay.drop(c.slot, c.token);
  }

  get size(): number {
    return this.open.size;
  }
}
