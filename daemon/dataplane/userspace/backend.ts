// The userspace dataplane: a TCP and UDP proxy in this Node process (kube-proxy's userspace mode).
// Needs no privilege on ports ≥ 1024 and no kernel feature; its advantage over NAT dataplanes is that a
// refused connection is retried on the next real server before the client sees anything.
//
// apply() adds and removes listeners and real servers in place: a removed service stops accepting but
// its established connections run to their end; a removed or drained real server keeps its connections.
import type { Logger } from 'pino';
import {
  UnsupportedByDataplane,
  type ApplyReport,
  type Dataplane,
  type DesiredTable,
  type ObservedService,
  type ObservedTable,
  type ServiceSpec,
} from '../types.js';
import type { ProxyProtocolVersion } from './proxy-protocol.js';
import { TcpService } from './tcp-service.js';
import { HandleTcpService, handleEngineAvailable } from './handle-relay.js';
import { relayAddon } from './native-relay.js';
import { UdpService } from './udp-service.js';
import type { ListenerState } from './listener.js';
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromWorker, ToWorker, WorkerCounts } from './worker.js';

export type UserspaceEngine = 'native' | 'handles' | 'sockets';

export interface UserspaceOptions {
  /** TCP idle timeout (default 900 s, IPVS's established timeout). */
  idleTimeoutMs?: number;
  /** UDP session idle timeout (default 300 s, IPVS's udp timeout). */
  udpIdleTimeoutMs?: number;
  /** How long a real server gets to accept before the next is tried (default 3 s). */
  connectTimeoutMs?: number;
  /** Retry interval while a VIP is not on this host (default 250 ms). */
  bindRetryMs?: number;
  /**
   * TCP engine: 'native' accepts, schedules, connects and copies in the native relay thread
   * (build/Release/lvsd_relay.node); 'handles' relays between libuv handles (about half the CPU per
   * connection of net.Socket; needs process.binding, present in Node 20–24); 'sockets' uses net.Socket.
   * Default: the first of them that is available.
   */
  engine?: UserspaceEngine;
  /**
   * Processes that relay TCP (default 1 = this process only). With N > 1, N − 1 helper processes accept
   * on the same listening sockets (passed over IPC), so the proxy can use more than one CPU, as HAProxy
   * does with its threads. Needs the handles or native engine. UDP stays in this process.
   */
  workers?: number;
  /**
   * Native relay threads per process (default 1; engine 'native' only). With N > 1 each process runs N
   * relay threads, each its own epoll set on the same listening sockets (EPOLLEXCLUSIVE: the kernel
   * wakes one per new connection); counters are summed, scheduling state (rr position) is per thread.
   * `workers: 1, relayThreads: 2` is HAProxy's shape (one process, two threads).
   */
  relayThreads?: number;
  /** PROXY protocol to the real servers: one version for all, or per service (undefined = none). */
  proxyProtocol?: ProxyProtocolVersion | ((service: ServiceSpec) => ProxyProtocolVersion | undefined);
  logger?: Logger;
}

export interface ListenerStatus {
  service: string;
  state: ListenerState;
  error?: string;
}

export interface UserspaceDataplane extends Dataplane {
  readonly kind: 'userspace';
  /** The TCP engine in use. */
  readonly engine: UserspaceEngine;
  /** Per service: listening, or waiting for its VIP to appear (and why). */
  listeners(): ListenerStatus[];
}

type Service = TcpService | HandleTcpService | UdpService;

function check(spec: ServiceSpec): void {
  if (spec.fwmark !== undefined) throw new UnsupportedByDataplane('userspace', spec.id, 'fwmark services need a kernel dataplane (ipvs or nftables)');
  if (spec.protocol === 'sctp') throw new UnsupportedByDataplane('userspace', spec.id, 'SCTP is not proxied in userspace');
  if (spec.address === undefined || spec.port === undefined) throw new UnsupportedByDataplane('userspace', spec.id, 'a service needs an address and a port');
  if (spec.persistence?.engine !== undefined) throw new UnsupportedByDataplane('userspace', spec.id, `persistence engine ${spec.persistence.engine} needs the IPVS dataplane`);
  if (spec.port === 0) throw new UnsupportedByDataplane('userspace', spec.id, 'a virtual server on every port (port 0) needs the IPVS dataplane (a proxy listens on one port)');
  for (const rs of spec.realServers) {
    if (rs.method !== 'nat') {
      throw new UnsupportedByDataplane('userspace', `${spec.id} → ${rs.id}`, `${rs.method.toUpperCase()} forwarding needs the IPVS dataplane; a proxy opens its own connection`);
    }
  }
}

