// One TCP virtual server of the userspace proxy: a listener on VIP:port and a relay per connection.
//
// Speed (the notes: a naive pipe() proxy reached 0.82× HAProxy on keepalive and 0.54× on new
// connections): no stream pipe() machinery — 'data' → write() with pause/resume on backpressure; Nagle
// off on both sides; the client socket is accepted paused (pauseOnConnect) so nothing is read before the
// real server is connected; the idle timer lives on the client socket only (Node refreshes it on reads
// AND writes there, so it sees traffic both ways); byte counts are read once at close from the socket.
//
// Connect retry: when a real server refuses (or does not answer within connectTimeoutMs) the next one
// the scheduler gives — never one already tried — gets the connection; the client never notices.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../types.js';
import { Pool, type RealServer } from './backend-pool.js';
import { proxyHeader, type ProxyProtocolVersion } from './proxy-protocol.js';
import { Listener } from './listener.js';

export interface TcpServiceOptions {
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  proxyProtocol?: ProxyProtocolVersion;
  bindRetryMs: number;
  logger?: Logger;
}

export class TcpService {
  readonly pool: Pool;
  private readonly server: Server;
  readonly listener: Listener;
  /** Connections that found no real server at all. */
  dropped = 0;
  private readonly open = new Set<Socket>();

  constructor(
    public spec: ServiceSpec,
    private opts: TcpServiceOptions,
  ) {
    this.pool = new Pool(spec);
    this.server = createServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, (client) => {
      this.accept(client);
    });
    this.listener = new Listener(spec.id, this.server, spec.address ?? '', spec.port ?? 0, opts.bindRetryMs, opts.logger);
  }

  update(spec: ServiceSpec, opts: TcpServiceOptions): number {
    this.spec = spec;
    this.opts = opts;
    return this.pool.update(spec);
  }

  private accept(client: Socket): void {
    this.open.add(client);
    client.on('error', noop);
    client.once('close', () => this.open.delete(client));
    this.connectTo(client, undefined);
  }

  private connectTo(client: Socket, tried: Set<RealServer> | undefined): void {
    if (client.destroyed) return;
    const rs = this.pool.picker.pick(this.pool.servers, client.remoteAddress ?? '', tried) as RealServer | undefined;
    if (rs === undefined) {
      this.dropped++;
      this.opts.logger?.warn({ service: this.spec.id, client: client.remoteAddress, tried: tried?.size ?? 0 }, 'userspace: no real server for a new connection');
      client.destroy();
      return;
    }
    rs.active++;
    const upstream = connect({ host: rs.address, port: rs.port, noDelay: true, allowHalfOpen: true });
    let connected = false;
    const retry = (reason: string): void => {
      if (connected) return;
      connected = true; // settle once
      rs.active--;
      rs.refused++;
      upstream.destroy();
      this.opts.logger?.info({ service: this.spec.id, realServer: rs.id, reason }, 'userspace: real server did not take the connection; trying the next');
      const t = tried ?? new Set<RealServer>();
      t.add(rs);
      this.connectTo(client, t);
    };
    upstream.once('error', (e: NodeJS.ErrnoException) => {
      retry(e.code ?? e.message);
    });
    const timer = setTimeout(() => {
      retry('connect timeout');
    }, this.opts.connectTimeoutMs);
    upstream.once('connect', () => {
      clearTimeout(timer);
      if (connected) return;
      connected = true;
      upstream.removeAllListeners('error');
      rs.conns++;
      if (this.opts.proxyProtocol !== undefined) {
        upstream.write(
          proxyHeader(this.opts.proxyProtocol, {
            protocol: 'tcp',
            srcAddress: client.remoteAddress ?? '',
            srcPort: client.remotePort ?? 0,
            dstAddress: client.localAddress ?? '',
            dstPort: client.localPort ?? 0,
          }),
        );
      }
      this.relay(client, upstream, rs);
    });
  }

  private relay(client: Socket, upstream: Socket, rs: RealServer): void {
    let closed = false;
    const finish = (): void => {
      if (closed) return;
      closed = true;
      rs.active--;
      rs.inBytes += client.bytesRead;
      rs.outBytes += upstream.bytesRead;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (d: Buffer) => {
      if (!upstream.write(d)) client.pause();
    });
    upstream.on('data', (d: Buffer) => {
      if (!client.write(d)) upstream.pause();
    });
    upstream.on('drain', () => client.resume());
    client.on('drain', () => upstream.resume());
    // Half-close travels: a client that sends FIN after its request still gets the whole answer.
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    upstream.on('error', finish);
    client.on('error', finish);
    client.on('close', finish);
    upstream.on('close', finish);
    client.setTimeout(this.opts.idleTimeoutMs, finish);
    client.resume();
  }

  listen(): Promise<void> {
    return this.listener.start();
  }

  /** Stops accepting; established connections run on until they end. */
  close(): void {
    this.listener.stop();
  }

  /** Ends every connection too (process shutdown). */
  destroyAll(): void {
    this.listener.stop();
    for (const s of this.open) s.destroy();
  }
}

function noop(): void {
  /* errors are handled where the relay is set up */
}
