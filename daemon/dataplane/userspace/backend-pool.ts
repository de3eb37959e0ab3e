// The real servers of one userspace service, kept as long-lived objects: a weight change or a removal
// updates the pool in place while established connections keep their own reference (and their counts).
import type { RealServerSpec, ServiceSpec } from '../types.js';
import { pickerFor, type Pickable, type Picker } from './schedulers.js';

let nextNid = 1;

export class RealServer implements Pickable {
  /** A number for it that the native relay knows it by (ids are text). */
  readonly nid = nextNid++;
  active = 0;
  /** Connections ever made (for counters.conns). */
  conns = 0;
  inBytes = 0;
  outBytes = 0;
  refused = 0;
  constructor(
    readonly id: string,
    public spec: RealServerSpec,
  ) {}
  get weight(): number {
    return this.spec.weight;
  }
  get address(): string {
    return this.spec.address;
  }
  get port(): number {
    return this.spec.port;
  }
}

export class Pool {
  servers: RealServer[] = [];
  picker: Picker;
  private scheduler: ServiceSpec['scheduler'];

  constructor(spec: ServiceSpec) {
    this.scheduler = spec.scheduler;
    this.picker = pickerFor(spec.scheduler);
    this.update(spec);
  }

  /** Brings the pool to `spec`; returns how many servers were added, changed or removed. */
  update(spec: ServiceSpec): number {
    let ops = 0;
    if (spec.scheduler !== this.scheduler) {
      this.scheduler = spec.scheduler;
      this.picker = pickerFor(spec.scheduler);
      ops++;
    }
    const old = new Map(this.servers.map((s) => [s.id, s]));
    const next: RealServer[] = [];
    for (const rs of spec.realServers) {
      const have = old.get(rs.id);
      if (have === undefined) {
        next.push(new RealServer(rs.id, rs));
        ops++;
      } else {
        if (have.spec.weight !== rs.weight || have.spec.address !== rs.address || have.spec.port !== rs.port) ops++;
        have.spec = rs;
        next.push(have);
        old.delete(rs.id);
      }
    }
    ops += old.size;
    this.servers = next;
    return ops;
  }
}
