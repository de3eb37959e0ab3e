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
import { UdpService } from './udp-service.js';
import type { ListenerState } from './listener.js';

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
   * TCP engine: 'handles' relays between libuv handles (about half the CPU per connection; needs
   * process.binding, present in Node 20–24), 'sockets' uses net.Socket. Default: handles when available.
   */
  engine?: 'handles' | 'sockets';
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
  readonly engine: 'handles' | 'sockets';
  /** Per service: listening, or waiting for its VIP to appear (and why). */
  listeners(): ListenerStatus[];
}

type Service = TcpService | HandleTcpService | UdpService;

function check(spec: ServiceSpec): void {
  if (spec.fwmark !== undefined) throw new UnsupportedByDataplane('userspace', spec.id, 'fwmark services need a kernel dataplane (ipvs or nftables)');
  if (spec.protocol === 'sctp') throw new UnsupportedByDataplane('userspace', spec.id, 'SCTP is not proxied in userspace');
  if (spec.address === undefined || spec.port === undefined) throw new UnsupportedByDataplane('userspace', spec.id, 'a service needs an address and a port');
  for (const rs of spec.realServers) {
    if (rs.method !== 'nat') {
      throw new UnsupportedByDataplane('userspace', `${spec.id} → ${rs.id}`, `${rs.method.toUpperCase()} forwarding needs the IPVS dataplane; a proxy opens its own connection`);
    }
  }
}

export function createUserspaceDataplane(opts: UserspaceOptions = {}): UserspaceDataplane {
  const services = new Map<string, Service>();
  const log = opts.logger;
  const engine = opts.engine ?? (handleEngineAvailable() ? 'handles' : 'sockets');
  if (engine === 'handles' && !handleEngineAvailable()) throw new Error('userspace: the handles engine needs process.binding(tcp_wrap); use engine: sockets');
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
    };
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
        : engine === 'handles' ? new HandleTcpService(spec, tcpOpts(spec))
        : new TcpService(spec, tcpOpts(spec));
      services.set(spec.id, svc);
      operations++;
      starting.push(svc.listen());
    }
    await Promise.all(starting);
    return { operations, drift: [], durationMs: performance.now() - t0 };
  }

  function observe(): Promise<ObservedTable> {
    const out: ObservedService[] = [];
    for (const svc of services.values()) {
      const { realServers: _r, ...base } = svc.spec;
      let conns = 0;
      let inBytes = 0;
      let outBytes = 0;
      const realServers = svc.pool.servers.map((rs) => {
        conns += rs.conns;
        inBytes += rs.inBytes;
        outBytes += rs.outBytes;
        return {
          ...rs.spec,
          activeConns: rs.active,
          inactiveConns: 0,
          persistConns: 0,
          counters: { conns: rs.conns, inPackets: 0, outPackets: 0, inBytes: rs.inBytes, outBytes: rs.outBytes, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 },
        };
      });
      out.push({ ...base, realServers, counters: { conns, inPackets: 0, outPackets: 0, inBytes, outBytes, cps: 0, inPps: 0, outPps: 0, inBps: 0, outBps: 0 } });
    }
    return Promise.resolve({ services: out });
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
      return Promise.resolve();
    },
  };
}
