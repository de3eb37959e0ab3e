// The native relay (daemon/dataplane/userspace/native/relay.c, built by node-gyp into
// build/Release/lvsd_relay.node): after JavaScript accepted a client and chose its real server, one epoll
// thread connects and copies the bytes both ways. JavaScript keeps the decisions — the scheduler's
// pick, the next real server after a refusal or a connect timeout, the PROXY header — and hears about
// each connection in batches: refused (the connect failed) and closed (with its byte counts).
//
// Why: a profile of the handles engine at ~2,500 new connections/s (perf, one process) put 49 % of its
// CPU under the read callbacks (read → JavaScript → write, EOF → shutdown) and 32 % under accept and
// connect; the kernel's own share (71 %, with the loopback peers' softirq work) is the same for any
// proxy. Here a new connection costs JavaScript one accept, one getpeername and one call; a keepalive
// request costs it nothing, and the copying runs on a second core.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface RelayAddon {
  open(onEvents: (records: Float64Array) => void): object;
  close(relay: object): void;
  adopt(relay: object, fd: number, token: number, host: string, port: number, head: Buffer | null, connectTimeoutMs: number, idleTimeoutMs: number): number;
  retry(relay: object, slot: number, token: number, host: string, port: number, head: Buffer | null): void;
  drop(relay: object, slot: number, token: number): void;
  count(relay: object): number;
}

const EV_REFUSED = 1;
const REC = 5;

/** Why a relayed connection ended (relay.c's CLOSE_*). */
export type CloseReason = 'done' | 'reset' | 'idle' | 'drop';
const REASONS: CloseReason[] = ['done', 'reset', 'idle', 'drop'];

/** One relayed connection's side of the story, told to whoever adopted it. */
export interface RelayedConnection {
  /** The connect failed (errno; ETIMEDOUT after the connect timeout): call retry() or drop(). */
  onRefused(errno: number): void;
  onClosed(fromClient: number, fromServer: number, why: CloseReason): void;
}

let addon: RelayAddon | null | undefined;

/** The addon, or null when it is not built or LVSD_USERSPACE_NATIVE=0 switches it off. */
export function relayAddon(): RelayAddon | null {
  if (addon !== undefined) return addon;
  addon = null;
  if (process.env.LVSD_USERSPACE_NATIVE === '0') return addon;
  const found = ['../../../../build/Release/lvsd_relay.node', '../../../build/Release/lvsd_relay.node']
    .map((p) => fileURLToPath(new URL(p, import.meta.url)))
    .find((p) => existsSync(p));
  if (found !== undefined) addon = createRequire(import.meta.url)(found) as RelayAddon;
  return addon;
}

/** The process's one relay thread and the connections it holds, by token. */
export class NativeRelay {
  private readonly relay: object;
  private readonly conns = new Map<number, RelayedConnection>();
  private nextToken = 1;

  constructor(private readonly lib: RelayAddon) {
    this.relay = lib.open(this.onEvents);
  }

  /**
   * Hands over an accepted client (its descriptor is duplicated; the caller closes its own handle) with
   * the real server to connect to. Returns the connection's [slot, token], or a negative errno.
   */
  adopt(conn: RelayedConnection, fd: number, host: string, port: number, head: Buffer | null, connectTimeoutMs: number, idleTimeoutMs: number): [number, number] | number {
    const token = this.nextToken++;
    const slot = this.lib.adopt(this.relay, fd, token, host, port, head, connectTimeoutMs, idleTimeoutMs);
    if (slot < 0) return slot;
    this.conns.set(token, conn);
    return [slot, token];
  }

  retry(slot: number, token: number, host: string, port: number, head: Buffer | null): void {
    this.lib.retry(this.relay, slot, token, host, port, head);
  }

  drop(slot: number, token: number): void {
    this.lib.drop(this.relay, slot, token);
  }

  /** Connections the thread holds (tests). */
  count(): number {
    return this.lib.count(this.relay);
  }

  private readonly onEvents = (r: Float64Array): void => {
    for (let i = 0; i + REC <= r.length; i += REC) {
      const token = r[i] ?? 0;
      const kind = r[i + 1];
      const c = this.conns.get(token);
      if (c === undefined) continue;
      if (kind === EV_REFUSED) c.onRefused(r[i + 2] ?? 0);
      else {
        this.conns.delete(token);
        c.onClosed(r[i + 2] ?? 0, r[i + 3] ?? 0, REASONS[r[i + 4] ?? 0] ?? 'done');
      }
    }
  };
}

let shared: NativeRelay | null | undefined;

/** The process's relay, opened on first use; null without the addon. */
export function nativeRelay(): NativeRelay | null {
  if (shared !== undefined) return shared;
  const lib = relayAddon();
  shared = lib === null ? null : new NativeRelay(lib);
  return shared;
}
