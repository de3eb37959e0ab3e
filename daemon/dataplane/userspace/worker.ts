// A helper process of the userspace dataplane (option `workers` > 1). It accepts on listening sockets
// that the main process bound and passed over IPC — every process accepts on the same socket, so the
// kernel spreads new connections — and relays them with the handle or native engine (whose thread
// accepts itself, waking one process per connection: EPOLLEXCLUSIVE). Configuration
// arrives as the TCP part of each DesiredTable; counts go back on request. Scheduling state (rr position, lc
// counts) is per process: the spread across processes is the kernel's.
import type { ServiceSpec } from '../types.js';
import { HandleTcpService, type HandleServiceOptions } from './handle-relay.js';

export type ToWorker =
  | { op: 'apply'; seq: number; services: ServiceSpec[]; options: Omit<HandleServiceOptions, 'logger' | 'onBound' | 'proxyProtocol'>; proxy: Record<string, 1 | 2> }
  | { op: 'listen'; id: string }
  | { op: 'observe'; seq: number };

export type WorkerCounts = Record<string, Record<string, { active: number; conns: number; inBytes: number; outBytes: number }>>;

export type FromWorker = { op: 'applied'; seq: number } | { op: 'observed'; seq: number; counts: WorkerCounts } | { op: 'ready' };

function main(): void {
  const services = new Map<string, HandleTcpService>();
  const handles = new Map<string, unknown>();
  const send = (m: FromWorker): void => {
    process.send?.(m);
  };
  process.on('message', (m: ToWorker, handle: unknown) => {
    if (m.op === 'listen') {
      const svc = services.get(m.id);
      if (svc !== undefined) svc.adopt(handle);
      else handles.set(m.id, handle);
    } else if (m.op === 'apply') {
      const wanted = new Map(m.services.map((s) => [s.id, s]));
      for (const [id, svc] of services) {
        const spec = wanted.get(id);
        if (spec === undefined || spec.address !== svc.spec.address || spec.port !== svc.spec.port) {
          svc.close();
          services.delete(id);
        }
      }
      for (const spec of m.services) {
        const pp = m.proxy[spec.id];
        const options: HandleServiceOptions = pp === undefined ? m.options : { ...m.options, proxyProtocol: pp };
        const have = services.get(spec.id);
        if (have !== undefined) {
          have.update(spec, options);
          continue;
        }
        const svc = new HandleTcpService(spec, options);
        services.set(spec.id, svc);
        const h = handles.get(spec.id);
        if (h !== undefined) {
          handles.delete(spec.id);
          svc.adopt(h);
        }
      }
      send({ op: 'applied', seq: m.seq });
    } else {
      const counts: WorkerCounts = {};
      for (const [id, svc] of services) {
        svc.refreshCounts();
        const per: WorkerCounts[string] = {};
        for (const rs of svc.pool.servers) per[rs.id] = { active: rs.active, conns: rs.conns, inBytes: rs.inBytes, outBytes: rs.outBytes };
        counts[id] = per;
      }
      send({ op: 'observed', seq: m.seq, counts });
    }
  });
  // The main process going away takes its helpers with it.
  process.on('disconnect', () => process.exit(0));
  send({ op: 'ready' });
}

if (process.send !== undefined && process.argv.includes('--lvsd-userspace-worker')) main();
