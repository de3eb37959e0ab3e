// The fast TCP engine of the userspace proxy: relays between libuv TCP handles directly, without a
// net.Socket (and its two stream states, a dozen listeners and a timer) per side. Measured here on
// loopback with nginx behind: ~95 µs of CPU per new connection against ~200 µs through net.Socket, and
// ~12 µs per keepalive request against ~17–30 µs.
//
// It uses process.binding('tcp_wrap' / 'stream_wrap') — Node's own building blocks under net.Socket,
// documented as deprecated (DEP0111) but present in Node 20–24. handleEngineAvailable() checks they
// are there; the backend falls back to the net.Socket engine (tcp-service.ts) when they are not.
//
// Per connection: accept → pick a real server → connect (status ≠ 0 or no answer in connectTimeoutMs:
// the next real server) → optional PROXY header → both handles read; each read is written to the other
// side; when a write goes asynchronous and too much is pending, the reading side stops until it drains.
// EOF on one side becomes a shutdown (half-close) on the other; both EOFs, an error or the idle timeout
// close both. Idle and connect timeouts are checked by one sweep per service, not a timer per socket.
import { getSystemErrorName } from 'node:util';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../types.js';
import { Pool, type RealServer } from './backend-pool.js';
import { proxyHeader, type ProxyProtocolVersion } from './proxy-protocol.js';
import { Listener, type Bindable } from './listener.js';
import { NativeService } from './native-service.js';
import { nativeRelays } from './native-relay.js';

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-explicit-any */
// The bindings are untyped; this file keeps every use of them in one place.

interface Bindings {
  TCP: any;
  TCPConnectWrap: any;
  SERVER: number;
  SOCKET: number;
  WriteWrap: any;
  ShutdownWrap: any;
  state: Int32Array;
  kReadBytesOrError: number;
  kArrayBufferOffset: number;
  kLastWriteWasAsync: number;
}

let bindings: Bindings | null | undefined;

function load(): Bindings | null {
  if (bindings !== undefined) return bindings;
  try {
    const binding = (process as unknown as { binding: (name: string) => any }).binding;
    const tcp = binding('tcp_wrap');
    const stream = binding('stream_wrap');
    bindings = {
      TCP: tcp.TCP,
      TCPConnectWrap: tcp.TCPConnectWrap,
      SERVER: tcp.constants.SERVER,
      SOCKET: tcp.constants.SOCKET,
      WriteWrap: stream.WriteWrap,
      ShutdownWrap: stream.ShutdownWrap,
      state: stream.streamBaseState,
      kReadBytesOrError: stream.kReadBytesOrError,
      kArrayBufferOffset: stream.kArrayBufferOffset,
      kLastWriteWasAsync: stream.kLastWriteWasAsync,
    };
    if (typeof bindings.TCP !== 'function' || !(bindings.state instanceof Int32Array)) bindings = null;
  } catch {
    bindings = null;
  }
  return bindings;
}

export function handleEngineAvailable(): boolean {
  return load() !== null;
}

export interface HandleServiceOptions {
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  proxyProtocol?: ProxyProtocolVersion;
  bindRetryMs: number;
  logger?: Logger;
  /** Called with the listening handle once bound (the backend passes it on to its helper processes). */
  onBound?: (serviceId: string, handle: unknown) => void;
  /** Accept, connect and copy in the native relay thread (engine 'native'); this class then only binds. */
  native?: boolean;
  /** Native relay threads in this process that accept on the service's socket (default 1). */
  relayThreads?: number;
}

/** Pending bytes on one side above which the other side stops reading (backpressure). */
const HIGH_WATER = 256 * 1024;
const UV_EOF = -4095;

function errName(code: number): string {
  try {
    return getSystemErrorName(code);
  } catch {
    return `error ${code}`;
  }
}

/** One side of a relayed connection. */
class Side {
  pending = 0;
  eof = false;
  closed = false;
  bytesRead = 0;
  paused = false;
  other!: Side;
  constructor(
    readonly handle: any,
    readonly conn: Conn,
  ) {}
}

class Conn {
  client: Side;
  upstream: Side | undefined;
  rs: RealServer | undefined;
  tried: Set<RealServer> | undefined;
  lastActive: number;
  connecting = false;
  connectStarted = 0;
  done = false;
  constructor(
    clientHandle: any,
    readonly source: string,
    readonly sourcePort: number,
    now: number,
  ) {
    this.client = new Side(clientHandle, this);
    this.lastActive = now;
  }
}

export class HandleTcpService {
  readonly pool: Pool;
  readonly listener: Listener;
  private droppedHere = 0;
  private server: any;
  private readonly conns = new Set<Conn>();
  private readonly sweeper: NodeJS.Timeout;
  /** A coarse clock for idle checks, advanced by the sweeper: no clock read per packet. */
  private now = performance.now();
  private readonly b: Bindings;
  private readonly native: NativeService | undefined;

