// The native relay (daemon/dataplane/userspace/native/relay.c + accept.c, built by node-gyp into
// build/Release/lvsd_relay.node): an epoll thread (one per process, or relayThreads of them) accepts
// on the services' listening sockets, picks the real server with the service's scheduler, connects
// (the next real server after a refusal or a connect timeout), writes the PROXY header and copies the bytes both ways. JavaScript
// keeps the configuration — it hands each service its pool (ids, addresses, weights, the Maglev table
// for mh) whenever it changes — and hears only of refusals and connections that found no real server,
// in batches; it reads the per-real-server counters when it observes.
//
// Why: a profile of the engine before this (JavaScript accepted and chose, the thread connected and
// copied) put 32 % of the process's CPU under accept and connect in JavaScript at ~8,000 new
// connections/s; here a new connection costs JavaScript nothing.
import { loadAddon } from '../../native-addon.js';

/** The native service handle (an external). */
export type ServiceHandle = object & { readonly __service: unique symbol };

export interface RelayAddon {
  open(onEvents: (records: Float64Array) => void): object;
  close(relay: object): void;
  count(relay: object): number;
  service(relay: object): ServiceHandle;
  serviceId(svc: ServiceHandle): number;
  servers(relay: object, svc: ServiceHandle, nids: number[], hosts: string[], ports: number[], weights: number[], mode: number, proxy: number, connectTimeoutMs: number, idleTimeoutMs: number, mhSlots: Int32Array | null): void;
  listen(relay: object, svc: ServiceHandle, fd: number): number;
  unlisten(relay: object, svc: ServiceHandle, fd: number): void;
  closeService(relay: object, svc: ServiceHandle, drop: boolean): void;
  counts(relay: object, svc: ServiceHandle): Float64Array;
}

const EV_REFUSED = 1;
const REC = 4;

/** What a service hears from the thread. */
export interface RelayListener {
  /** The real server `nid` did not take a connection (errno; ETIMEDOUT after the connect timeout); the next one was tried. */
  onRefused(nid: number, errno: number): void;
  /** A new connection found no real server (`tried` refused it) and was closed. */
  onNoRealServer(tried: number): void;
}

let addon: RelayAddon | null | undefined;

/** The addon, or null when it is not built or LVSD_USERSPACE_NATIVE=0 switches it off. */
export function relayAddon(): RelayAddon | null {
  if (addon === undefined) addon = loadAddon('lvsd_relay', 'LVSD_USERSPACE_NATIVE') as RelayAddon | null;
  return addon;
}

/** One relay thread of the process and the services it serves. */
export class NativeRelay {
  readonly handle: object;
  private readonly listeners = new Map<number, RelayListener>();

  constructor(readonly lib: RelayAddon) {
    this.handle = lib.open(this.onEvents);
  }

  /** A new service (no servers, not listening) whose events go to `l`. */
  service(l: RelayListener): ServiceHandle {
    const svc = this.lib.service(this.handle);
    this.listeners.set(this.lib.serviceId(svc), l);
    return svc;
  }

  /** The end of a service (drop: its connections too); the handle must not be used after. */
  closeService(svc: ServiceHandle, drop: boolean): void {
    this.listeners.delete(this.lib.serviceId(svc));
    this.lib.closeService(this.handle, svc, drop);
  }

  /** Connections the thread holds (tests). */
  count(): number {
    return this.lib.count(this.handle);
  }

  private readonly onEvents = (r: Float64Array): void => {
    for (let i = 0; i + REC <= r.length; i += REC) {
      const l = this.listeners.get(r[i + 1] ?? 0);
      if (l === undefined) continue;
      if (r[i] === EV_REFUSED) l.onRefused(r[i + 2] ?? 0, r[i + 3] ?? 0);
      else l.onNoRealServer(r[i + 2] ?? 0);
    }
  };
}

const opened: NativeRelay[] = [];

/**
 * The process's first `n` relays (each its own thread and epoll), opened on first use; null without
 * the addon. Services on several relays put the same listening socket in each relay's epoll set
 * (EPOLLEXCLUSIVE), so the kernel wakes one thread per new connection, as it does across processes.
 */
export function nativeRelays(n = 1): NativeRelay[] | null {
  const lib = relayAddon();
  if (lib === null) return null;
  while (opened.length < Math.max(1, n)) opened.push(new NativeRelay(lib));
  return opened.slice(0, Math.max(1, n));
}

/** The relays opened so far (tests: connections held by each thread). */
export function openedRelays(): readonly NativeRelay[] {
  return opened;
}
