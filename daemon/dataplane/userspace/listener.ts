// Listening on a VIP that may not be on this host yet. On a BACKUP director the VIP appears only when
// VRRP makes it MASTER, but the dataplane is programmed on both (warm standby). Node cannot set
// IP_FREEBIND, so a bind that fails with EADDRNOTAVAIL is retried every `retryMs` until the address
// appears (a failed bind costs one syscall). If the host sets net.ipv4.ip_nonlocal_bind=1 (and
// net.ipv6.ip_nonlocal_bind=1) — the sysctl form of IP_FREEBIND — the first bind already succeeds.
// Once bound, the socket stays bound when the address leaves and serves again when it returns.
import type { Server } from 'node:net';
import type { Socket as UdpSocket } from 'node:dgram';
import type { Logger } from 'pino';

export type ListenerState = 'idle' | 'listening' | 'waiting-for-address' | 'failed' | 'stopped';

/** Anything that binds like a net.Server or a dgram socket. */
export interface Bindable {
  bind(host: string, port: number, done: (err?: NodeJS.ErrnoException) => void): void;
  unbind(): void;
}

export function serverBindable(server: Server): Bindable {
  return {
    bind: (host, port, done) => {
      const onError = (e: NodeJS.ErrnoException): void => {
        server.removeListener('listening', onListening);
        done(e);
      };
      const onListening = (): void => {
        server.removeListener('error', onError);
        done();
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen({ host, port, backlog: 4096 });
    },
    unbind: () => {
      server.close();
    },
  };
}

export function udpBindable(make: () => UdpSocket, onSocket: (s: UdpSocket) => void): Bindable {
  let current: UdpSocket | undefined;
  return {
    bind: (host, port, done) => {
      const s = make();
      const onError = (e: NodeJS.ErrnoException): void => {
        s.close();
        done(e);
      };
      s.once('error', onError);
      s.bind({ address: host, port, exclusive: true }, () => {
        s.removeListener('error', onError);
        current = s;
        onSocket(s);
        done();
      });
    },
    unbind: () => {
      current?.close();
      current = undefined;
    },
  };
}

export class Listener {
  state: ListenerState = 'idle';
  lastError: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly target: Bindable;

  constructor(
    readonly service: string,
    target: Server | Bindable,
    readonly host: string,
    readonly port: number,
    private readonly retryMs: number,
    private readonly logger?: Logger,
  ) {
    this.target = 'listen' in target ? serverBindable(target) : target;
  }

  /** Resolves after the first attempt, bound or not: a missing address is waited for in the background. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.attempt(resolve);
    });
  }

  private attempt(firstDone?: () => void): void {
    if (this.state === 'stopped') {
      firstDone?.();
      return;
    }
    this.target.bind(this.host, this.port, (err) => {
      if (this.state === 'stopped') {
        if (err === undefined) this.target.unbind();
        firstDone?.();
        return;
      }
      if (err === undefined) {
        if (this.state === 'waiting-for-address') this.logger?.info({ service: this.service }, 'userspace: VIP appeared; listening');
        this.state = 'listening';
        this.lastError = undefined;
      } else {
        const retriable = err.code === 'EADDRNOTAVAIL' || err.code === 'EADDRINUSE';
        if (this.state !== 'waiting-for-address' || this.lastError !== err.code) {
          this.logger?.[retriable ? 'info' : 'error'](
            { service: this.service, address: this.host, port: this.port, code: err.code },
            retriable ? 'userspace: cannot listen yet; retrying until the address is usable' : 'userspace: cannot listen',
          );
        }
        this.lastError = err.code ?? err.message;
        this.state = retriable ? 'waiting-for-address' : 'failed';
        if (retriable) {
          this.timer = setTimeout(() => {
            this.attempt();
          }, this.retryMs);
          this.timer.unref();
        }
      }
      firstDone?.();
    });
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.state === 'listening') this.target.unbind();
    this.state = 'stopped';
  }
}