  constructor(
    public spec: ServiceSpec,
    private opts: HandleServiceOptions,
  ) {
    const b = load();
    if (b === null) throw new Error('the handle engine needs process.binding(tcp_wrap, stream_wrap)');
    this.b = b;
    this.pool = new Pool(spec);
    if (opts.native === true) {
      const relays = nativeRelays(opts.relayThreads ?? 1);
      if (relays === null) throw new Error('the native engine needs build/Release/lvsd_relay.node');
      this.native = new NativeService(relays, this.pool, spec, opts);
    }
    const bindable: Bindable = {
      bind: (host, port, done) => {
        const server = new b.TCP(b.SERVER);
        let err: number = host.includes(':') ? server.bind6(host, port, 1 /* UV_TCP_IPV6ONLY */) : server.bind(host, port);
        // The native engine's thread calls listen(2) and accepts itself; libuv never watches the socket.
        if (err === 0) err = this.native !== undefined ? this.native.listen(server.fd as number) : server.listen(4096);
        if (err !== 0) {
          server.close();
          const e = new Error(errName(err)) as NodeJS.ErrnoException;
          e.code = errName(err);
          done(e);
          return;
        }
        server.onconnection = (status: number, handle: any) => {
          if (status === 0 && handle !== undefined) this.accept(handle);
        };
        this.server = server;
        this.opts.onBound?.(spec.id, server);
        done();
      },
      unbind: () => {
        if (this.server !== undefined) this.native?.unlisten(this.server.fd as number);
        this.server?.close();
        this.server = undefined;
      },
    };
    this.listener = new Listener(spec.id, bindable, spec.address ?? '', spec.port ?? 0, opts.bindRetryMs, opts.logger);
    const tick = Math.max(50, Math.min(1000, opts.connectTimeoutMs / 4));
    this.sweeper = setInterval(() => {
      this.sweep();
    }, tick);
    this.sweeper.unref();
  }

  update(spec: ServiceSpec, opts: HandleServiceOptions): number {
    this.spec = spec;
    this.opts = opts;
    const ops = this.pool.update(spec);
    this.native?.update(spec, opts);
    return ops;
  }

  /** Connections that found no real server at all. */
  get dropped(): number {
    return this.native?.dropped ?? this.droppedHere;
  }

  /** Brings the pool's counters up to date (the native engine counts in its thread). */
  refreshCounts(): void {
    this.native?.refreshCounts();
  }

  listen(): Promise<void> {
    return this.listener.start();
  }

  /** Accepts on a listening handle bound by another process (helper processes of the backend). */
  adopt(server: unknown): void {
    const h = server as any;
    this.server = h;
    if (this.native !== undefined) {
      const err = this.native.listen(h.fd as number);
      this.listener.state = err === 0 ? 'listening' : 'failed';
      if (err !== 0) this.listener.lastError = errName(err);
      return;
    }
    h.onconnection = (status: number, handle: any) => {
      if (status === 0 && handle !== undefined) this.accept(handle);
    };
    h.listen(4096);
    this.listener.state = 'listening';
  }

  private accept(handle: any): void {
    const peer: { address?: string; port?: number } = {};
    handle.getpeername(peer);
    handle.setNoDelay(true);
    const conn = new Conn(handle, peer.address ?? '', peer.port ?? 0, this.now);
    this.conns.add(conn);
    this.connectNext(conn);
  }

  private connectNext(conn: Conn): void {
    const rs = this.pool.picker.pick(this.pool.servers, conn.source, conn.tried) as RealServer | undefined;
    if (rs === undefined) {
      this.droppedHere++;
      this.opts.logger?.warn({ service: this.spec.id, client: conn.source, tried: conn.tried?.size ?? 0 }, 'userspace: no real server for a new connection');
      this.finish(conn);
      return;
    }
    const b = this.b;
    const up = new b.TCP(b.SOCKET);
    const req = new b.TCPConnectWrap();
    conn.rs = rs;
    conn.connecting = true;
    // The clock, not the sweep's cached `now` (a tick old at most): with it a connect timed out up to a tick early.
    conn.connectStarted = performance.now();
    rs.active++;
    const side = new Side(up, conn);
    conn.upstream = side;
    req.oncomplete = (status: number) => {
      if (conn.upstream !== side || conn.done) {
        if (!side.closed) {
          side.closed = true;
          up.close();
        }
        return;
      }
      conn.connecting = false;
      if (status !== 0) {
        this.refused(conn, rs, errName(status));
        return;
      }
      rs.conns++;
      up.setNoDelay(true);
      this.start(conn, side);
    };
    const err: number = rs.address.includes(':') ? up.connect6(req, rs.address, rs.port) : up.connect(req, rs.address, rs.port);
    if (err !== 0) {
      conn.connecting = false;
      this.refused(conn, rs, errName(err));
    }
  }

