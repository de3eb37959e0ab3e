// One TCP virtual server carried by the native relay (engine 'native'): the relay thread accepts on its
// listening socket, picks, connects and copies (native-relay.ts); this side hands it the pool whenever
// the pool changes, logs what the thread reports, and copies the thread's per-real-server counters
// into the pool's RealServers when the dataplane is observed. With several relay threads the service
// is one native service in each, all on the same listening socket; their counters are summed and each
// keeps its own scheduler state (rr position), as helper processes do.
import { getSystemErrorName } from 'node:util';
import type { Logger } from 'pino';
import type { ServiceSpec } from '../types.js';
import { maglevTable } from '../maglev.js';
import type { Pool, RealServer } from './backend-pool.js';
import { Failover, LeastConnections, MaglevHash, RoundRobin, SourceHash, WeightedRoundRobin, type Picker } from './schedulers.js';
import type { ProxyProtocolVersion } from './proxy-protocol.js';
import type { NativeRelay, RelayListener, ServiceHandle } from './native-relay.js';

export interface NativeServiceOptions {
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  proxyProtocol?: ProxyProtocolVersion;
  logger?: Logger;
}

/** accept.c's PICK_*: the scheduler the pool's picker is, run by the thread. */
export function pickMode(p: Picker): number {
  if (p instanceof RoundRobin) return 0;
  if (p instanceof WeightedRoundRobin) return 1;
  if (p instanceof LeastConnections) return p.weighted ? 3 : 2;
  if (p instanceof SourceHash) return 4;
  if (p instanceof MaglevHash) return 5;
  if (p instanceof Failover) return 6;
  throw new Error('userspace: the native engine has no such scheduler');
}

function errName(errno: number): string {
  try {
    return getSystemErrorName(-Math.abs(errno));
  } catch {
    return `errno ${errno}`;
  }
}

export class NativeService implements RelayListener {
  /** Connections that found no real server at all. */
  dropped = 0;
  private readonly svcs: { relay: NativeRelay; svc: ServiceHandle }[];
  private closed = false;

  constructor(
    relays: NativeRelay[],
    private readonly pool: Pool,
    private spec: ServiceSpec,
    private opts: NativeServiceOptions,
  ) {
    this.svcs = relays.map((relay) => ({ relay, svc: relay.service(this) }));
    this.push();
  }

  update(spec: ServiceSpec, opts: NativeServiceOptions): void {
    this.spec = spec;
    this.opts = opts;
    this.push();
  }

  /** Sends the pool (after the pool took the spec): order, addresses, weights, the scheduler's tables. */
  push(): void {
    if (this.closed) return;
    const servers = this.pool.servers;
    const picker = this.pool.picker;
    const mode = pickMode(picker);
    let mh: Int32Array | null = null;
    if (picker instanceof MaglevHash) {
      const table = maglevTable(servers.filter((s) => s.weight > 0).map((s) => ({ name: s.id, weight: s.weight })), picker.size);
      const at = new Map(servers.map((s, i) => [s.id, i]));
      mh = table.slots.map((b) => at.get(table.backends[b] ?? '') ?? -1);
    }
    const nids = servers.map((s) => s.nid);
    const hosts = servers.map((s) => s.address);
    const ports = servers.map((s) => s.port);
    const weights = servers.map((s) => s.weight);
    for (const { relay, svc } of this.svcs) {
      relay.lib.servers(relay.handle, svc, nids, hosts, ports, weights, mode, this.opts.proxyProtocol ?? 0, this.opts.connectTimeoutMs, this.opts.idleTimeoutMs, mh);
    }
  }

  /** Accepts on fd (a bound socket; its descriptor is duplicated) in every thread. Returns 0 or a negative errno. */
  listen(fd: number): number {
    for (const [i, { relay, svc }] of this.svcs.entries()) {
      const err = relay.lib.listen(relay.handle, svc, fd);
      if (err === 0) continue;
      for (const done of this.svcs.slice(0, i)) done.relay.lib.unlisten(done.relay.handle, done.svc, fd);
      return err;
    }
    return 0;
  }

  /** Stops accepting on fd (the caller's descriptor of the socket given to listen()). */
  unlisten(fd: number): void {
    if (this.closed) return;
    for (const { relay, svc } of this.svcs) relay.lib.unlisten(relay.handle, svc, fd);
  }

  /** The end of the service: connections run on (drop: they end too). */
  close(drop: boolean): void {
    if (this.closed) return;
    this.closed = true;
    for (const { relay, svc } of this.svcs) relay.closeService(svc, drop);
  }

  /** Copies the threads' counters, summed, into the pool's RealServers. */
  refreshCounts(): void {
    if (this.closed) return;
    const byNid = new Map<number, RealServer>(this.pool.servers.map((s) => [s.nid, s]));
    for (const rs of byNid.values()) {
      rs.active = 0;
      rs.conns = 0;
      rs.inBytes = 0;
      rs.outBytes = 0;
      rs.refused = 0;
    }
    for (const { relay, svc } of this.svcs) {
      const c = relay.lib.counts(relay.handle, svc);
      for (let i = 0; i + 6 <= c.length; i += 6) {
        const rs = byNid.get(c[i] ?? -1);
        if (rs === undefined) continue;
        rs.active += c[i + 1] ?? 0;
        rs.conns += c[i + 2] ?? 0;
        rs.inBytes += c[i + 3] ?? 0;
        rs.outBytes += c[i + 4] ?? 0;
        rs.refused += c[i + 5] ?? 0;
      }
    }
  }

  onRefused(nid: number, errno: number): void {
    const rs = this.pool.servers.find((s) => s.nid === nid);
    this.opts.logger?.info({ service: this.spec.id, realServer: rs?.id ?? nid, reason: errno === 110 ? 'connect timeout' : errName(errno) }, 'userspace: real server did not take the connection; trying the next');
  }

  onNoRealServer(tried: number): void {
    this.dropped++;
    this.opts.logger?.warn({ service: this.spec.id, tried }, 'userspace: no real server for a new connection');
  }
}
