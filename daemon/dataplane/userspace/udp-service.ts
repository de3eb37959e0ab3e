// One UDP virtual server of the userspace proxy. A "connection" is a client address:port: its first
// datagram picks a real server and opens a connected socket to it; replies come back through the VIP
// socket. Sessions expire after idleTimeoutMs without traffic (one sweep timer per service, not one
// timer per session). A connected UDP socket learns of ICMP port-unreachable as ECONNREFUSED: the
// session then moves to the next real server and resends its last datagram (connect retry for UDP).
import { createSocket, type Socket } from 'node:dgram';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../types.js';
import { Pool, type RealServer } from './backend-pool.js';
import { Listener, udpBindable } from './listener.js';
import { proxyV2 } from './proxy-protocol.js';

export interface UdpServiceOptions {
  idleTimeoutMs: number;
  bindRetryMs: number;
  /** PROXY v2 header in front of every datagram (v1 has no UDP form). */
  proxyProtocol?: 1 | 2;
  logger?: Logger;
}

interface Session {
  key: string;
  address: string;
  port: number;
  rs: RealServer;
  sock: Socket;
  lastSeen: number;
  last: Buffer | undefined;
  tried: Set<RealServer> | undefined;
  /** Datagrams that arrived before connect() finished (a connected socket cannot send earlier). */
  queue: Buffer[][] | undefined;
}

export class UdpService {
  readonly pool: Pool;
  readonly listener: Listener;
  private vip: Socket | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;
  dropped = 0;

  constructor(
    public spec: ServiceSpec,
    private opts: UdpServiceOptions,
  ) {
    this.pool = new Pool(spec);
    const type = spec.family === 6 ? 'udp6' : 'udp4';
    this.listener = new Listener(
      spec.id,
      udpBindable(
        () => createSocket({ type, ipv6Only: type === 'udp6' }),
        (s) => {
          this.vip = s;
          s.on('message', (msg, from) => {
            this.fromClient(msg, from.address, from.port);
          });
          s.on('error', (e) => this.opts.logger?.warn({ service: spec.id, err: e.message }, 'userspace: UDP socket error'));
        },
      ),
      spec.address ?? '',
      spec.port ?? 0,
      opts.bindRetryMs,
      opts.logger,
    );
    this.sweeper = setInterval(() => {
      this.sweep();
    }, Math.max(250, Math.min(opts.idleTimeoutMs / 4, 5000)));
    this.sweeper.unref();
  }

  update(spec: ServiceSpec, opts: UdpServiceOptions): number {
    this.spec = spec;
    this.opts = opts;
    return this.pool.update(spec);
  }

  listen(): Promise<void> {
    return this.listener.start();
  }

  private fromClient(msg: Buffer, address: string, port: number): void {
    const key = `${address}|${port}`;
    let s = this.sessions.get(key);
    if (s === undefined) {
      const created = this.open(key, address, port, undefined);
      if (created === undefined) return;
      s = created;
    }
    s.lastSeen = performance.now();
    s.last = msg;
    s.rs.inBytes += msg.length;
    this.send(s, msg);
  }

  private send(s: Session, msg: Buffer): void {
    const parts =
      this.opts.proxyProtocol === 2
        ? [proxyV2({ protocol: 'udp', srcAddress: s.address, srcPort: s.port, dstAddress: this.spec.address ?? '', dstPort: this.spec.port ?? 0 }), msg]
        : [msg];
    if (s.queue !== undefined) s.queue.push(parts);
    else s.sock.send(parts);
  }

  private open(key: string, address: string, port: number, tried: Set<RealServer> | undefined): Session | undefined {
    const rs = this.pool.picker.pick(this.pool.servers, address, tried) as RealServer | undefined;
    if (rs === undefined) {
      this.dropped++;
      return undefined;
    }
    const sock = createSocket(rs.address.includes(':') ? 'udp6' : 'udp4');
    const session: Session = { key, address, port, rs, sock, lastSeen: performance.now(), last: undefined, tried, queue: [] };
    rs.active++;
    rs.conns++;
    this.sessions.set(key, session);
    sock.on('message', (reply) => {
      session.lastSeen = performance.now();
      rs.outBytes += reply.length;
      this.vip?.send(reply, session.port, session.address);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ECONNREFUSED') return;
      // The real server's port is closed: move this client to the next one and resend.
      this.closeSession(session);
      rs.refused++;
      const t = session.tried ?? new Set<RealServer>();
      t.add(rs);
      const next = this.open(key, address, port, t);
      if (next !== undefined && session.last !== undefined) {
        next.last = session.last;
        this.send(next, session.last);
      }
    });
    sock.connect(rs.port, rs.address, () => {
      const queued = session.queue ?? [];
      session.queue = undefined;
      for (const parts of queued) sock.send(parts);
    });
    return session;
  }

  private closeSession(s: Session): void {
    if (this.sessions.get(s.key) === s) this.sessions.delete(s.key);
    s.rs.active--;
    try {
      s.sock.close();
    } catch {
      /* already closed */
    }
  }

  private sweep(): void {
    const limit = performance.now() - this.opts.idleTimeoutMs;
    for (const s of this.sessions.values()) if (s.lastSeen < limit) this.closeSession(s);
  }

  close(): void {
    this.listener.stop();
    clearInterval(this.sweeper);
    // Sessions finish their current exchange and age out; the sweeper is gone, so close them now.
    for (const s of [...this.sessions.values()]) this.closeSession(s);
  }

  destroyAll(): void {
    this.close();
  }
}