  private refused(conn: Conn, rs: RealServer, reason: string): void {
    rs.active--;
    rs.refused++;
    const side = conn.upstream;
    conn.upstream = undefined;
    conn.rs = undefined;
    if (side !== undefined && !side.closed) {
      side.closed = true;
      side.handle.close();
    }
    this.opts.logger?.info({ service: this.spec.id, realServer: rs.id, reason }, 'userspace: real server did not take the connection; trying the next');
    (conn.tried ??= new Set()).add(rs);
    this.connectNext(conn);
  }

  private start(conn: Conn, up: Side): void {
    const client = conn.client;
    client.other = up;
    up.other = client;
    if (this.opts.proxyProtocol !== undefined) {
      const local: { address?: string; port?: number } = {};
      client.handle.getsockname(local);
      this.write(up, proxyHeader(this.opts.proxyProtocol, {
        protocol: 'tcp', srcAddress: conn.source, srcPort: conn.sourcePort, dstAddress: local.address ?? '', dstPort: local.port ?? 0,
      }));
    }
    this.reader(client);
    this.reader(up);
    client.handle.readStart();
    up.handle.readStart();
  }

  private reader(src: Side): void {
    const b = this.b;
    const conn = src.conn;
    src.handle.onread = (ab: ArrayBuffer | undefined) => {
      const n = b.state[b.kReadBytesOrError] ?? 0;
      if (n > 0 && ab !== undefined) {
        conn.lastActive = this.now;
        src.bytesRead += n;
        this.write(src.other, Buffer.from(ab, b.state[b.kArrayBufferOffset] ?? 0, n));
      } else if (n < 0) {
        if (n !== UV_EOF) {
          this.finish(conn);
          return;
        }
        src.eof = true;
        src.handle.readStop();
        const dst = src.other;
        if (dst.eof) {
          this.finish(conn);
          return;
        }
        // Half-close: pass the FIN on once what is pending has been written.
        const sreq = new b.ShutdownWrap();
        sreq.handle = dst.handle;
        sreq.oncomplete = () => {
          if (dst.eof) this.finish(conn);
        };
        if (dst.closed || dst.handle.shutdown(sreq) !== 0) this.finish(conn);
      }
    };
  }

  private write(dst: Side, buf: Buffer): void {
    if (dst.closed) return;
    const b = this.b;
    const req = new b.WriteWrap();
    req.handle = dst.handle;
    req.buffer = buf; // keeps the bytes alive while the write is pending
    const err: number = dst.handle.writeBuffer(req, buf);
    if (err !== 0) {
      this.finish(dst.conn);
      return;
    }
    if (b.state[b.kLastWriteWasAsync] !== 0) {
      dst.pending += buf.length;
      req.oncomplete = (status: number) => {
        dst.pending -= buf.length;
        if (status < 0) {
          this.finish(dst.conn);
          return;
        }
        const src = dst.other as Side | undefined;
        if (src !== undefined && src.paused && dst.pending < HIGH_WATER / 2 && !src.closed && !src.eof) {
          src.paused = false;
          src.handle.readStart();
        }
      };
      const src = dst.other as Side | undefined;
      if (src !== undefined && dst.pending > HIGH_WATER && !src.paused && !src.eof) {
        src.paused = true;
        src.handle.readStop();
      }
    }
  }

  private finish(conn: Conn): void {
    if (conn.done) return;
    conn.done = true;
    this.conns.delete(conn);
    for (const side of [conn.client, conn.upstream]) {
      if (side !== undefined && !side.closed) {
        side.closed = true;
        side.handle.readStop();
        side.handle.close();
      }
    }
    const rs = conn.rs;
    if (rs !== undefined && !conn.connecting) {
      rs.active--;
      rs.inBytes += conn.client.bytesRead;
      rs.outBytes += conn.upstream?.bytesRead ?? 0;
    } else if (rs !== undefined) {
      rs.active--;
    }
  }

  private sweep(): void {
    this.now = performance.now();
    if (this.listener.state === 'stopped' && this.conns.size === 0) clearInterval(this.sweeper);
    const idleLimit = this.now - this.opts.idleTimeoutMs;
    const connectLimit = this.now - this.opts.connectTimeoutMs;
    for (const conn of this.conns) {
      if (conn.connecting && conn.connectStarted < connectLimit && conn.rs !== undefined) {
        conn.connecting = false;
        this.refused(conn, conn.rs, 'connect timeout');
      } else if (!conn.connecting && conn.lastActive < idleLimit) {
        this.opts.logger?.debug({ service: this.spec.id, client: conn.source }, 'userspace: idle timeout');
        this.finish(conn);
      }
    }
  }

  /** Stops accepting; established connections run on until they end (the sweeper then stops too). */
  close(): void {
    this.listener.stop();
    this.native?.close(false);
  }

  destroyAll(): void {
    this.listener.stop();
    clearInterval(this.sweeper);
    for (const c of [...this.conns]) this.finish(c);
    this.native?.close(true);
  }
}