export function createUserspaceDataplane(opts: UserspaceOptions = {}): UserspaceDataplane {
  const services = new Map<string, Service>();
  const log = opts.logger;
  const engine = opts.engine ?? (!handleEngineAvailable() ? 'sockets' : relayAddon() !== null ? 'native' : 'handles');
  if (engine !== 'sockets' && !handleEngineAvailable()) throw new Error(`userspace: the ${engine} engine needs process.binding(tcp_wrap); use engine: sockets`);
  if (engine === 'native' && relayAddon() === null) throw new Error('userspace: the native engine needs build/Release/lvsd_relay.node (not built, or switched off by LVSD_USERSPACE_NATIVE=0)');
  const proxyFor = (spec: ServiceSpec): ProxyProtocolVersion | undefined =>
    typeof opts.proxyProtocol === 'function' ? opts.proxyProtocol(spec) : opts.proxyProtocol;
  const tcpOpts = (spec: ServiceSpec): ConstructorParameters<typeof TcpService>[1] => {
    const pp = proxyFor(spec);
    return {
      idleTimeoutMs: opts.idleTimeoutMs ?? 900_000,
      connectTimeoutMs: opts.connectTimeoutMs ?? 3000,
      bindRetryMs: opts.bindRetryMs ?? 250,
      ...(pp === undefined ? {} : { proxyProtocol: pp }),
      ...(log === undefined ? {} : { logger: log }),
      ...(workers > 1 ? { onBound: shareListener } : {}),
      ...(engine === 'native' ? { native: true, relayThreads } : {}),
    };
  };
  const helpers: ChildProcess[] = [];
  const workers = Math.max(1, Math.floor(opts.workers ?? 1));
  if (workers > 1 && engine === 'sockets') throw new Error('userspace: workers > 1 needs the handles or native engine');
  const relayThreads = Math.max(1, Math.floor(opts.relayThreads ?? 1));
  if (relayThreads > 1 && engine !== 'native') throw new Error('userspace: relayThreads > 1 needs the native engine');
  let seq = 0;
  const waiting = new Map<number, { left: number; resolve: () => void; counts: WorkerCounts[] }>();
  for (let i = 1; i < workers; i++) {
    const child = fork(fileURLToPath(new URL('./worker.js', import.meta.url)), ['--lvsd-userspace-worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (m: FromWorker) => {
      if (m.op === 'ready') return;
      const w = waiting.get(m.seq);
      if (w === undefined) return;
      if (m.op === 'observed') w.counts.push(m.counts);
      if (--w.left === 0) {
        waiting.delete(m.seq);
        w.resolve();
      }
    });
    child.on('exit', (code, signal) => {
      log?.error({ worker: i, code, signal }, 'userspace: helper process exited; its connections are gone, the others carry on');
      const at = helpers.indexOf(child);
      if (at >= 0) helpers.splice(at, 1);
      for (const [k, w] of waiting) {
        if (--w.left === 0) {
          waiting.delete(k);
          w.resolve();
        }
      }
    });
    helpers.push(child);
  }
  /** Sends to every helper; resolves when all answered (or died). */
  const broadcast = (make: (seq: number) => ToWorker): { done: Promise<void>; counts: WorkerCounts[] } => {
    const s = ++seq;
    const counts: WorkerCounts[] = [];
    const live = helpers.filter((h) => h.connected);
    if (live.length === 0) return { done: Promise.resolve(), counts };
    const done = new Promise<void>((resolve) => waiting.set(s, { left: live.length, resolve, counts }));
    for (const h of live) h.send(make(s));
    return { done, counts };
  };
  const shareListener = (serviceId: string, handle: unknown): void => {
    for (const h of helpers) if (h.connected) h.send({ op: 'listen', id: serviceId } satisfies ToWorker, handle as never);
  };
  const udpOpts = (spec: ServiceSpec): ConstructorParameters<typeof UdpService>[1] => {
    const pp = proxyFor(spec);
    return {
      idleTimeoutMs: opts.udpIdleTimeoutMs ?? 300_000,
      bindRetryMs: opts.bindRetryMs ?? 250,
      ...(pp === undefined ? {} : { proxyProtocol: pp }),
      ...(log === undefined ? {} : { logger: log }),
    };
  };

  async function apply(desired: DesiredTable): Promise<ApplyReport> {
    const t0 = performance.now();
    // Check everything first: an unsupported service changes nothing.
    for (const spec of desired.services) check(spec);
    let operations = 0;
    // Helpers first, so each knows a service before its listening socket arrives.
    const tcp = desired.services.filter((s) => s.protocol !== 'udp');
    const helpersDone = broadcast((s) => ({
      op: 'apply', seq: s, services: tcp,
      options: { idleTimeoutMs: opts.idleTimeoutMs ?? 900_000, connectTimeoutMs: opts.connectTimeoutMs ?? 3000, bindRetryMs: opts.bindRetryMs ?? 250, ...(engine === 'native' ? { native: true, relayThreads } : {}) },
      proxy: Object.fromEntries(tcp.flatMap((t) => {
        const pp = proxyFor(t);
        return pp === undefined ? [] : [[t.id, pp]];
      })),
    })).done;
    const wanted = new Map(desired.services.map((s) => [s.id, s]));
    for (const [id, svc] of services) {
      const spec = wanted.get(id);
      // Same id but another address/port/protocol cannot be updated in place: replace the listener.
      if (spec === undefined || spec.address !== svc.spec.address || spec.port !== svc.spec.port || spec.protocol !== svc.spec.protocol) {
        svc.close();
        services.delete(id);
        operations++;
        log?.info({ service: id }, 'userspace: service removed; established connections continue');
      }
    }
    const starting: Promise<void>[] = [];
    for (const spec of desired.services) {
      const have = services.get(spec.id);
      if (have !== undefined) {
        operations += have instanceof UdpService ? have.update(spec, udpOpts(spec)) : have.update(spec, tcpOpts(spec));
        continue;
      }
      const svc =
        spec.protocol === 'udp' ? new UdpService(spec, udpOpts(spec))
        : engine !== 'sockets' ? new HandleTcpService(spec, tcpOpts(spec))
        : new TcpService(spec, tcpOpts(spec));
      services.set(spec.id, svc);
      operations++;
      starting.push(svc.listen());
    }
    await Promise.all(starting);
    await helpersDone;
    return { operations, drift: [], durationMs: performance.now() - t0 };
  }

  async function observe(): Promise<ObservedTable> {
    const b = broadcast((s) => ({ op: 'observe', seq: s }));
    await b.done;
    const extra = (service: string, rs: string): { active: number; conns: number; inBytes: number; outBytes: number } => {
      const sum = { active: 0, conns: 0, inBytes: 0, outBytes: 0 };
      for (const c of b.counts) {
        const x = c[service]?.[rs];
        if (x === undefined) continue;
        sum.active += x.active;
        sum.conns += x.conns;
        sum.inBytes += x.inBytes;
        sum.outBytes += x.outBytes;
      }
      return sum;
    };
    const out: ObservedService[] = [];
    for (const svc of services.values()) {
      if (svc instanceof HandleTcpService) svc.refreshCounts();
      const { realServers: _r, ...base } = svc.spec;
      let conns = 0;
      let inBytes = 0;
      let outBytes = 0;
      const realServers = svc.pool.servers.map((rs) => {
        const h = extra(svc.spec.id, rs.id);
        const c = { active: rs.active + h.active, conns: rs.conns + h.conns, inBytes: rs.inBytes + h.inBytes, outBytes: rs.outBytes + h.outBytes };
        conns += c.conns;
        inBytes += c.inBytes;
        outBytes += c.outBytes;
        return {
          ...rs.spec,
          activeConns: c.active,
          inactiveConns: 0,
          persistConns: 0,
          counters: { conns: c.conns, inPackets: 0, outPackets: 0, inBytes: c.inBytes, outBytes: c.outBytes, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 },
        };
      });
      out.push({ ...base, realServers, counters: { conns, inPackets: 0, outPackets: 0, inBytes, outBytes, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 } });
    }
    return { services: out };
  }

  return {
    kind: 'userspace',
    engine,
    apply,
    observe,
    listeners: () =>
      [...services.values()].map((s) => ({
        service: s.spec.id,
        state: s.listener.state,
        ...(s.listener.lastError === undefined ? {} : { error: s.listener.lastError }),
      })),
    close: () => {
      for (const s of services.values()) s.destroyAll();
      services.clear();
      for (const h of helpers) h.kill('SIGTERM');
      return Promise.resolve();
    },
  };
}
